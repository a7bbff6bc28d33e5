"""Fixtures shared by the whole suite: one SparkSession per test session, the repo's paths, the CLI."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import settings

# an environment skip fails under GPY_REQUIRE_ALL=1 (tests/environment.py)
from tests.environment import needs, pytest_configure, pytest_runtest_setup  # noqa: F401

# The servers several folders share, registered once here: a fixture imported into a second conftest would be a
# second fixture, and start a second server. tests.tables.metastore: the Hive metastore of the table tests.
# tests.crash.report prints where the random crash campaigns' kills landed, in the run's summary.
# tests.server_groups puts the tests that use a server in that server's pytest-xdist group (`make test` runs the
# suite in two workers, --dist loadgroup), so each server starts in one worker.
pytest_plugins = ("tests.kafka.servers", "tests.sql.servers", "tests.tables.metastore", "tests.crash.report",
                  "tests.server_groups")

# the contract suites' assertions explain themselves as the tests' own do
pytest.register_assert_rewrite("gobblin_py.testing")

# Property tests take their number of examples from a profile, not from each test: `make test` selects `ci` (the
# same examples every run, so a result does not depend on luck), `make soak` selects `soak` (ten times as many, new
# ones each run); a bare pytest run uses `dev` (new examples each run, failures remembered in .hypothesis/), or `ci`
# where CI=true.
settings.register_profile("ci", max_examples=100, deadline=None, derandomize=True, print_blob=True)
settings.register_profile("soak", max_examples=1000, deadline=None, print_blob=True)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
GOBBLIN_DATA = DATA / "gobblin"


def _shared() -> Path:
    """``shared/`` beside the repository (a clone), or beside the folder holding it (a worktree)."""
    for parent in (REPO.parent, REPO.parent.parent):
        if (parent / "shared").is_dir():
            return parent / "shared"
    return REPO.parent / "shared"


SHARED = _shared()
CORPUS = SHARED / "corpus" / "gobblin-jobs"
# the marker of the tests that run the Gobblin job corpus (present beside the repository on CI)
NEEDS_CORPUS = needs(CORPUS.is_dir(), f"the Gobblin job corpus is not at {CORPUS}")


@pytest.fixture(scope="session")
def spark():
    """The one SparkSession of the test run, or of each worker under xdist (starting one costs 7–9 s)."""
    from gobblin_py.runtime.engines.spark_session import get_spark_session

    session = get_spark_session("local[2]", app_name="gpy-tests")
    yield session
    session.stop()


def load_script(name: str):
    """Import a module from scripts/ (sample data builders shared by `make run` and the tests)."""
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def sample_store_module():
    return load_script("sample_state_store")


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


@pytest.fixture(scope="session")
def web_api_server():
    """One local web server for the session: MediaWiki's API and a paged REST endpoint (tests/sources/web_api.py)."""
    from tests.sources.web_api import serve

    api, server = serve()
    yield api
    server.shutdown()
    server.server_close()


@pytest.fixture
def web_api(web_api_server):
    """The session's web server, emptied of pages, records, faults, routes and logged requests for this test, and
    behaving again."""
    api = web_api_server
    api.reset()
    return api


@pytest.fixture(scope="session")
def bare_python(tmp_path_factory) -> Path:
    """The Python of a new virtual environment of this interpreter's version with nothing installed in it."""
    folder = tmp_path_factory.mktemp("bare")
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", "--clear", str(folder)], check=True)
    python = folder / "bin" / "python"
    for module in ("gobblin_py", "pyarrow"):
        found = subprocess.run([str(python), "-c", f"import {module}"], env={"PATH": os.environ.get("PATH", "")},
                               cwd=folder, capture_output=True)
        assert found.returncode != 0, f"the bare virtual environment can import {module}"
    return python
