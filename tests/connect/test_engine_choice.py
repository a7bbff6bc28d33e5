"""Which engine a run uses: ``--remote`` or the job's ``spark.remote`` pick the Spark Connect engine; a mix
that contradicts itself, or an address that is not ``sc://``, is a usage error (exit 2) before any work."""

from __future__ import annotations

import time

import pytest

from gobblin_py.runtime.engines import choose_engine, connect
from gobblin_py.runtime.engines.base import task_groups
from gobblin_py.sdk.errors import GobblinPyError, UsageError
from gobblin_py.sdk.states import WorkUnit
from tests.support.cli import run_gpy
from tests.support.jobs import Job
from tests.support.net import free_port

REMOTE = "sc://127.0.0.1:15002"


@pytest.mark.parametrize("name,master,remote,props,chosen", [
    ("spark", None, REMOTE, {}, ("connect", REMOTE)),
    ("spark", None, None, {"spark.remote": REMOTE}, ("connect", None)),  # the engine reads the job's key
    ("connect", None, None, {"spark.remote": REMOTE}, ("connect", None)),
    ("spark", "local[2]", None, {"spark.remote": REMOTE}, ("spark", "local[2]")),  # the command line wins
    ("local", None, None, {"spark.remote": REMOTE}, ("local", None)),
    ("spark", None, None, {"spark.master": "local[1]"}, ("spark", None)),
])
def test_the_engine_a_run_uses(name, master, remote, props, chosen):
    assert choose_engine(name, master, remote, props) == chosen


@pytest.mark.parametrize("name,master,remote,props,says", [
    ("local", None, REMOTE, {}, "cannot go with --engine local"),
    ("spark", "local[2]", REMOTE, {}, "--master and --remote exclude each other"),
    ("spark", None, None, {"spark.remote": REMOTE, "spark.master": "local[1]"}, "both spark.master"),
    ("connect", None, None, {}, "--engine connect needs a Spark Connect server"),
    ("spark", None, "http://127.0.0.1:15002", {}, "--remote='http://127.0.0.1:15002'"),
    ("spark", None, None, {"spark.remote": "127.0.0.1:15002"}, "spark.remote='127.0.0.1:15002'"),
])
def test_a_mix_that_contradicts_itself_is_a_usage_error(name, master, remote, props, says):
    with pytest.raises(UsageError) as raised:
        choose_engine(name, master, remote, props)
    assert says in str(raised.value)


def test_a_bad_remote_fails_the_run_before_any_work(tmp_path):
    job = Job(tmp_path)
    result = run_gpy("run", str(job.file), "--remote", "grpc://spark:15002")
    assert result.returncode == 2, result.stderr
    assert "--remote='grpc://spark:15002': a Spark Connect server is named sc://HOST:PORT" in result.stderr
    assert not job.state.exists()  # nothing ran: no lock, no history


def test_an_unreachable_server_fails_the_run_naming_it(monkeypatch):
    port = free_port()  # a port nothing listens on
    monkeypatch.setattr(connect, "CONNECT_RETRIES", 1)  # a scheduled run waits about a minute; a test need not
    engine = connect.ConnectEngine(f"sc://127.0.0.1:{port}")
    began = time.monotonic()
    with pytest.raises(GobblinPyError, match=rf"cannot reach the Spark Connect server at sc://127.0.0.1:{port}"):
        engine.run({"job.name": "Unreachable"}, "job_Unreachable_1", task_groups([WorkUnit()], "Unreachable", 1))
    assert time.monotonic() - began < 20
    engine.stop()
