"""A job's Spark Connect session, kept between runs: the same id for every run of the job, a new one once the
server has closed it, an address's own ``session_id`` used as it is."""

from __future__ import annotations

import uuid

import pytest

from gobblin_py.runtime.engines.connect import ConnectEngine
from gobblin_py.runtime.engines.connect_session import names_session, session_url


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "gobblin_py" / "connect-sessions"


def _id(url: str) -> str:
    return url.rpartition(";session_id=")[2]


def test_every_run_of_a_job_gets_the_jobs_session(cache):
    first = session_url("sc://spark:15002", "Orders")
    assert first.startswith("sc://spark:15002/;session_id=") and uuid.UUID(_id(first))
    assert session_url("sc://spark:15002", "Orders") == first
    assert _id(session_url("sc://spark:15002", "Other")) != _id(first)  # another job: another session
    assert _id(session_url("sc://spark:15002", "Orders", renew=True)) != _id(first)
    with_token = session_url("sc://spark:15002/;token=abc", "Orders")
    assert with_token.startswith("sc://spark:15002/;token=abc;session_id=")
    own = "sc://spark:15002/;session_id=8c6c7d52-5f9c-4f4e-b1b6-0d6d2f3a1e20"
    assert names_session(own) and session_url(own, "Orders") == own


@pytest.mark.spark
def test_a_session_the_server_closed_is_replaced(cache, connect_server):
    from pyspark.sql.connect.session import SparkSession

    closed = session_url(connect_server.url, "Orders")
    session = SparkSession.builder.remote(closed).create()
    assert session.version  # the server opens the session at its first call
    session.stop()  # and closes it: it refuses the id from now on
    engine = ConnectEngine(connect_server.url)
    engine._connect(connect_server.url, {"job.name": "Orders"}, "job_Orders_1")
    engine.stop()
    renewed = session_url(connect_server.url, "Orders")
    assert _id(renewed) != _id(closed)
