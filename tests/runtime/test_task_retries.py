"""Task retries as documented: a failed attempt is retried ``task.maxretries`` times, the k-th retry after
(k-1) x ``task.retry.intervalinsec`` seconds, each with fresh plugins, within the run's retry budget
(``gpy.retry.budget.seconds``); the task's state counts them in ``task.retries``. The pauses are recorded, not
waited for, and move a fake clock the budget reads (no test here depends on how long anything takes)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from gobblin_py.runtime.execute import task as task_module
from gobblin_py.sdk import retry_budget
from gobblin_py.sdk.states import WorkingState
from gobblin_py.testing.base import file_source_job

FAIL_ATTEMPTS = "tests.runtime.sample_plugins.FailAttempts"


@pytest.fixture
def pauses(monkeypatch) -> list[float]:
    """Every pause the task runner asks for between attempts, in order; each moves the budget's clock on."""
    asked: list[float] = []
    now = [1000.0]

    def pause(seconds: float) -> None:
        asked.append(seconds)
        now[0] += seconds

    monkeypatch.setattr(task_module, "pause", pause)
    monkeypatch.setattr(retry_budget, "monotonic", lambda: now[0])
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


def test_the_defaults_are_gobblins_retries_300_seconds_apart_within_a_15_minute_budget(tmp_path, pauses):
    job = job_failing(tmp_path, attempts=100, retries=0)
    job.set(**{"task.maxretries": None, "task.retry.intervalinsec": None})
    result = job.run()
    assert result.exit_code == 3
    assert attempts_made(tmp_path) == 4  # Gobblin's 0/300/600 s, then its 900 s wait would pass the budget
    assert pauses == [0.0, 300.0, 600.0]
    task = the_task(job)
    assert task.get_prop("task.retries") == "3"
    (error,) = result.datasets[0].task_errors
    assert error.endswith("— failed 4 attempts — not retried: the run's retry budget is spent "
                          "(gpy.retry.budget.seconds=900)")


def test_a_wait_that_would_pass_the_budget_is_shortened_then_no_retry_is_made(tmp_path, pauses):
    job = job_failing(tmp_path, attempts=100, retries=5, interval="7")
    assert job.run(**{"gpy.retry.budget.seconds": "10"}).exit_code == 3
    assert pauses == [0.0, 7.0, 3.0]  # the 14 s wait cut to the 3 s left
    assert attempts_made(tmp_path) == 4


def test_a_budget_of_zero_makes_no_retry(tmp_path, pauses):
    job = job_failing(tmp_path, attempts=1, retries=5)
    assert job.run(**{"gpy.retry.budget.seconds": "0"}).exit_code == 3
    assert pauses == [] and attempts_made(tmp_path) == 1
