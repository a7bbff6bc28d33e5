"""Task retries as documented: a failed attempt is retried ``task.maxretries`` times, the k-th retry after
(k-1) x ``task.retry.intervalinsec`` seconds, each with fresh plugins; the task's state counts them in
``task.retries``. The pauses are recorded, not waited for (no test here depends on how long anything takes)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from gobblin_py.runtime.execute import task as task_module
from gobblin_py.sdk.states import WorkingState
from gobblin_py.testing.base import file_source_job

FAIL_ATTEMPTS = "tests.runtime.sample_plugins.FailAttempts"


@pytest.fixture
def pauses(monkeypatch) -> list[float]:
    """Every pause the task runner asks for between attempts, in order."""
    asked: list[float] = []
    monkeypatch.setattr(task_module, "pause", asked.append)
    return asked


def job_failing(tmp_path, attempts: int, retries: int, interval: str = "7"):
    batch = pa.record_batch({"id": pa.array([1, 2, 3], pa.int64())})
    return file_source_job(tmp_path / "job", [batch], **{
        "converter.classes": FAIL_ATTEMPTS, "test.fail.attempts": str(attempts),
        "test.attempts.dir": str(tmp_path / "attempts"), "task.maxretries": str(retries),
        "task.retry.intervalinsec": interval, "job.commit.policy": "successful"})


def attempts_made(tmp_path) -> int:
    [task_dir] = (tmp_path / "attempts").iterdir()
    return len(list(task_dir.iterdir()))


def the_task(job):
    [state] = job.dataset_states().values()
    [task] = state.all_task_states()
    return task


def test_a_task_that_fails_twice_succeeds_on_its_third_attempt(tmp_path, pauses):
    job = job_failing(tmp_path, attempts=2, retries=3)
    assert job.run().exit_code == 0
    assert attempts_made(tmp_path) == 3
    assert pauses == [0.0, 7.0]  # the first retry at once, the second after one interval
    task = the_task(job)
    assert task.working_state is WorkingState.COMMITTED and task.get_prop("task.retries") == "2"
    assert sorted(job.published_keys()) == [1, 2, 3]


def test_a_task_that_keeps_failing_is_tried_maxretries_plus_one_times(tmp_path, pauses):
    job = job_failing(tmp_path, attempts=100, retries=3, interval="2.5")
    assert job.run().exit_code == 3
    assert attempts_made(tmp_path) == 4
    assert pauses == [0.0, 2.5, 5.0]
    task = the_task(job)
    assert task.working_state is WorkingState.FAILED and task.get_prop("task.retries") == "3"
    assert "this attempt fails on purpose" in task.get_prop("task.failure.exception")
    assert job.published_keys() == []


def test_maxretries_zero_fails_at_the_first_failure(tmp_path, pauses):
    job = job_failing(tmp_path, attempts=1, retries=0)
    assert job.run().exit_code == 3
    assert attempts_made(tmp_path) == 1 and pauses == []
    assert the_task(job).get_prop("task.retries") == "0"


def test_the_defaults_are_gobblins_five_retries_300_seconds_apart(tmp_path, pauses):
    job = job_failing(tmp_path, attempts=100, retries=0)
    job.set(**{"task.maxretries": None, "task.retry.intervalinsec": None})
    assert job.run().exit_code == 3
    assert attempts_made(tmp_path) == 6
    assert pauses == [0.0, 300.0, 600.0, 900.0, 1200.0]
    assert the_task(job).get_prop("task.retries") == "5"
