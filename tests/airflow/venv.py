"""Throwaway virtual environments with Apache Airflow and the providers the DAGs use, built once and cached.

Two are built: Airflow 3 (``jobs/airflow/constraints.txt``) and Airflow 2 (``jobs/airflow/constraints-2.txt``),
each with the Kubernetes and Spark providers. Each lives in ``~/.cache/gobblin_py/airflow-venv-<key>``
(``GPY_AIRFLOW_VENV_CACHE`` moves the folder), where the key hashes what it installs, its constraints file and
the Python version, so a change of any builds a new one. A lock file keeps two test sessions from building one at
once; a marker file written last says it is complete. Run as a script it builds them all (the test session
starts it in the background).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
READY = ".gpy-ready"
PROVIDERS = ("apache-airflow-providers-cncf-kubernetes", "apache-airflow-providers-apache-spark")


@dataclass(frozen=True)
class Flavor:
    """One Airflow environment: what pip installs, under which constraints."""

    name: str
    airflow: str
    constraints: Path

    @property
    def requirements(self) -> list[str]:
        return [self.airflow, *PROVIDERS]


AIRFLOW3 = Flavor("airflow3", "apache-airflow==3.3.2", REPO / "jobs" / "airflow" / "constraints.txt")
AIRFLOW2 = Flavor("airflow2", "apache-airflow==2.11.2", REPO / "jobs" / "airflow" / "constraints-2.txt")
FLAVORS = (AIRFLOW3, AIRFLOW2)


def cache_root() -> Path:
    return Path(os.environ.get("GPY_AIRFLOW_VENV_CACHE", Path.home() / ".cache" / "gobblin_py"))


def venv_dir(flavor: Flavor = AIRFLOW3) -> Path:
    """Where the environment for these requirements, these constraints and this Python lives."""
    digest = hashlib.sha256()
    digest.update(" ".join(flavor.requirements).encode())
    digest.update(flavor.constraints.read_bytes())
    digest.update(f"{sys.version_info.major}.{sys.version_info.minor}".encode())
    return cache_root() / f"airflow-venv-{digest.hexdigest()[:12]}"


def log_file(flavor: Flavor = AIRFLOW3) -> Path:
    return venv_dir(flavor).with_name(venv_dir(flavor).name + ".log")


def ready(flavor: Flavor = AIRFLOW3) -> bool:
    path = venv_dir(flavor)
    return (path / READY).is_file() and (path / "bin" / "airflow").is_file()


def build(flavor: Flavor = AIRFLOW3) -> bool:
    """Build the environment unless it is there; True when it is ready. pip's output goes to :func:`log_file`."""
    path = venv_dir(flavor)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another session building it: wait for that one
        if ready(flavor):
            return True
        shutil.rmtree(path, ignore_errors=True)  # a build cut short
        with open(log_file(flavor), "w") as log:
            steps = [
                [sys.executable, "-m", "venv", str(path)],
                [str(path / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check",
                 "--progress-bar", "off", "--no-compile", *flavor.requirements, "-c", str(flavor.constraints)],
            ]
            for step in steps:
                log.write(f"$ {' '.join(step)}\n")
                log.flush()
                if subprocess.run(step, stdout=log, stderr=subprocess.STDOUT).returncode != 0:
                    return False
        (path / READY).write_text(" ".join(flavor.requirements) + "\n")
        return True


def failure_reason(flavor: Flavor = AIRFLOW3) -> str:
    """The last lines pip wrote, for a skip message."""
    try:
        lines = [line for line in log_file(flavor).read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return "no install log"
    errors = [line.strip() for line in lines if line.lstrip().startswith("ERROR")]
    return (errors or lines)[0][:300] if lines else "pip wrote nothing"  # the first error says why


if __name__ == "__main__":
    sys.exit(0 if all([build(flavor) for flavor in FLAVORS]) else 1)
