"""What every suite gets: where to cache and work, the size scale, the case filter, gpy and the peers' Pythons."""

from __future__ import annotations

import fnmatch
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchkit.venvs import VenvError, Venvs, VenvSpec

DEFAULT_VENV_ROOT = Path.home() / ".cache" / "gobblin_py"


@dataclass
class Context:
    """One harness run's settings, shared by the suites.

    ``scale`` multiplies every data size (1 for the real run, 0.02 for ``--quick``); ``only`` holds glob
    patterns over case keys (empty: every case).
    """

    repo: Path
    cache: Path
    work: Path
    scale: float = 1.0
    repeat: int = 3
    only: Sequence[str] = ()
    log: Callable[[str], None] = print
    venv_root: Path = DEFAULT_VENV_ROOT
    venvs: Venvs = field(init=False)

    def __post_init__(self) -> None:
        self.venvs = Venvs(self.venv_root, self.log)

    @property
    def data(self) -> Path:
        """Generated input data, kept between runs (each folder named by what is in it)."""
        return self.cache / "data"

    def cached(self, name: str, build: Callable[[Path], None]) -> Path:
        """``data/<name>``, made by ``build(folder)`` the first time (into a temporary name, then renamed)."""
        folder = self.data / name
        if not folder.is_dir():
            partial = self.data / f".{name}.partial"
            shutil.rmtree(partial, ignore_errors=True)
            partial.mkdir(parents=True)
            started = time.perf_counter()
            build(partial)
            partial.rename(folder)
            self.log(f"  generated {folder} in {time.perf_counter() - started:.1f} s")
        return folder

    def size(self, full: int, least: int = 1) -> int:
        """``full`` scaled down for a quick run, never below ``least``."""
        return max(least, round(full * self.scale))

    def wants(self, *keys: str) -> bool:
        """Whether any of these cases is selected (``--only``), so a suite can skip its set-up otherwise."""
        if not self.only:
            return True
        return any(fnmatch.fnmatchcase(key, pattern) or pattern in key for key in keys for pattern in self.only)

    def gpy(self, *args: str) -> list[str]:
        """The command line of the ``gpy`` console script installed beside this interpreter."""
        script = Path(sys.executable).parent / "gpy"
        prefix = [str(script)] if script.exists() else [sys.executable, "-m", "gobblin_py.cli"]
        return [*prefix, *args]

    def python(self, spec: VenvSpec) -> tuple[str | None, str | None]:
        """A peer environment's interpreter, or ``(None, reason)`` when it could not be made."""
        try:
            return self.venvs.python(spec), None
        except VenvError as exc:
            self.log(f"  {spec.name}: {exc}")
            return None, str(exc)
