"""Fixtures shared by the whole suite: one SparkSession per test session, the local web API, a bare Python.

The helpers the tests share (paths, the CLI runners, job builders) are in tests/support."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import settings

from gobblin_py.runtime.execute.signals import forget_signals

# an environment skip fails under GPY_REQUIRE_ALL=1 (tests/support/environment.py)
from tests.support.cli import load_script
from tests.support.environment import pytest_configure, pytest_runtest_setup  # noqa: F401

# The servers several folders share, registered once here: a fixture imported into a second conftest would be a
# second fixture, and start a second server. tests.tables.metastore: the Hive metastore of the table tests.
# tests.crash.report prints where the random crash campaigns' kills landed, in the run's summary.
# tests.server_groups puts the tests that use a server in that server's pytest-xdist group (`make test` runs the
# suite in two workers, --dist loadgroup), so each server starts in one worker.
pytest_plugins = ("tests.kafka.servers", "tests.sql.servers", "tests.tables.metastore", "tests.crash.report",
                  "tests.server_groups")

# every Spark JVM of the run (the session's, each gpy run's, the servers') reads Spark's defaults from here
os.environ.setdefault("SPARK_CONF_DIR", str(Path(__file__).with_name("spark_conf")))

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

@pytest.fixture(autouse=True)
def _signals_forgotten_after_each_test():
    """A test that stops an in-process run with a signal leaves this process as a stopped run leaves it; the next
    test starts as a new process would (a Spark session started outside a run would take the stop as its own)."""
    yield
    forget_signals()


@pytest.fixture(scope="session")
def spark():
    """The one SparkSession of the test run, or of each worker under xdist (starting one costs 7–9 s)."""
    from gobblin_py.runtime.engines.spark_session import get_spark_session

    session = get_spark_session("local[2]", app_name="gpy-tests")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def sample_store_module():
    return load_script("sample_state_store")


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
