"""A run removes the temporary files earlier runs were killed while writing: their copies of state files and
commit logs, and the files of a run killed while it took the job lock (only once their process is gone)."""

import socket
import subprocess
import uuid

from tests.crash.harness import CrashJob


def _dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def test_a_run_removes_the_temporary_files_of_runs_killed_mid_write(tmp_path):
    job = CrashJob(tmp_path)
    job.add_files(3)
    job.run_until_success()
    host, dead, live = socket.gethostname(), _dead_pid(), subprocess.Popen(["sleep", "600"])
    try:
        left = [  # named as fs.atomic_write, fs_conditional.create_if_absent and JobLock._move_aside name them
            "state/Crash/_tmp_eu-current.jst." + uuid.uuid4().hex,
            "state/_commit_sequences/Crash/_tmp_us.json." + uuid.uuid4().hex,
            "state/_tmp_Crash.lock." + uuid.uuid4().hex,
            f"state/Crash.lock.{host}-{dead}.{uuid.uuid4().hex}.new",
            f"state/Crash.lock.{host}-{dead}.{uuid.uuid4().hex}.stale",
        ]
        taking = [  # a live process's, and another host's (whose processes cannot be checked), are kept
            f"state/Crash.lock.{host}-{live.pid}.{uuid.uuid4().hex}.new",
            f"state/Crash.lock.elsewhere.example-{dead}.{uuid.uuid4().hex}.new",
        ]
        for name in left + taking:
            (tmp_path / name).write_bytes(b"partial")
        assert job.leftovers() == sorted(left + taking)
        job.add_files(3)
        job.run_until_success()
        assert job.leftovers() == sorted(taking)
    finally:
        live.kill()
        live.wait()
    for name in taking:
        (tmp_path / name).unlink()
    job.check()
