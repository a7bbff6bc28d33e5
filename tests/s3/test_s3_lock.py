"""The job lock on S3: created with a conditional put, so of runs racing for it exactly one wins; a second run
exits 75; a dead holder's lock is replaced only if unchanged (If-Match); a broken lock stops the commit.

A run that must hold its lock while the test acts waits at a gate (a local file the test creates), so nothing
here depends on how fast a run is."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import pyarrow as pa
import pyarrow.parquet as pq

from gobblin_py.io import fs_conditional as conditional
from tests.support.cli import run_gpy
from tests.support.s3 import SECRET_KEY

RACERS = 6
MAX_ROUNDS = 20

# One racer: for each round, wait for the start signal, try to take that round's lock, report, then hold it
# until told to release it.
RACER = """
import sys
from gobblin_py.io import fs_settings
from gobblin_py.runtime.plan.locks import JobLock, JobLockedError
props = dict(line.split("=", 1) for line in sys.argv[1].splitlines() if "=" in line)
fs_settings.apply(props)
JobLock(props, "Warm-up").holder()  # connect before the first start signal, so that the racers really race
print("ready", flush=True)
for line in sys.stdin:
    lock = JobLock(props, line.split()[1], job_id=sys.argv[2])
    try:
        lock.acquire()
        print("won", flush=True)
    except JobLockedError as exc:
        print("locked", exc, flush=True)
    sys.stdin.readline()  # release
    lock.release()
    print("released", flush=True)
"""


def _props(s3_server, bucket: str) -> str:
    return f"state.store.dir=s3://{bucket}/state\njob.lock.refresh.seconds=1\n{s3_server.job_keys()}"


def test_of_runs_racing_for_the_lock_exactly_one_wins_and_the_conditional_put_decides(s3_server, bucket):
    props = _props(s3_server, bucket)
    racers = [subprocess.Popen([sys.executable, "-c", RACER, props, f"job_Race_{i}"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(RACERS)]
    refused = 0
    try:
        for racer in racers:
            assert racer.stdout.readline().strip() == "ready", racer.stderr.read()
        for round_ in range(1, MAX_ROUNDS + 1):
            name = f"Race{round_}"
            for racer in racers:  # the start signal, as close together as writes to pipes can be
                racer.stdin.write(f"go {name}\n")
                racer.stdin.flush()
            answers = [racer.stdout.readline().strip() for racer in racers]
            assert sum(a == "won" for a in answers) == 1, answers
            assert all(a == "won" or (a.startswith("locked") and "already running" in a) for a in answers), answers
            holder = json.loads(s3_server.filesystem().cat_file(f"{bucket}/state/{name}.lock"))
            assert holder["pid"] == racers[answers.index("won")].pid
            for racer in racers:
                racer.stdin.write("release\n")
                racer.stdin.flush()
            assert all(racer.stdout.readline().strip() == "released" for racer in racers)
            assert not s3_server.filesystem().exists(f"{bucket}/state/{name}.lock")  # released by its holder
            # racers that passed the existence check together were told apart by S3 itself: 412 Precondition Failed
            refused += s3_server.statuses("PUT", f"{bucket}/state/{name}.lock").count(412)
            if refused:
                break
        assert refused, f"in {MAX_ROUNDS} rounds no two racers reached the conditional put together"
    finally:
        for racer in racers:
            racer.stdin.close()
            racer.wait(timeout=60)


def test_create_if_absent_and_replace_if_version(s3_server, bucket):
    fs = s3_server.filesystem()
    path = f"{bucket}/x/lock"
    assert conditional.conditional_writes(fs)
    assert conditional.create_if_absent(fs, path, b"first")
    assert not conditional.create_if_absent(fs, path, b"second")
    assert s3_server.statuses("PUT", path) == [200]  # one conditional put; the second create saw the lock
    data, version = conditional.read_versioned(fs, path)
    assert data == b"first" and version
    fs.pipe_file(path, b"changed meanwhile")
    assert not conditional.replace_if_version(fs, path, b"stale writer", version)  # If-Match refused it
    assert fs.cat_file(path) == b"changed meanwhile"
    data, version = conditional.read_versioned(fs, path)
    assert conditional.replace_if_version(fs, path, b"next", version) and fs.cat_file(path) == b"next"


def test_a_lock_replaced_while_it_is_read_is_read_again(s3_server, bucket):
    """s3fs opens an object with a HEAD and reads it with a GET bound to the ETag it saw; a holder refreshing
    the lock in between makes that GET fail. The reader must then read the new version, not give up."""
    fs = s3_server.filesystem()
    path = f"{bucket}/x/refreshed.lock"
    fs.pipe_file(path, b"first")
    real_open, replaced = fs.open, []

    def open_then_replace(name, mode="rb", **kwargs):
        stream = real_open(name, mode, **kwargs)  # the HEAD: s3fs now knows the first ETag
        if not replaced:
            replaced.append(True)
            s3_server.filesystem().pipe_file(path, b"refreshed")  # the holder's refresh, from another client
        return stream

    fs.open = open_then_replace
    data, version = conditional.read_versioned(fs, path)
    assert replaced and data == b"refreshed"
    assert version == s3_server.filesystem().info(path)["ETag"]


def _gated_job(tmp_path, s3_server, bucket, rows: int = 300):
    """A job whose task waits, holding the lock, until the test creates ``tmp_path/gate``."""
    fs = s3_server.filesystem()
    buffer = pa.BufferOutputStream()
    pq.write_table(pa.table({"order_id": pa.array(range(rows), pa.int64())}), buffer)
    fs.pipe_file(f"{bucket}/incoming/a.parquet", buffer.getvalue().to_pybytes())
    job = tmp_path / "gated.pull"
    job.write_text("\n".join([
        "job.name=Gated",
        "source.class=gobblin_py.connectors.files.filebased.FileBasedSource",
        f"source.filebased.data.directory=s3://{bucket}/incoming",
        "converter.classes=tests.s3.plugins.GateConverter",
        f"test.gate.file={tmp_path}/gate",
        f"task.data.root.dir=s3://{bucket}/task-data",
        f"data.publisher.final.dir=s3://{bucket}/published",
        f"state.store.dir=s3://{bucket}/state",
        "writer.file.pathType=TABLENAME",
        "task.maxretries=0",
        "job.lock.refresh.seconds=0.5",
        s3_server.job_keys(),
    ]))
    return job


def _published_rows(s3_server, bucket: str) -> list[int]:
    fs = s3_server.filesystem()
    out = []
    for path in fs.find(f"{bucket}/published"):
        if not path.endswith(".parquet"):
            continue  # the marker of the job that published there
        with fs.open(path, "rb") as stream:
            out.extend(pq.read_table(stream).column("order_id").to_pylist())
    return sorted(out)


def _start(job) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "gobblin_py.cli", "run", str(job), "--engine", "local"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for_lock(fs, path: str, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while not fs.exists(path):
        assert proc.poll() is None and time.monotonic() < deadline, "the run never took its lock"
        time.sleep(0.05)


def test_a_second_run_while_one_holds_the_s3_lock_exits_75(tmp_path, s3_server, bucket):
    job = _gated_job(tmp_path, s3_server, bucket)
    fs = s3_server.filesystem()
    first = _start(job)
    _wait_for_lock(fs, f"{bucket}/state/Gated.lock", first)
    second = run_gpy("run", str(job), "--engine", "local")
    shown = run_gpy("lock", "show", str(job))
    (tmp_path / "gate").touch()
    out, err = first.communicate(timeout=120)
    assert first.returncode == 0, out + err
    assert second.returncode == 75, second.stderr
    assert f"s3://{bucket}/state/Gated.lock: the job is already running" in second.stderr
    assert f"pid {first.pid} on {socket.gethostname()}" in second.stderr
    assert shown.returncode == 75 and f"pid {first.pid}" in shown.stdout
    assert SECRET_KEY not in out + err + second.stderr + shown.stdout
    assert _published_rows(s3_server, bucket) == list(range(300))  # once, by the run that held the lock
    assert not fs.exists(f"{bucket}/state/Gated.lock")


def test_a_dead_holders_lock_on_s3_is_taken_over(tmp_path, s3_server, bucket):
    job = _gated_job(tmp_path, s3_server, bucket, rows=20)
    (tmp_path / "gate").touch()
    fs = s3_server.filesystem()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    now = time.time()
    fs.pipe_file(f"{bucket}/state/Gated.lock", json.dumps({
        "host": socket.gethostname(), "pid": dead.pid, "job_id": "job_Gated_1", "started": now - 5,
        "refreshed": now, "token": "dead"}).encode())
    assert run_gpy("lock", "show", str(job)).returncode == 0  # stale
    result = run_gpy("run", str(job), "--engine", "local")
    assert result.returncode == 0, result.stderr
    assert "stale_lock_taken_over" in result.stderr
    assert _published_rows(s3_server, bucket) == list(range(20))
    assert not fs.exists(f"{bucket}/state/Gated.lock")


def test_a_run_whose_s3_lock_is_broken_commits_nothing(tmp_path, s3_server, bucket):
    job = _gated_job(tmp_path, s3_server, bucket)
    fs = s3_server.filesystem()
    proc = _start(job)
    _wait_for_lock(fs, f"{bucket}/state/Gated.lock", proc)
    broken = run_gpy("lock", "break", str(job), "--force")
    assert broken.returncode == 0, broken.stderr
    (tmp_path / "gate").touch()
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 75, out + err
    assert "the lock was broken or taken over" in err
    assert _published_rows(s3_server, bucket) == [] and not fs.find(f"{bucket}/state/Gated")
