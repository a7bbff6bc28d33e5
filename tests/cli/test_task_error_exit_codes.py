"""A task that fails on the user's configuration or input makes `gpy run` exit 2 with the task's own message, on
every engine (threads, worker processes, Spark); a task that fails on a transient or I/O error still exits 1."""

from __future__ import annotations

import pytest

from tests.support.jobs import Job, run_local, run_spark, write_csv

ENGINES = {
    "threads": "",
    "processes": "gpy.taskexecutor.processes=2\n",
}
MISSING_FIELD = "converter.cast.fields: no field nosuch in the input (it has order_id, customer_id, amount"


def _job(root, extra: str) -> Job:
    job = Job(root, extra=extra)
    write_csv(job.data / "a" / "day1.csv", 1)
    write_csv(job.data / "b" / "day1.csv", 101)
    return job


def _nothing_committed(job: Job) -> None:
    assert not job.final.exists() or not list(job.final.rglob("*.parquet"))
    assert not (job.state / "Orders").exists() or not list((job.state / "Orders").glob("*.jst"))


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_a_bad_key_found_by_a_task_exits_2_naming_it(tmp_path, engine):
    job = _job(tmp_path, ENGINES[engine] + "converter.cast.fields=nosuch:int64\n")
    result = run_local(job)
    assert result.returncode == 2, result.stdout + result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("gpy: error: ")]
    assert errors and MISSING_FIELD in errors[0], result.stderr
    assert "exit 2" in result.stdout and MISSING_FIELD in result.stdout
    _nothing_committed(job)


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_a_corrupt_input_found_by_a_task_exits_2_naming_the_file(tmp_path, engine):
    job = _job(tmp_path, ENGINES[engine] + "converter.classes=tests.cli.failing_plugins.RejectCorruptInput\n")
    result = run_local(job)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "gpy: error: " in result.stderr
    assert f"{job.data}/part.bin: truncated block: 12 bytes of 4096 at offset 8192" in result.stderr
    _nothing_committed(job)


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_a_transient_error_in_a_task_still_exits_1(tmp_path, engine):
    job = _job(tmp_path, ENGINES[engine] + "converter.classes=tests.cli.failing_plugins.ConnectionResets\n")
    result = run_local(job)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Connection reset by peer" in result.stdout
    assert "gpy: error: " not in result.stderr
    _nothing_committed(job)


def test_a_configuration_error_beside_a_transient_one_exits_2(tmp_path):
    """A rerun cannot succeed until a person fixes the input, whatever else failed."""
    job = _job(tmp_path, "source.filebased.dataset.urn.level=subdirectory\n"
                         "converter.classes=tests.cli.failing_plugins.CorruptOrReset\n")
    result = run_local(job)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "truncated block" in result.stderr and "Connection reset by peer" in result.stdout
    _nothing_committed(job)


def test_on_spark_a_bad_key_found_by_a_task_exits_2_naming_it(tmp_path, spark):
    job = _job(tmp_path, "converter.cast.fields=nosuch:int64\n")
    result = run_spark(job)
    assert result.returncode == 2, result.stdout
    assert "exit 2" in result.stdout and MISSING_FIELD in result.stdout
    _nothing_committed(job)


def test_on_spark_a_corrupt_input_found_by_a_task_exits_2(tmp_path, spark):
    job = _job(tmp_path, "converter.classes=tests.cli.failing_plugins.RejectCorruptInput\n")
    result = run_spark(job)
    assert result.returncode == 2, result.stdout
    assert f"{job.data}/part.bin: truncated block: 12 bytes of 4096 at offset 8192" in result.stdout
    _nothing_committed(job)
