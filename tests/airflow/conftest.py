"""Fixtures of the Airflow tests: Apache Airflow in a cached virtual environment of its own.

Tests marked ``airflow`` run last. When one is collected and the environment is not built yet, the build starts
in the background as the session starts, so the rest of the suite runs meanwhile (the first build takes about
30 s and needs the network; later sessions reuse it). Only when Airflow cannot be installed are the tests
skipped, with pip's error as the reason.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.airflow import venv
from tests.environment import missing

_STASH = pytest.StashKey[subprocess.Popen]()


def pytest_collection_modifyitems(session, config, items):
    marked = [item for item in items if item.get_closest_marker("airflow")]
    if not marked:
        return
    items[:] = [item for item in items if not item.get_closest_marker("airflow")] + marked
    if not venv.ready():
        config.stash[_STASH] = subprocess.Popen([sys.executable, str(Path(venv.__file__))],
                                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@pytest.fixture(scope="session")
def airflow_venv(pytestconfig):
    """The environment's folder (``bin/airflow``, ``bin/python``), built here if the background build did not."""
    background = pytestconfig.stash.get(_STASH, None)
    if background is not None:
        background.wait()
    if not venv.ready() and not venv.build():
        missing(f"Apache Airflow could not be installed into {venv.venv_dir()} "
                    f"(log: {venv.log_file()}): {venv.failure_reason()}")
    return venv.venv_dir()
