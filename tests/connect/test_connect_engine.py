"""``--remote sc://HOST:PORT``: a job's tasks on a real Spark Connect server, the commit on gpy's side as on any
engine, no JVM started by gpy; Ctrl-C during a remote run stops it and the next run publishes everything once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.support.cli import run_gpy
from tests.support.jobs import Job, write_csv

pytestmark = pytest.mark.spark
REPO = Path(__file__).resolve().parents[2]


def branch_ids(job: Job, branch: int) -> list[int]:
    files = sorted((job.final / f"fork_{branch}").rglob("*.parquet"))
    return sorted(i for f in files for i in pq.read_table(f).column("order_id").to_pylist())


def events(stderr: str) -> list[dict]:
    return [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]


def leftovers(job: Job) -> list[Path]:
    return [p for d in ("staging", "output") for p in (job.root / d).rglob("*") if p.is_file()]


def python_daemons(server) -> int:
    """The server's Python worker daemons (one per session whose tasks ran; each in a process group of its own)."""
    parents, daemons = {}, []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit():
                parents[int(entry.name)] = int((entry / "stat").read_text().rpartition(")")[2].split()[1])
                if b"pyspark.daemon" in (entry / "cmdline").read_bytes():
                    daemons.append(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue

    def under_server(pid: int) -> bool:
        while pid > 1:
            if pid == server.pid:
                return True
            pid = parents.get(pid, 0)
        return False

    # a daemon's forked workers show its command line too: count the daemons the server started
    return sum(1 for pid in daemons if parents.get(pid) not in daemons and under_server(parents.get(pid, 0)))


def test_a_forked_incremental_job_runs_twice_exactly_once_on_spark_connect(tmp_path, connect_server):
    job = Job(tmp_path, extra="fork.branches=2\n")
    write_csv(job.data / "a.csv", 1)
    write_csv(job.data / "b.csv", 100)
    cache = {"XDG_CACHE_HOME": str(tmp_path / "cache")}  # where gpy keeps the job's session id
    daemons = python_daemons(connect_server)
    first = run_gpy("--log-format", "json", "run", str(job.file), "--remote", connect_server.url, cwd=REPO,
                    env=cache)
    assert first.returncode == 0, first.stdout + first.stderr[-4000:]
    names = [e["event"] for e in events(first.stderr)]
    assert "spark_started" in names and "spark_jvm_started" not in names  # gpy started no JVM of its own
    assert "engine connect" in first.stdout
    expected = sorted([1 + i for i in range(40)] + [100 + i for i in range(40)])
    assert branch_ids(job, 0) == expected and branch_ids(job, 1) == expected

    write_csv(job.data / "c.csv", 200)  # the next run pulls only what is new
    second = run_gpy("run", str(job.file), "--remote", connect_server.url, cwd=REPO, env=cache)
    assert second.returncode == 0, second.stdout + second.stderr[-4000:]
    expected += [200 + i for i in range(40)]
    assert branch_ids(job, 0) == expected and branch_ids(job, 1) == expected  # each row once per branch
    assert leftovers(job) == []
    history = [json.loads(p.read_text()) for p in (job.state / "_history" / "Orders").glob("*.json")]
    assert sorted(h["status"] for h in history) == ["SUCCEEDED", "SUCCEEDED"]
    assert {h["engine"] for h in history} == {"connect"}
    # both runs used the job's session on the server: its Python workers started once, not once per run
    assert python_daemons(connect_server) == daemons + 1


def _wait_for(path: Path, proc: subprocess.Popen, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no task started on the server"
        time.sleep(0.05)


def test_ctrl_c_during_a_remote_run_stops_it_and_the_next_run_publishes_everything_once(tmp_path, connect_server):
    marker = tmp_path / "running"
    # the server named by the job's spark.remote, as a scheduled job would
    job = Job(tmp_path, extra=("fork.branches=2\nconverter.classes=tests.runtime.sample_plugins.MarkThenCrawl\n"
                               f"test.marker={marker}\ntest.crawl.seconds=5\nsource.filebased.batch.size=10\n"
                               f"spark.remote={connect_server.url}\n"))
    for k in range(3):
        write_csv(job.data / f"f{k}.csv", 1 + k * 100)
    cache = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    proc = subprocess.Popen([sys.executable, "-m", "gobblin_py.cli", "run", str(job.file)], cwd=REPO,
                            env={**os.environ, **cache}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    _wait_for(marker, proc, seconds=120)  # a task runs on the server's executors
    killed_before = connect_server.log.read_text(errors="replace").count("Executor killed task")
    began = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the terminal signals the whole foreground group
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, out + err[-4000:]
    assert time.monotonic() - began < 20
    said = [line for line in err.splitlines() if not line.startswith("{")]
    assert said == [said[0]] and said[0].startswith("gpy: error: stopped by SIGINT: nothing"), err[-4000:]
    assert "the job lock is released" in said[0]
    assert not job.final.exists() or not list(job.final.rglob("*.parquet"))  # nothing was published
    assert not (job.state / "Orders").exists()  # and no state was saved
    history = [json.loads(p.read_text()) for p in (job.state / "_history" / "Orders").glob("*.json")]
    assert [(h["status"], h["exit_code"]) for h in history] == [("STOPPED", 130)]
    deadline = time.monotonic() + 30  # the server killed the run's tasks (their Python workers)
    while connect_server.log.read_text(errors="replace").count("Executor killed task") == killed_before:
        assert time.monotonic() < deadline, "the server's tasks ran on after the run stopped"
        time.sleep(0.2)

    job.file.write_text(job.file.read_text().replace("test.crawl.seconds=5", "test.crawl.seconds=0"))
    rerun = run_gpy("run", str(job.file), cwd=REPO, env=cache)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr[-4000:]
    expected = sorted(1 + k * 100 + i for k in range(3) for i in range(40))
    assert branch_ids(job, 0) == expected and branch_ids(job, 1) == expected
    assert leftovers(job) == []  # the stopped run's task files too (its attempts were cancelled)


def test_a_compaction_shuffles_its_records_on_the_spark_connect_server(tmp_path, connect_server):
    """The cluster task's Spark job (read, shuffle by key hash, dedup and write) runs on the server as on a
    classic session: a Connect client has no SparkContext, only DataFrames."""
    from tests.compaction.lake import Lake, event, ids

    lake = Lake(tmp_path, "PARQUET")
    first = [event(i, i % 120) for i in range(60)]
    lake.ingest(first)
    lake.ingest(first[:25])
    job = lake.gobblin_job("minutely_to_hourly.pull")
    result = run_gpy("--log-format", "json", "run", str(job), "--remote", connect_server.url, cwd=REPO,
                     env={"XDG_CACHE_HOME": str(tmp_path / "cache")})
    assert result.returncode == 0, result.stdout + result.stderr[-4000:]
    names = [e["event"] for e in events(result.stderr)]
    assert "compaction_shuffle" in names and "engine connect" in result.stdout
    assert ids(lake.records("hourly")) == sorted({(e["event_id"], 0) for e in first})
