"""The CLI as the tests run it: in a subprocess (as cron or Airflow would) or in this process; scripts/ modules."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

from tests.support.paths import REPO


def load_script(name: str):
    """Import a module from scripts/ (sample data builders shared by `make run` and the tests)."""
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_gpy(*args: str, cwd: str | os.PathLike | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run the real CLI in a subprocess, as cron or Airflow would."""
    return subprocess.run(
        [sys.executable, "-m", "gobblin_py.cli", *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=600,
    )


def run_gpy_here(*args: str, cwd: str | os.PathLike | None = None,
                 env: dict | None = None) -> subprocess.CompletedProcess:
    """The CLI in this process, as :func:`run_gpy` runs it in a subprocess: for tests of what a run does, where
    a new interpreter each time (half a second) is not what is tested. ``env`` values of None unset a variable."""
    from click.testing import CliRunner

    from gobblin_py.cli import main

    before = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, list(args), env=env)
    finally:
        os.chdir(before)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return subprocess.CompletedProcess(["gpy", *args], result.exit_code, result.stdout, result.stderr)
