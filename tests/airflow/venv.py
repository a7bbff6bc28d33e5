"""A throwaway virtual environment with Apache Airflow for the DAG test, built once and cached.

It lives in ``~/.cache/gobblin_py/airflow-venv-<key>`` (``GPY_AIRFLOW_VENV_CACHE`` moves the folder), where the
key hashes the Airflow version, ``jobs/airflow/constraints.txt`` and the Python version, so a change of any
builds a new one. A lock file keeps two test sessions from building it at once; a marker file written last says
it is complete. Run as a script it builds the environment (the test session starts it in the background).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CONSTRAINTS = REPO / "jobs" / "airflow" / "constraints.txt"
AIRFLOW = "apache-airflow==3.3.2"
READY = ".gpy-ready"


def cache_root() -> Path:
    return Path(os.environ.get("GPY_AIRFLOW_VENV_CACHE", Path.home() / ".cache" / "gobblin_py"))


def venv_dir() -> Path:
    """Where the environment for this Airflow version, these constraints and this Python lives."""
    digest = hashlib.sha256()
    digest.update(AIRFLOW.encode())
    digest.update(CONSTRAINTS.read_bytes())
    digest.update(f"{sys.version_info.major}.{sys.version_info.minor}".encode())
    return cache_root() / f"airflow-venv-{digest.hexdigest()[:12]}"


def log_file() -> Path:
    return venv_dir().with_name(venv_dir().name + ".log")


def ready(path: Path | None = None) -> bool:
    path = path or venv_dir()
    return (path / READY).is_file() and (path / "bin" / "airflow").is_file()


def build() -> bool:
    """Build the environment unless it is there; True when it is ready. pip's output goes to :func:`log_file`."""
    path = venv_dir()
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another session building it: wait for that one
        if ready(path):
            return True
        shutil.rmtree(path, ignore_errors=True)  # a build cut short
        with open(log_file(), "w") as log:
            steps = [
                [sys.executable, "-m", "venv", str(path)],
                [str(path / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check",
                 "--progress-bar", "off", AIRFLOW, "-c", str(CONSTRAINTS)],
            ]
            for step in steps:
                log.write(f"$ {' '.join(step)}\n")
                log.flush()
                if subprocess.run(step, stdout=log, stderr=subprocess.STDOUT).returncode != 0:
                    return False
        (path / READY).write_text(AIRFLOW + "\n")
        return True


def failure_reason() -> str:
    """The last lines pip wrote, for a skip message."""
    try:
        lines = [line for line in log_file().read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return "no install log"
    errors = [line.strip() for line in lines if line.lstrip().startswith("ERROR")]
    return (errors or lines)[0][:300] if lines else "pip wrote nothing"  # the first error says why


if __name__ == "__main__":
    sys.exit(0 if build() else 1)
