"""A retention job SIGKILLed at each of several deletions (a deterministic kill point around each) leaves a
store that ``gpy state show`` and the next run read: every dataset resumes from its watermark, every row is
published exactly once, nothing is left behind; the next retention run deletes the rest."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from gobblin_py.store.retention import DELETE_PHASE
from tests.crash.harness import CrashJob

KILL_ENV = "GPY_TEST_KILL_IN_PHASE"  # gobblin_py.io.crash_points


def _cleaner(job: CrashJob) -> str:
    path = job.root.parent / "cleaner.pull"  # beside the job's folder: nothing of the job's own
    path.write_text("\n".join([
        "type=hadoopJava",
        "job.class=org.apache.gobblin.data.management.retention.DatasetCleanerJob",
        "gobblin.retention.dataset.finder.class=org.apache.gobblin.data.management.retention.dataset.finder."
        "TimeBasedDatasetStoreDatasetFinder",
        "selection.timeBased.lookbackTime=1d",
        f"state.store.dir={job.state_url}",
    ]) + "\n")
    return str(path)


def _clean(cleaner: str, kill_at: int | None = None) -> int:
    env = {**os.environ, **({KILL_ENV: f"{DELETE_PHASE}:{kill_at}:0"} if kill_at else {})}
    return subprocess.run([sys.executable, "-m", "gobblin_py.cli", "run", cleaner], env=env, capture_output=True,
                          timeout=300).returncode


def test_a_retention_run_killed_at_any_deletion_leaves_a_store_the_next_run_reads(tmp_path):
    job = CrashJob(tmp_path / "job")
    for _ in range(3):  # three runs: three run files per dataset, and its current
        job.add_files(3)
        job.run_until_success()
    folder = job.state / "Crash"
    old = time.time() - 3 * 86400
    for path in folder.glob("*.jst"):
        os.utime(path, (old, old))  # every file old: only the currents and the runs they copy may stay
    runs = sorted(folder.glob("*-job_*.jst"))
    assert len(runs) == 9
    cleaner = _cleaner(job)
    left = len(runs)
    for kill_at in (1, 3):  # the first deletion, then a later one of what is left
        assert _clean(cleaner, kill_at) == -signal.SIGKILL
        now_left = len(list(folder.glob("*-job_*.jst")))
        # killed inside the kill_at-th deletion: just before the file went, or just after
        assert now_left in (left - kill_at + 1, left - kill_at), (left, now_left)
        left = now_left
        job.check()  # state show reads it, state matches published data, exactly once, nothing left behind
    assert _clean(cleaner) == 0
    assert len(list(folder.glob("*-job_*.jst"))) == 3  # the run each dataset's current copies
    job.add_files(3)
    job.run_until_success()
    job.check()
