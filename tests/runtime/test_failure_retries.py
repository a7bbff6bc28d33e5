"""`gpy run` retries a failed task only when a retry can help: a bad cast or a missing input file fails the task at
its first attempt, with Gobblin's default retry settings (5 retries, 300 s apart) in force; a connection refused
or an unknown error is retried. Each retry is a ``task_retry`` event, and the run history keeps every attempt.

The runs' speed is measured by the attempts they made, never by a clock."""

from __future__ import annotations

import json

import pytest

from tests.support.cli import run_gpy
from tests.support.jobs import Job, run_local, run_spark, write_csv


def default_retries(job: Job) -> Job:
    """The job without the suite's ``task.maxretries=0``: Gobblin's defaults apply."""
    job.file.write_text(job.file.read_text().replace("task.maxretries=0\n", ""))
    return job


def run_json(job: Job):
    result = run_gpy("--log-format", "json", "run", str(job.file), "--engine", "local")
    events = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
    return result, events


def last_run(job: Job, events: list[dict] | None = None) -> dict:
    """The run history's record of the job's last run (the run named by its ``job_started`` event when given)."""
    run_id = next((e["job_id"] for e in events or [] if e["event"] == "job_started"), None)
    if run_id is None:
        run_id = json.loads(run_gpy("history", str(job.file), "--json").stdout)["runs"][0]["run_id"]
    return json.loads(run_gpy("history", str(job.file), run_id, "--json").stdout)


def the_attempts(record: dict) -> list[dict]:
    (dataset,) = record["datasets"]
    (task,) = dataset["task_attempts"]
    return task["attempts"]


def test_a_bad_cast_fails_at_its_first_attempt_under_the_default_retries(tmp_path):
    job = default_retries(Job(tmp_path, extra="converter.cast.fields=currency:int64\n"))
    write_csv(job.data / "a.csv", 1)
    result, events = run_json(job)
    assert result.returncode == 65, result.stderr  # bad data: a scheduler should not retry it either
    assert not [e for e in events if e["event"] == "task_retry"]
    (failed,) = [e for e in events if e["event"] == "task_failed"]
    assert failed["kind"] == "permanent" and "not retried" in failed["note"] and failed["attempt"] == 1
    record = last_run(job, events)
    (attempt,) = the_attempts(record)
    assert attempt["attempt"] == 1 and attempt["kind"] == "permanent" and attempt["retry_in_s"] is None
    assert "DataError" in attempt["error"] and "a.csv line 2: column 'currency': 'EUR'" in attempt["error"]
    (error,) = record["datasets"][0]["task_errors"]
    assert ": permanent (DataError.retryable is False): " in error and error.endswith("— not retried")
    shown = run_gpy("history", str(job.file), record["run_id"])
    assert "attempt 1: permanent, not retried — DataError: " in shown.stdout and "a.csv line 2" in shown.stdout


def test_a_missing_input_file_is_permanent(tmp_path):
    job = default_retries(Job(tmp_path, extra="source.class=tests.runtime.sample_plugins.VanishingFilesSource\n"))
    write_csv(job.data / "a.csv", 1)
    result, events = run_json(job)
    assert result.returncode == 1, result.stderr
    assert not [e for e in events if e["event"] == "task_retry"]
    (attempt,) = the_attempts(last_run(job, events))
    assert attempt["kind"] == "permanent" and attempt["error"].startswith("FileNotFoundError")


def test_a_connection_refused_is_retried_and_the_retry_is_logged_and_recorded(tmp_path):
    attempts = tmp_path / "attempts"
    job = Job(tmp_path / "job", extra=(
        "source.class=tests.runtime.sample_plugins.RefusedOnceSource\n"
        f"test.attempts.dir={attempts}\ntask.maxretries=5\ntask.retry.intervalinsec=0\n"))
    write_csv(job.data / "a.csv", 1)
    result, events = run_json(job)
    assert result.returncode == 0, result.stderr
    assert job.published_ids() == list(range(1, 41))
    (retry,) = [e for e in events if e["event"] == "task_retry"]
    assert retry["attempt"] == 2 and retry["of"] == 6 and retry["delay_s"] == 0
    assert retry["error_type"] == "ConnectionRefusedError" and retry["kind"] == "transient"
    assert retry["note"] == "the run may still wait 900 s in all for retries (gpy.retry.budget.seconds=900)"
    assert retry["task"].startswith("task_Orders_")
    record = last_run(job, events)
    (attempt,) = the_attempts(record)
    assert attempt == {"attempt": 1, "error": attempt["error"], "kind": "transient", "reason": "ConnectionRefusedError",
                       "retry_in_s": 0.0}
    assert attempt["error"].startswith("ConnectionRefusedError")
    assert record["datasets"][0]["task_errors"] == []


def test_an_unknown_error_is_still_retried(tmp_path):
    attempts = tmp_path / "attempts"
    job = Job(tmp_path / "job", extra=(
        "converter.classes=tests.runtime.sample_plugins.FailAttempts\ntest.fail.attempts=100\n"
        f"test.attempts.dir={attempts}\ntask.maxretries=2\ntask.retry.intervalinsec=0\n"))
    write_csv(job.data / "a.csv", 1)
    result, events = run_json(job)
    assert result.returncode == 1, result.stderr
    retries = [e for e in events if e["event"] == "task_retry"]
    assert [(e["attempt"], e["of"], e["kind"], e["error_type"]) for e in retries] == [
        (2, 3, "unknown", "RuntimeError"), (3, 3, "unknown", "RuntimeError")]
    record = last_run(job, events)
    recorded = the_attempts(record)
    assert [(a["attempt"], a["kind"]) for a in recorded] == [(1, "unknown"), (2, "unknown"), (3, "unknown")]
    assert [a["retry_in_s"] for a in recorded] == [0.0, 0.0, None]
    (error,) = record["datasets"][0]["task_errors"]
    assert error.endswith("RuntimeError: this attempt fails on purpose — failed 3 attempts")


@pytest.mark.parametrize("engine", ["processes", "spark"])
def test_worker_processes_and_spark_retry_the_transient_and_not_the_permanent(tmp_path, engine, request):
    def run(job: Job) -> int:
        if engine == "spark":
            request.getfixturevalue("spark")
            return run_spark(job).returncode
        return run_local(job).returncode

    extra = "gpy.taskexecutor.processes=2\n" if engine == "processes" else ""
    bad_cast = default_retries(Job(tmp_path / "cast", extra=extra + "converter.cast.fields=currency:int64\n"))
    write_csv(bad_cast.data / "a.csv", 1)
    assert run(bad_cast) != 0
    (attempt,) = the_attempts(last_run(bad_cast))
    assert attempt["kind"] == "permanent" and attempt["retry_in_s"] is None

    # a database's busy error is transient only by the SQL connector's classifier (gobblin_py.connectors.sql.failures),
    # which a worker process or Spark executor loads through its entry point, never having imported the connector
    attempts = tmp_path / "attempts"
    locked = Job(tmp_path / "locked", extra=extra + (
        "source.class=tests.runtime.sample_plugins.LockedOnceSource\n"
        f"test.attempts.dir={attempts}\ntask.maxretries=5\ntask.retry.intervalinsec=0\n"))
    write_csv(locked.data / "a.csv", 1)
    assert run(locked) == 0
    assert locked.published_ids() == list(range(1, 41))
    (attempt,) = the_attempts(last_run(locked))
    assert attempt["kind"] == "transient" and attempt["reason"] == "SQLITE_BUSY", attempt
    assert attempt["error"].startswith("OperationalError: database is locked")
    if engine == "processes":  # a fresh worker: the classifier came from its entry point, not an import
        (task,) = attempts.iterdir()
        assert [f.read_text() for f in sorted(task.iterdir()) if not f.name.startswith("db.sqlite")][0] == "False"
