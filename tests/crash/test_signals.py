"""SIGTERM and SIGINT: tasks stop, nothing is committed half done, the lock is released, exit 143 / 130."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.crash.harness import CrashJob
from tests.support.jobs import Job, run_local_process, write_csv


def _start(job: Job) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "gobblin_py.cli", "run", str(job.file), "--engine", "local"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(path, proc: subprocess.Popen, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the task never started"
        time.sleep(0.02)


@pytest.mark.parametrize("signum,code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_while_tasks_run_stops_the_run_and_releases_the_lock(tmp_path, signum, code):
    marker = tmp_path / "running"
    job = Job(tmp_path, extra=("converter.classes=tests.runtime.sample_plugins.MarkThenCrawl\n"
                               f"test.marker={marker}\ntest.crawl.seconds=2\n"
                               "source.filebased.batch.size=5\ntaskexecutor.threadpool.size=1\n"))
    for k in range(4):
        write_csv(job.data / f"f{k}.csv", 1 + k * 100)
    proc = _start(job)
    _wait_for(marker, proc)
    began = time.monotonic()
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert time.monotonic() - began < 10  # the task stopped at its next batch, queued tasks never started
    assert f"stopped by {signal.Signals(signum).name}" in err and "the job lock is released" in err
    assert not list(job.state.glob("*.lock")) and not (job.state / "Orders.lock").exists()
    assert not job.final.exists() or not list(job.final.rglob("*.parquet"))  # nothing was published
    assert not (job.state / "Orders").exists()  # and no state was saved
    left = [p for d in ("staging", "output") for p in (tmp_path / d).rglob("*") if p.is_file()]
    assert left == []  # this run's task files are gone
    job.file.write_text(job.file.read_text().replace("test.crawl.seconds=2", "test.crawl.seconds=0"))
    rerun = run_local_process(job)
    assert rerun.returncode == 0, rerun.stderr
    assert job.published_ids() == sorted(1 + k * 100 + i for k in range(4) for i in range(40))


def test_sigterm_during_commits_finishes_the_commit_under_way_and_starts_no_other(tmp_path):
    job = CrashJob(tmp_path)
    job.job_file.write_text(job.job_file.read_text() + "job.commit.parallelize=false\n")
    job.add_files(3)  # one file per dataset: three dataset commits, one after another
    # the 3rd boundary is inside the first dataset's commit sequence (after its first step)
    proc = subprocess.run(job.command(), env={**os.environ, "GPY_TEST_CRASH_AT_BOUNDARY": "3",
                                              "GPY_TEST_SIGNAL": str(int(signal.SIGTERM))},
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 143, proc.stderr
    assert "the dataset commits under way finished" in proc.stderr
    committed = {p.parent.name for p in job.final.rglob("*.parquet")}
    assert len(committed) == 1  # the commit under way was finished, none other started
    assert not list((job.state / "_commit_sequences").rglob("*.json"))  # nothing half done is left to replay
    assert not (job.state / "Crash.lock").exists()
    job.run_until_success()
    job.check()  # the other datasets come in the next run, every row exactly once


@pytest.mark.spark
def test_sigterm_stops_a_spark_run_and_cancels_its_tasks(tmp_path):
    marker = tmp_path / "running"
    job = Job(tmp_path, extra=("converter.classes=tests.runtime.sample_plugins.MarkThenCrawl\n"
                               f"test.marker={marker}\ntest.crawl.seconds=5\nsource.filebased.batch.size=5\n"
                               "spark.master=local[2]\n"))
    for k in range(3):
        write_csv(job.data / f"f{k}.csv", 1 + k * 100)
    proc = subprocess.Popen([sys.executable, "-m", "gobblin_py.cli", "run", str(job.file), "--engine", "spark"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_for(marker, proc, seconds=120)
    began = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err[-3000:]
    assert time.monotonic() - began < 30
    assert "stopped by SIGTERM" in err and "Traceback" not in err.split("stopped by SIGTERM")[0][-2000:]
    assert not (job.state / "Orders.lock").exists() and not (job.state / "Orders").exists()
    assert not job.final.exists() or not list(job.final.rglob("*.parquet"))
