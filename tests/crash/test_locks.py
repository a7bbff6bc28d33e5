"""The job lock: one run at a time, stale locks taken over, `gpy lock show/break`."""

import json
import os
import socket
import subprocess
import sys
import time

from tests.support.cli import run_gpy
from tests.support.jobs import Job, run_local_process, write_csv


def lock_file(job: Job):
    return job.state / "Orders.lock"


def write_lock(job: Job, pid: int, host: str | None = None, refreshed: float | None = None) -> None:
    now = time.time()
    lock_file(job).parent.mkdir(parents=True, exist_ok=True)
    lock_file(job).write_text(json.dumps({
        "host": host or socket.gethostname(), "pid": pid, "job_id": "job_Orders_1", "started": now - 10,
        "refreshed": refreshed if refreshed is not None else now, "token": "other",
    }))


def test_a_second_run_exits_75_naming_the_holder_and_changes_nothing(tmp_path):
    job = Job(tmp_path)
    write_csv(job.data / "a.csv", 1)
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        write_lock(job, holder.pid)
        result = run_local_process(job)
        assert result.returncode == 75
        [line] = result.stderr.strip().splitlines()[-1:]
        assert "already running" in line and f"pid {holder.pid}" in line and str(lock_file(job)) in line
        assert job.published_ids() == [] and not list(job.state.rglob("*.jst"))
        shown = run_gpy("lock", "show", str(job.file))
        assert shown.returncode == 75 and f"pid {holder.pid}" in shown.stdout
        refused = run_gpy("lock", "break", str(job.file))
        assert refused.returncode == 2 and "--force" in refused.stderr
        assert run_gpy("lock", "break", str(job.file), "--force").returncode == 0
        assert not lock_file(job).exists()
    finally:
        holder.kill()


def test_lock_of_a_dead_process_on_this_host_is_taken_over(tmp_path):
    job = Job(tmp_path)
    write_csv(job.data / "a.csv", 1)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    write_lock(job, dead.pid)
    assert run_gpy("lock", "show", str(job.file)).returncode == 0  # stale
    result = run_local_process(job)
    assert result.returncode == 0, result.stderr
    assert job.published_ids() == list(range(1, 41))
    assert not lock_file(job).exists()  # released at the end


def test_lock_not_refreshed_for_the_timeout_is_taken_over(tmp_path):
    job = Job(tmp_path, extra="job.lock.timeout.seconds=60\n")
    write_csv(job.data / "a.csv", 1)
    write_lock(job, 1, host="another-host", refreshed=time.time() - 3600)
    assert run_local_process(job).returncode == 0
    write_lock(job, 1, host="another-host", refreshed=time.time())
    assert run_local_process(job).returncode == 75


def gated_job(tmp_path, extra: str = "") -> Job:
    """A job whose task holds at its first batch, with the lock taken, until the test creates ``tmp_path/gate``."""
    job = Job(tmp_path / "job", extra=(f"converter.classes=tests.s3.plugins.GateConverter\n"
                                       f"test.gate.file={tmp_path / 'gate'}\n{extra}"))
    write_csv(job.data / "a.csv", 1)
    return job


def start_run(job: Job) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "gobblin_py.cli", "run", str(job.file), "--engine", "local"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_lock(job: Job, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while not lock_file(job).exists():
        assert proc.poll() is None, f"the run ended without taking its lock: {proc.communicate()}"
        assert time.monotonic() < deadline, "the run never took its lock"
        time.sleep(0.05)


def test_the_lock_is_held_and_refreshed_during_a_run(tmp_path):
    job = gated_job(tmp_path, "job.lock.refresh.seconds=0.2\n")
    proc = start_run(job)
    try:
        wait_for_lock(job, proc)
        seen = []
        deadline = time.monotonic() + 30
        while len({s["refreshed"] for s in seen}) < 2:  # the run waits at the gate, holding its lock
            assert proc.poll() is None and time.monotonic() < deadline, f"refreshed only at {seen}"
            try:
                seen.append(json.loads(lock_file(job).read_text()))
            except ValueError:
                pass  # caught between a refresh's truncate and write
            time.sleep(0.05)
        assert {s["pid"] for s in seen} == {proc.pid}
    finally:
        (tmp_path / "gate").touch()
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, out + err
    assert not lock_file(job).exists()
    assert job.published_ids() == list(range(1, 41))


def test_lock_can_be_disabled(tmp_path):
    job = Job(tmp_path, extra="job.lock.enabled=false\n")
    write_csv(job.data / "a.csv", 1)
    write_lock(job, os.getpid())
    assert run_local_process(job).returncode == 0


def test_an_unreadable_lock_is_stale_only_after_the_timeout(tmp_path):
    job = Job(tmp_path, extra="job.lock.timeout.seconds=60\n")
    write_csv(job.data / "a.csv", 1)
    lock_file(job).parent.mkdir(parents=True, exist_ok=True)
    lock_file(job).write_bytes(b"")  # e.g. left by a crash of an older writer
    refused = run_local_process(job)
    assert refused.returncode == 2 and "unreadable lock file" in refused.stderr
    old = time.time() - 3600
    os.utime(lock_file(job), (old, old))
    assert run_local_process(job).returncode == 0
    assert job.published_ids() == list(range(1, 41))


def test_a_run_whose_lock_is_broken_commits_nothing(tmp_path):
    job = gated_job(tmp_path)
    proc = start_run(job)
    try:
        wait_for_lock(job, proc)
        assert run_gpy("lock", "break", str(job.file), "--force").returncode == 0
    finally:
        (tmp_path / "gate").touch()
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 75, out + err
    assert "the lock was broken or taken over" in err
    assert job.published_ids() == [] and not list(job.state.rglob("*.jst"))


def test_two_runs_started_together_one_runs_and_the_other_exits_75(tmp_path):
    """Two real `gpy run` processes race for the lock: exactly one wins; it holds the lock until a test file lets
    its task finish, so the loser always meets it held."""
    marker, release = tmp_path / "task-started", tmp_path / "release"
    job = Job(tmp_path / "job", extra=(f"converter.classes=tests.runtime.sample_plugins.WaitForRelease\n"
                                       f"test.marker={marker}\ntest.release={release}\n"))
    write_csv(job.data / "a.csv", 1)
    command = [sys.executable, "-m", "gobblin_py.cli", "run", str(job.file), "--engine", "local"]
    runs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    try:
        finished = []
        for _ in range(1200):  # until the loser gives up (the winner waits for the release file)
            finished = [p for p in runs if p.poll() is not None]
            if finished:
                break
            time.sleep(0.05)
        [loser] = finished
        [winner] = [p for p in runs if p is not loser]
        out, err = loser.communicate(timeout=60)
        assert loser.returncode == 75, out + err
        assert f"pid {winner.pid}" in err.strip().splitlines()[-1]  # it names the holder
        for _ in range(1200):  # the winner's task starts (the loser may have given up before that)
            if marker.exists():
                break
            time.sleep(0.05)
        assert marker.exists() and winner.poll() is None  # held at its task until the release file exists
        release.touch()
        out, err = winner.communicate(timeout=120)
        assert winner.returncode == 0, out + err
    finally:
        release.touch()
        for proc in runs:
            if proc.poll() is None:
                proc.kill()
    assert job.published_ids() == list(range(1, 41))  # pulled once, by the winner
    assert not lock_file(job).exists()


def test_lock_show_of_a_job_with_no_lock_folder_is_a_usage_error(tmp_path):
    job_file = tmp_path / "nolock.pull"
    job_file.write_text("job.name=NoLock\nsource.class=FileBasedSource\n")  # neither job.lock.dir nor state.store.dir
    for command in ("show", "break"):
        result = run_gpy("lock", command, str(job_file), cwd=tmp_path)  # no conf/ with defaults there
        assert result.returncode == 2, result.stderr
        assert "job.lock.dir" in result.stderr and "Traceback" not in result.stderr
