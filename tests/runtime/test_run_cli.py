"""`gpy run` end to end through the CLI: first run, incremental runs, failures under each commit policy.

The local engine runs as a real subprocess (as cron would call it). The Spark engine runs the same CLI
in-process through click's runner so that the suite's one SparkSession serves every run, plus one
subprocess run that starts its own Spark.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from gobblin_py.cli import main
from tests.support.cli import run_gpy
from tests.support.jobs import Job, run_local, run_spark, write_csv
from tests.support.paths import REPO


@pytest.fixture(params=["local", "spark"])
def runner(request):
    if request.param == "spark":
        request.getfixturevalue("spark")  # start the shared session once
        return run_spark
    return run_local


def test_first_run_then_incremental_runs(tmp_path, runner):
    job = Job(tmp_path)
    write_csv(job.data / "day1.csv", 1)
    write_csv(job.data / "day2.csv", 101)
    first = runner(job)
    assert first.returncode == 0, first.stderr
    assert job.published_ids() == list(range(1, 41)) + list(range(101, 141))
    assert not (tmp_path / "staging" / "Orders").exists() or not any((tmp_path / "staging" / "Orders").rglob("*.parquet"))

    again = runner(job)
    assert again.returncode == 0 and "nothing new to pull" in again.stdout
    assert len(job.published_ids()) == 80

    write_csv(job.data / "sub" / "day3.csv", 201)
    third = runner(job)
    assert third.returncode == 0, third.stderr
    assert job.published_ids() == list(range(1, 41)) + list(range(101, 141)) + list(range(201, 241))
    [dataset] = job.state_json()["datasets"]
    assert dataset["state"] == "COMMITTED" and dataset["task_count"] == 1
    [task] = dataset["tasks"]
    assert task["records_written"] == 40 and task["working_state"] == "COMMITTED"
    assert task["actual_high_watermark"] == task["expected_high_watermark"]


def test_files_with_equal_modification_times_are_pulled_exactly_once(tmp_path):
    job = Job(tmp_path)
    stamp = time.time() - 3600
    write_csv(job.data / "a.csv", 1)
    os.utime(job.data / "a.csv", (stamp, stamp))
    assert run_local(job).returncode == 0
    write_csv(job.data / "b.csv", 101)  # arrives later, with the very same modification time
    os.utime(job.data / "b.csv", (stamp, stamp))
    assert run_local(job).returncode == 0
    assert run_local(job).returncode == 0
    assert job.published_ids() == list(range(1, 41)) + list(range(101, 141))


def test_a_changed_file_is_pulled_again_once(tmp_path):
    job = Job(tmp_path)
    write_csv(job.data / "a.csv", 1)
    assert run_local(job).returncode == 0
    write_csv(job.data / "a.csv", 1, rows=45)  # appended to: new content, new modification time
    os.utime(job.data / "a.csv", (time.time() + 5, time.time() + 5))
    assert run_local(job).returncode == 0
    assert run_local(job).returncode == 0
    assert job.published_ids() == sorted(list(range(1, 41)) + list(range(1, 46)))


def failing_job(root: Path, policy: str) -> Job:
    job = Job(root, extra=(
        f"job.commit.policy={policy}\n"
        "converter.classes=gobblin_py.transforms.converters.cast.TypeCastConverter,tests.runtime.sample_plugins.FailOnMarker\n"
        "test.fail.marker=BROKEN\n"
    ))
    write_csv(job.data / "good.csv", 1)
    write_csv(job.data / "bad.csv", 101, note="BROKEN")
    return job


def test_failing_task_under_full_publishes_nothing_and_keeps_state(tmp_path, runner):
    job = failing_job(tmp_path, "full")
    result = runner(job)
    assert result.returncode == 1
    assert "FAILED" in result.stdout and "nothing published, state kept" in result.stdout
    assert job.published_ids() == []
    assert not list(job.state.rglob("*.jst"))  # nothing persisted
    # fixed upstream: the next run pulls both files, once
    write_csv(job.data / "bad.csv", 101)
    assert runner(job).returncode == 0
    assert job.published_ids() == list(range(1, 41)) + list(range(101, 141))


@pytest.mark.parametrize("policy", ["successful", "partial"])
def test_failing_task_under_successful_and_partial_commits_the_rest(tmp_path, runner, policy):
    job = failing_job(tmp_path, policy)
    result = runner(job)
    assert result.returncode == 3, result.stdout
    assert job.published_ids() == list(range(1, 41))
    [dataset] = job.state_json()["datasets"]
    assert dataset["state"] == "COMMITTED"
    states = {t["working_state"] for t in dataset["tasks"]}
    assert states == {"COMMITTED", "FAILED"}
    failed = next(t for t in dataset["tasks"] if t["working_state"] == "FAILED")
    assert failed["actual_high_watermark"] == failed["low_watermark"]  # rolled back
    committed = next(t for t in dataset["tasks"] if t["working_state"] == "COMMITTED")
    assert committed["actual_high_watermark"] == committed["expected_high_watermark"]
    # the failed work unit is retried next run, and only it
    write_csv(job.data / "bad.csv", 101)
    retry = runner(job)
    assert retry.returncode == 0, retry.stdout
    assert job.published_ids() == list(range(1, 41)) + list(range(101, 141))


def test_task_retries_with_fresh_plugins(tmp_path):
    attempts = tmp_path / "attempts"
    attempts.mkdir()
    job = Job(tmp_path / "job", extra=(
        "task.maxretries=1\ntask.retry.intervalinsec=0\n"
        f"converter.classes=tests.runtime.sample_plugins.FailFirstAttempt\ntest.attempts.dir={attempts}\n"
    ))
    write_csv(job.data / "a.csv", 1)
    result = run_local(job)
    assert result.returncode == 0, result.stdout + result.stderr
    assert job.published_ids() == list(range(1, 41))
    state = json.loads(run_gpy("state", "show", str(job.file), "--json").stdout)
    assert state["datasets"][0]["tasks"][0]["working_state"] == "COMMITTED"


def test_publisher_never_overwrites(tmp_path):
    job = Job(tmp_path, extra="writer.file.pathType=TABLENAME\nwriter.file.name=orders.parquet\n")
    write_csv(job.data / "a.csv", 1)
    assert run_local(job).returncode == 0
    before = (job.final / "orders" / "orders.parquet").read_bytes()
    write_csv(job.data / "b.csv", 101)
    result = run_local(job)
    assert result.returncode == 1
    assert "already exists" in result.stdout
    assert (job.final / "orders" / "orders.parquet").read_bytes() == before
    # the dataset's state still points at the first run's snapshot: b.csv is retried, not lost
    assert run_local(job).returncode == 1


def test_per_record_converter_runs_end_to_end(tmp_path):
    job = Job(tmp_path, extra="converter.classes=tests.runtime.sample_plugins.UpperCaseNames\n")
    write_csv(job.data / "a.csv", 1)
    result = run_local(job)
    assert result.returncode == 0, result.stderr
    assert "slow path" in result.stderr
    table = pq.read_table(next(job.final.rglob("*.parquet")))
    assert set(table.column("currency").to_pylist()) == {"eur"}


def test_bad_job_and_unknown_class_exit_2_with_one_line(tmp_path):
    job = Job(tmp_path, extra="source.class=gobblin_py.connectors.files.filebased.FileBasedSorce\n")
    result = run_local(job)
    assert result.returncode == 2
    assert "source.class=gobblin_py.connectors.files.filebased.FileBasedSorce" in result.stderr
    assert "Traceback" not in result.stderr
    result = run_gpy("run", str(tmp_path / "missing.pull"))
    assert result.returncode == 2 and "no such job file" in result.stderr


@pytest.mark.spark
def test_quickstart_runs_as_a_subprocess_on_spark(tmp_path):
    """What `make run` does: the shipped job, on embedded Spark, twice; the second run pulls nothing."""
    shutil.copytree(REPO / "jobs", tmp_path / "jobs")
    first = run_gpy("run", "jobs/quickstart.pull", cwd=tmp_path)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "written 750" in first.stdout and "engine spark" in first.stdout
    second = run_gpy("run", "jobs/quickstart.pull", cwd=tmp_path)
    assert second.returncode == 0 and "nothing new to pull" in second.stdout
    table = pq.read_table(tmp_path / "work" / "quickstart" / "published")
    assert table.num_rows == 750 and len(set(table.column("order_id").to_pylist())) == 750


def test_each_subdirectory_is_a_dataset_committed_on_its_own(tmp_path):
    job = Job(tmp_path, extra=(
        "source.filebased.dataset.urn.level=subdirectory\n"
        "converter.classes=gobblin_py.transforms.converters.cast.TypeCastConverter,tests.runtime.sample_plugins.FailOnMarker\n"
        "test.fail.marker=BROKEN\n"
    ))
    write_csv(job.data / "eu" / "a.csv", 1)
    write_csv(job.data / "us" / "a.csv", 101, note="BROKEN")
    write_csv(job.data / "stray.csv", 901)  # not inside a dataset folder: ignored at this level
    result = run_local(job)
    assert result.returncode == 1  # the "us" dataset failed under full ...
    assert job.published_ids() == list(range(1, 41))  # ... while "eu" was committed
    assert sorted(p.name for p in (job.state / "Orders").glob("*current.jst")) == ["eu-current.jst"]
    eu = job.state_json()["datasets"]
    assert [d["urn"] for d in eu] == ["eu"]
    write_csv(job.data / "us" / "a.csv", 101)
    assert run_local(job).returncode == 0
    assert job.published_ids() == list(range(1, 41)) + list(range(101, 141))
    assert {d["urn"] for d in job.state_json()["datasets"]} == {"eu", "us"}
    # the two datasets publish under their own folders
    assert {p.parent.parent.name for p in job.final.rglob("*.parquet")} == {"eu", "us"}


def test_tasks_whose_random_attempt_ids_collide_still_publish_only_their_own_files(tmp_path, monkeypatch):
    """Each task attempt writes in a folder of its own even when two attempt ids are equal (they are random)."""
    from gobblin_py.runtime.execute import task as task_module

    monkeypatch.setattr(task_module, "attempt_id", lambda retry: f"r{retry}_00000000")
    job = Job(tmp_path, extra="source.filebased.dataset.urn.level=subdirectory\n")
    write_csv(job.data / "eu" / "a.csv", 1)
    write_csv(job.data / "us" / "a.csv", 101)
    result = CliRunner().invoke(main, ["run", str(job.file), "--engine", "local"])
    assert result.exit_code == 0, result.output
    published = {p.parent.parent.name: pq.read_table(p).column("order_id").to_pylist() for p in job.final.rglob("*.parquet")}
    assert published == {"eu": list(range(1, 41)), "us": list(range(101, 141))}


def test_hocon_job_file_runs(tmp_path):
    data = tmp_path / "data"
    write_csv(data / "a.csv", 1)
    job_file = tmp_path / "orders.conf"
    job_file.write_text(f"""
root = "{tmp_path}"
job.name = OrdersHocon
source.class = gobblin_py.connectors.files.filebased.FileBasedSource
source.filebased.data.directory = ${{root}}/data
extract {{ namespace = shop, table.name = orders }}
writer.staging.dir = ${{root}}/staging
writer.output.dir = ${{root}}/output
data.publisher.final.dir = ${{root}}/published
state.store.dir = ${{root}}/state
task.maxretries = 0
""")
    result = run_gpy("run", str(job_file), "--engine", "local")
    assert result.returncode == 0, result.stdout + result.stderr
    table = pq.read_table(next((tmp_path / "published").rglob("*.parquet")))
    assert table.num_rows == 40


def test_corrupt_state_stops_the_run_with_exit_2_and_changes_nothing(tmp_path):
    job = Job(tmp_path)
    write_csv(job.data / "a.csv", 1)
    assert run_local(job).returncode == 0
    current = job.state / "Orders" / "current.jst"
    current.write_bytes(current.read_bytes()[:-3])
    before = {p.name: p.read_bytes() for p in (job.state / "Orders").iterdir()}
    write_csv(job.data / "b.csv", 101)
    result = run_local(job)
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()[-1:]
    assert str(current) in line and "truncated" in line and "Traceback" not in result.stderr
    assert {p.name: p.read_bytes() for p in (job.state / "Orders").iterdir()} == before
    assert job.published_ids() == list(range(1, 41))


def test_a_job_without_a_state_store_keeps_no_state_and_pulls_everything_each_run(tmp_path):
    job = Job(tmp_path, extra="state.store.enabled=false\n")
    write_csv(job.data / "a.csv", 1)
    first = run_local(job)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "state unchanged" in first.stdout and "state saved" not in first.stdout
    assert job.published_ids() == list(range(1, 41))
    assert not list(job.state.rglob("*.jst")) and not list(job.state.rglob("*.json"))  # no state, no commit log
    second = run_local(job)  # nothing remembers what was pulled: everything again
    assert second.returncode == 0 and "nothing new to pull" not in second.stdout
    assert job.published_ids() == sorted(list(range(1, 41)) * 2)
