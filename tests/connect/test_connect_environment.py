"""An environment archive shipped to a Spark Connect server: the session's Python workers run its ``bin/python``."""

from __future__ import annotations

import sys
import tarfile
from pathlib import Path

import pytest

from gobblin_py.runtime.engines.connect_environment import ship_environment
from gobblin_py.sdk.errors import UsageError

pytestmark = pytest.mark.spark


def _workers_python(batches):
    import os

    import pyarrow as pa

    for _ in batches:
        yield pa.RecordBatch.from_pydict({"shipped": [os.environ.get("GPY_TEST_SHIPPED", "")]})


def test_the_sessions_python_workers_run_the_shipped_environment(tmp_path, connect_server):
    from pyspark.sql.connect.session import SparkSession

    # an environment whose interpreter says it was the one started (and can import this module's function)
    launcher = tmp_path / "python"
    repo = Path(__file__).resolve().parents[2]
    launcher.write_text(f'#!/bin/sh\nGPY_TEST_SHIPPED=yes PYTHONPATH="{repo}" exec "{sys.executable}" "$@"\n')
    launcher.chmod(0o755)
    archive = tmp_path / "env.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(launcher, arcname="bin/python")
    session = SparkSession.builder.remote(connect_server.url).create()
    try:
        ship_environment(session, archive)
        ship_environment(session, archive)  # the next run of a job, in the job's session kept on the server
        rows = session.range(0, 1, 1, 1).mapInArrow(_workers_python, "shipped string").toArrow()
        assert rows.column("shipped").to_pylist() == ["yes"]
        with pytest.raises(UsageError, match="gone.tar.gz"):
            ship_environment(session, tmp_path / "gone.tar.gz")
    finally:
        session.stop()
