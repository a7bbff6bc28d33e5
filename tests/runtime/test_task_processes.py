"""``gpy.taskexecutor.processes``: --engine local runs tasks in worker processes, with the same results as threads;
a signal, a dead worker or a killed run leaves nothing published and no worker behind."""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from gobblin_py.cli.base import load_job_properties
from gobblin_py.runtime.execute import task_progress
from gobblin_py.runtime.execute.task_progress import TaskReport
from gobblin_py.runtime.launcher import JobLauncher
from tests.support.cli import run_gpy
from tests.support.environment import needs
from tests.support.jobs import Job, run_local_process, write_csv
from tests.support.processes import in_session, live_where

ROWS = 40


def _job(root: Path, extra: str = "", files: int = 12) -> Job:
    job = Job(root, extra="gpy.taskexecutor.processes=2\nsource.filebased.dataset.urn.level=subdirectory\n" + extra)
    for k in range(files):
        write_csv(job.data / f"d{k:02d}" / "part.csv", 1 + k * 1000, rows=ROWS)
    return job


def _children(pid: int) -> set[int]:
    """Live processes whose parent is ``pid``."""
    return live_where(1, pid)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _all_gone(pids: set[int], seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while [pid for pid in pids if _alive(pid)] and time.monotonic() < deadline:
        time.sleep(0.05)
    return not [pid for pid in pids if _alive(pid)]


def _start(job: Job) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "gobblin_py.cli", "--log-format", "json", "run", str(job.file),
                             "--engine", "local"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(path: Path, proc: subprocess.Popen, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no task started"
        time.sleep(0.02)


def _crawling_run(root: Path) -> tuple[Job, subprocess.Popen, set[int]]:
    """A run whose tasks take 30 s a batch, once its first task runs: the job, the process, its workers."""
    marker = root / "running"
    job = _job(root, extra=("converter.classes=tests.runtime.sample_plugins.MarkThenCrawl\n"
                            f"test.marker={marker}\ntest.crawl.seconds=30\nsource.filebased.batch.size=5\n"))
    proc = _start(job)
    _wait_for(marker, proc)
    workers = _children(proc.pid)
    assert workers  # the tasks run in processes of their own
    return job, proc, workers


def test_tasks_in_worker_processes_publish_and_check_in_what_threads_do(tmp_path):
    in_processes = _job(tmp_path / "processes")
    in_threads = _job(tmp_path / "threads", extra="gpy.taskexecutor.processes=0\n")
    first = run_gpy("--log-format", "json", "run", str(in_processes.file), "--engine", "local")
    assert first.returncode == 0, first.stderr
    assert run_local_process(in_threads).returncode == 0
    expected = sorted(1 + k * 1000 + i for k in range(12) for i in range(ROWS))
    assert in_processes.published_ids() == in_threads.published_ids() == expected
    events = [json.loads(line) for line in first.stderr.splitlines() if line.startswith("{")]
    finished = [e for e in events if e.get("event") == "task_finished"]
    assert len(finished) == 12 and {e["state"] for e in finished} == {"SUCCESSFUL"}  # the workers' own log lines
    states = {d["urn"]: d for d in in_processes.state_json()["datasets"]}
    assert sorted(states) == sorted(d["urn"] for d in in_threads.state_json()["datasets"])
    assert len(states) == 12
    again = run_local_process(in_processes)  # the watermarks the workers set were checked in: nothing new
    assert again.returncode == 0, again.stderr
    assert in_processes.published_ids() == expected


class _SlowDisplay:
    """A progress display that, given the first task the run got back from a worker, holds the run (up to 20 s)
    until a second task has begun: whether the worker goes on while the run is busy with what it sent."""

    def __init__(self, begun: Path) -> None:
        self.begun = begun
        self.went_on: bool | None = None

    def planned(self, tasks: int) -> None:
        pass

    def update(self, report: TaskReport) -> None:
        # the run's own reports of tasks back from a worker come on its main thread (workers' on the channel's)
        if report.state is None or threading.current_thread() is not threading.main_thread() or self.went_on is not None:
            return
        deadline = time.monotonic() + 20
        while len(os.listdir(self.begun)) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        self.went_on = len(os.listdir(self.begun)) >= 2


def test_a_worker_goes_on_with_its_next_tasks_while_the_run_takes_in_its_last(tmp_path):
    """A worker is never idle waiting for the run to read back, decode and report the tasks it finished: its next
    work is already with it."""
    begun = tmp_path / "begun"
    begun.mkdir()
    job = _job(tmp_path, files=4, extra=("gpy.taskexecutor.processes=1\n"
                                         "converter.classes=tests.runtime.sample_plugins.TouchDataset\n"
                                         f"test.touch.dir={begun}\n"))
    display = _SlowDisplay(begun)
    task_progress.install(display)
    try:
        result = JobLauncher(load_job_properties(str(job.file), None, None), engine="local").run()
    finally:
        task_progress.install(None)
    assert result.exit_code == 0
    assert display.went_on is True
    assert len(job.published_ids()) == 4 * ROWS


def test_as_many_tasks_as_workers_run_one_on_each(tmp_path):
    """A worker holds its next tasks only while there are more left than workers: the last ones go to whichever
    worker is free, and a run of two one-task datasets on two workers runs them side by side."""
    begun = tmp_path / "begun"
    begun.mkdir()
    job = _job(tmp_path, files=2, extra=("converter.classes=tests.runtime.sample_plugins.TouchDataset\n"
                                         f"test.touch.dir={begun}\n"))
    result = run_local_process(job)
    assert result.returncode == 0, result.stderr
    assert len({(begun / name).read_text() for name in os.listdir(begun)}) == 2  # two processes


def test_work_units_and_task_states_larger_than_a_socket_holds_go_to_and_from_a_worker(tmp_path):
    """Each work unit and task state far larger than a socket buffer, the next already sent while a worker runs
    one: neither the run nor the worker waits on the other for good."""
    job = _job(tmp_path, files=3, extra=("gpy.taskexecutor.processes=1\n"
                                         "source.class=tests.runtime.sample_plugins.PaddedFileSource\n"
                                         "test.padding.bytes=3000000\n"))
    result = subprocess.run([sys.executable, "-m", "gobblin_py.cli", "run", str(job.file), "--engine", "local"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert len(job.published_ids()) == 3 * ROWS


@needs(sys.platform.startswith("linux"), "Linux's /proc (the test reads it)")
def test_sigterm_stops_the_workers_and_commits_nothing(tmp_path):
    job, proc, workers = _crawling_run(tmp_path)
    began = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert time.monotonic() - began < 10  # the run did not wait for its workers' 30 s batches
    assert _all_gone(workers)
    assert "stopped by SIGTERM" in err
    assert not job.final.exists() or not list(job.final.rglob("*.parquet"))
    assert not (job.state / "Orders").exists() and not (job.state / "Orders.lock").exists()
    assert [p for d in ("staging", "output") for p in (tmp_path / d).rglob("*") if p.is_file()] == []


def test_a_worker_that_dies_fails_the_run_and_nothing_is_committed(tmp_path):
    job = _job(tmp_path, extra=("converter.classes=tests.runtime.sample_plugins.KillOwnProcess\n"
                                "test.kill.order=5001\n"))
    result = run_local_process(job)
    assert result.returncode == 1, result.stderr
    assert "a task worker process died" in result.stderr and "nothing of this run was committed" in result.stderr
    assert not job.final.exists() or not list(job.final.rglob("*.parquet"))
    assert not (job.state / "Orders").exists() and not (job.state / "Orders.lock").exists()
    job.file.write_text(job.file.read_text().replace("test.kill.order=5001", "test.kill.order=-1"))
    assert run_local_process(job).returncode == 0
    assert job.published_ids() == sorted(1 + k * 1000 + i for k in range(12) for i in range(ROWS))


@needs(sys.platform.startswith("linux"), "Linux's parent-death signal (prctl PR_SET_PDEATHSIG)")
def test_workers_die_with_a_killed_run(tmp_path):
    job, proc, workers = _crawling_run(tmp_path)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    assert _all_gone(workers)  # no orphan writes on after the run is gone
    job.file.write_text(job.file.read_text().replace("test.crawl.seconds=30", "test.crawl.seconds=0"))
    rerun = run_local_process(job)
    assert rerun.returncode == 0, rerun.stderr
    assert job.published_ids() == sorted(1 + k * 1000 + i for k in range(12) for i in range(ROWS))


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:200]
    except OSError:
        return f"{pid} (gone)"


def _read_to_eof(pipes: list, seconds: float) -> bool:
    """Read every pipe until it ends; whether all ended within ``seconds``."""
    deadline = time.monotonic() + seconds
    open_pipes = list(pipes)
    while open_pipes:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        ready, _, _ = select.select(open_pipes, [], [], left)
        for pipe in ready:
            if not os.read(pipe.fileno(), 65536):
                open_pipes.remove(pipe)
    return True


@needs(sys.platform.startswith("linux"), "Linux's /proc (the test reads it)")
def test_a_run_killed_while_its_workers_start_leaves_no_process_and_no_open_output(tmp_path):
    """SIGKILL (the OOM killer) at many instants of the workers' start-up: within a couple of seconds both of the
    run's output pipes end (a supervisor reading them is not left hanging) and no process of the run is left."""
    job = _job(tmp_path, files=4)
    lingering = []
    for delay in (0.0, 0.003, 0.01, 0.03, 0.07, 0.15, 0.3, 0.5):
        proc = subprocess.Popen([sys.executable, "-m", "gobblin_py.cli", "--log-format", "json", "run",
                                 str(job.file), "--engine", "local"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
        try:
            deadline = time.monotonic() + 30
            while not _children(proc.pid) and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.001)  # the first process the run starts for its workers
            time.sleep(delay)
            with contextlib.suppress(ProcessLookupError):  # a run that ended first must still leave nothing behind
                os.kill(proc.pid, signal.SIGKILL)
            killed = time.monotonic()
            ended = _read_to_eof([proc.stdout, proc.stderr], 5)
            waited = time.monotonic() - killed
            proc.wait()
            left = in_session(proc.pid)
            while left and time.monotonic() - killed < 2:  # a process being killed may still be closing down
                time.sleep(0.02)
                left = in_session(proc.pid)
            if not ended or waited > 2 or left:
                lingering.append((delay, round(waited, 2), [_command(pid) for pid in sorted(left)]))
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # the run's own group: whatever it left behind
            proc.stdout.close()
            proc.stderr.close()
    assert lingering == [], lingering
