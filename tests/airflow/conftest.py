"""Fixtures of the Airflow tests: Apache Airflow 3 and 2, each in a cached virtual environment of its own.

Tests marked ``airflow`` run last. When one is collected and an environment is not built yet, the builds start
in the background as the session starts, so the rest of the suite runs meanwhile (the first builds take a few
minutes and need the network; later sessions reuse them). Only when Airflow cannot be installed are the tests
skipped, with pip's error as the reason.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.airflow import venv
from tests.support.environment import missing

_STASH = pytest.StashKey[subprocess.Popen]()


def pytest_collection_modifyitems(session, config, items):
    marked = [item for item in items if item.get_closest_marker("airflow")]
    if not marked:
        return
    items[:] = [item for item in items if not item.get_closest_marker("airflow")] + marked
    if not all(venv.ready(flavor) for flavor in venv.FLAVORS):
        config.stash[_STASH] = subprocess.Popen([sys.executable, str(Path(venv.__file__))],
                                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _environment(flavor: venv.Flavor) -> Path:
    # build() waits on the flavor's lock while the background build makes it, and finds it ready then
    if not venv.ready(flavor) and not venv.build(flavor):
        missing(f"{flavor.airflow} could not be installed into {venv.venv_dir(flavor)} "
                f"(log: {venv.log_file(flavor)}): {venv.failure_reason(flavor)}")
    return venv.venv_dir(flavor)


@pytest.fixture(scope="session")
def airflow_venv() -> Path:
    """Airflow 3's folder (``bin/airflow``, ``bin/python``), built here if the background build did not."""
    return _environment(venv.AIRFLOW3)


@pytest.fixture(scope="session")
def airflow2_venv() -> Path:
    """Airflow 2's folder, as :func:`airflow_venv`."""
    return _environment(venv.AIRFLOW2)
