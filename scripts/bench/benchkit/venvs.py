"""The peers' own virtual environments, never the project's: created once, reused while their pins hold.

Each environment lives in ``<root>/bench-<name>-<hash>`` (``~/.cache/gobblin_py`` by default, shared by every
checkout), the hash taken over its requirement lines, so changing a pin makes a new one and an unchanged pin
reuses the old one (a ``.complete`` marker is written only after ``pip install`` succeeded; a lock file keeps
two benchmark runs from building the same one at once). Packages the project also uses (pyarrow, numpy, the ADBC
drivers, confluent-kafka, pyspark) are pinned to the versions in the project's own environment, so a peer and
gpy run the same library and the comparison is of the code around it.
"""

from __future__ import annotations

import fcntl
import hashlib
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path


class VenvError(RuntimeError):
    """A peer's environment could not be created (no network, a package missing from the index…)."""


def pinned(distribution: str, extras: str = "") -> str:
    """``name[extras]==version`` of the copy installed beside gpy (the bare name when it is absent)."""
    try:
        return f"{distribution}{extras}=={metadata.version(distribution)}"
    except metadata.PackageNotFoundError:
        return f"{distribution}{extras}"


@dataclass(frozen=True)
class VenvSpec:
    """A named environment and the requirement lines ``pip install`` gets."""

    name: str
    requirements: tuple[str, ...]

    @property
    def digest(self) -> str:
        text = "\n".join(self.requirements) + f"\npython {sys.version_info.major}.{sys.version_info.minor}"
        return hashlib.sha256(text.encode()).hexdigest()[:12]


class Venvs:
    """Creates (once) and finds the peers' environments under ``root``."""

    def __init__(self, root: Path, log=print) -> None:
        self.root = root
        self.log = log
        self._ready: dict[str, Path] = {}

    def python(self, spec: VenvSpec) -> str:
        """The interpreter of ``spec``'s environment, creating and installing it the first time."""
        if spec.name in self._ready:
            return str(self._ready[spec.name])
        folder = self.root / f"bench-{spec.name}-{spec.digest}"
        python = folder / "bin" / "python"
        if not (folder / ".complete").exists():
            self.root.mkdir(parents=True, exist_ok=True)
            with open(self.root / f"{folder.name}.lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)  # another run may be building it: wait, then look again
                if not (folder / ".complete").exists():
                    self._create(spec, folder)
        self._ready[spec.name] = python
        return str(python)

    def _create(self, spec: VenvSpec, folder: Path) -> None:
        started = time.perf_counter()
        self.log(f"creating the {spec.name} environment: {' '.join(spec.requirements)}")
        shutil.rmtree(folder, ignore_errors=True)
        folder.parent.mkdir(parents=True, exist_ok=True)
        # the base interpreter, not the project's environment, so nothing of gpy's leaks in
        base = getattr(sys, "_base_executable", sys.executable)
        done = subprocess.run([base, "-m", "venv", str(folder)], capture_output=True, text=True)
        if done.returncode != 0:
            raise VenvError(f"python -m venv {folder} failed: {done.stderr.strip()[-500:]}")
        (folder / "requirements.txt").write_text("\n".join(spec.requirements) + "\n")
        done = subprocess.run([str(folder / "bin" / "python"), "-m", "pip", "install", "--quiet",
                               "--disable-pip-version-check", "-r", str(folder / "requirements.txt")],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise VenvError(f"pip install for {spec.name} failed: {done.stderr.strip()[-800:]}")
        (folder / ".complete").touch()
        self.log(f"  {spec.name} ready in {time.perf_counter() - started:.0f} s ({folder})")
