"""Running a real Gobblin job file of the corpus: a copy with its host names and folders made local.

Only values change: ``hdfs://localhost:…`` and ``file://localhost/`` become ``file:///``, and the keys given
point at temporary folders or the test databases. Folders the job leaves to Gobblin's system configuration
(state store, staging, output, final directory) come from a ``gobblin.properties`` written beside it, as a
Gobblin installation would supply them.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.cli import run_gpy_here
from tests.support.paths import CORPUS

_HOSTS = re.compile(r"(hdfs://localhost:\d+|file://localhost/)")


def local_copy(name: str, root: Path, overrides: dict[str, str] | None = None) -> Path:
    """A copy of corpus file ``name`` under ``root`` with hosts made local and ``overrides`` applied."""
    overrides = dict(overrides or {})
    lines = []
    for line in (CORPUS / name).read_text().splitlines():
        key, sep, value = line.partition("=")
        if sep and not line.lstrip().startswith("#") and key.strip() in overrides:
            line = f"{key.strip()}={overrides.pop(key.strip())}"
        lines.append(_HOSTS.sub("file:///", line))
    assert not overrides, f"keys not in {name}: {sorted(overrides)}"
    path = root / Path(name).name
    path.write_text("\n".join(lines) + "\n")
    return path


def system_config(root: Path, **extra: str) -> Path:
    """The system configuration a Gobblin installation gives every job: where state and data go."""
    props = {"state.store.dir": root / "state-store", "writer.staging.dir": root / "task-staging",
             "writer.output.dir": root / "task-output", "data.publisher.final.dir": root / "job-output",
             "task.maxretries": "0", **extra}
    path = root / "gobblin.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return path


def run_job(job: Path, root: Path, expect: int = 0, env: dict | None = None, cwd: Path | None = None):
    result = run_gpy_here("run", str(job), "--engine", "local", "--sysconfig", str(root / "gobblin.properties"),
                     cwd=cwd, env={"GOBBLIN_WORK_DIR": str(root / "work"), **(env or {})})
    assert result.returncode == expect, result.stdout + result.stderr
    return result
