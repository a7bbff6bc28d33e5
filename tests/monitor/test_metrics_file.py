"""Gobblin's metric reporting keys: the metrics file of each run where metrics.log.dir says, with Gobblin's metric
and event names; the keys of Gobblin reporters gpy does not have (JMX, custom builders) are named, not ignored."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import run_gpy_here
from tests.support.monitor import make_job, make_sequential_job


def metrics_lines(folder: Path) -> tuple[Path, list[dict]]:
    files = sorted(folder.glob("gobblin.metrics.job_Orders_*/gobblin.metrics.job_Orders_*.txt.metrics.log"))
    assert len(files) == 1, sorted(folder.rglob("*"))
    return files[0], [json.loads(line) for line in files[0].read_text().splitlines()]


def test_each_run_writes_its_metrics_file_with_gobblins_names(tmp_path):
    job = make_job(tmp_path, "metrics.reporting.file.enabled=true", f"metrics.log.dir={tmp_path}/metrics",
                   "metrics.reporting.file.suffix=txt")
    result = run_gpy_here("run", str(job), "--engine", "local")
    assert result.returncode == 0, result.stderr[-3000:]
    path, lines = metrics_lines(tmp_path / "metrics")
    job_id = path.parent.name.removeprefix("gobblin.metrics.")
    assert path.name == f"gobblin.metrics.{job_id}.txt.metrics.log"
    events = [line["name"] for line in lines if line["type"] == "event"]
    assert events == ["JobStartTimer", "JobCommitTimer", "JobSucceededTimer", "FullJobExecutionTimer", "JobStateEvent"]
    metrics = {(m["name"], tuple(sorted(m["tags"]))): m["value"] for m in lines if m["type"] == "metric"}
    job_tags, dataset_tags = ("jobId", "jobName"), ("datasetUrn", "jobId", "jobName")
    task_tags = ("datasetUrn", "jobId", "jobName", "taskId")
    for tags in (job_tags, dataset_tags, task_tags):
        assert metrics[("gobblin.extractor.records.read", tags)] == 20
        assert metrics[("gobblin.writer.records.written", tags)] == 20
        assert metrics[("gobblin.writer.bytes.written", tags)] > 0
    state = next(line for line in lines if line["name"] == "JobStateEvent")["metadata"]
    assert state["jobId"] == job_id and state["jobState"] == "SUCCEEDED" and state["jobLaunchedTasks"] == 1
    succeeded = next(line for line in lines if line["name"] == "JobSucceededTimer")["metadata"]
    assert succeeded["durationMillis"] == succeeded["endTime"] - succeeded["startTime"] >= 0

    again = run_gpy_here("run", str(job), "--engine", "local")  # one file per run
    assert again.returncode == 0
    assert len(list((tmp_path / "metrics").glob("gobblin.metrics.job_Orders_*"))) == 2


def test_a_failed_run_ends_its_file_with_job_failed(tmp_path):
    job = make_job(tmp_path, "metrics.reporting.file.enabled=true", f"metrics.log.dir={tmp_path}/metrics",
                   "metrics.reporting.file.suffix=.txt")
    (tmp_path / "data" / "orders.csv").write_text("order_id,amount,ordered_at\n1,x,not a time\n")
    result = run_gpy_here("run", str(job), "--engine", "local")
    assert result.returncode == 2, result.stderr  # its event time column holds no times: a task found the input bad
    _, lines = metrics_lines(tmp_path / "metrics")
    events = [line["name"] for line in lines if line["type"] == "event"]
    assert events[0] == "JobStartTimer" and "JobFailedTimer" in events and "JobSucceededTimer" not in events
    assert "TaskFailed" in events
    failed = next(line for line in lines if line["name"] == "JobFailedTimer")["metadata"]
    assert failed["exitCode"] == result.returncode


def test_progress_is_reported_every_interval_while_the_job_runs(tmp_path):
    job = make_sequential_job(tmp_path, "metrics.reporting.file.enabled=true", f"metrics.log.dir={tmp_path}/metrics",
                              "metrics.reporting.file.suffix=txt", "metrics.report.interval=100",
                              "source.numParallelism=1", "source.numRecordsPerExtract=3",
                              "source.sleepTimePerRecordMillis=250")
    result = run_gpy_here("run", str(job), "--engine", "local")
    assert result.returncode == 0, result.stderr[-3000:]
    _, lines = metrics_lines(tmp_path / "metrics")
    progress = [line["metadata"] for line in lines if line["name"] == "JobProgress"]
    assert progress and all(p["elapsedMillis"] > 0 for p in progress)


def test_file_reporting_without_a_folder_is_a_configuration_error(tmp_path):
    job = make_job(tmp_path, "metrics.reporting.file.enabled=true")
    result = run_gpy_here("validate", str(job))
    assert result.returncode == 2
    assert "metrics.log.dir" in result.stdout + result.stderr


def test_metrics_enabled_false_writes_no_file(tmp_path):
    job = make_job(tmp_path, "metrics.enabled=false", "metrics.reporting.file.enabled=true",
                   f"metrics.log.dir={tmp_path}/metrics")
    assert run_gpy_here("run", str(job), "--engine", "local").returncode == 0
    assert not (tmp_path / "metrics").exists()


def test_validate_names_the_keys_of_reporters_gpy_does_not_have(tmp_path):
    job = make_job(tmp_path, "metrics.reporting.jmx.enabled=true", "metrics.reporting.custom.builders=com.Builder",
                   "metrics.reporting.hadoop.counters.enabled=false")
    result = run_gpy_here("validate", str(job))
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    for key in ("metrics.reporting.jmx.enabled", "metrics.reporting.custom.builders"):
        assert f"key '{key}': Gobblin's" in out, out
    assert "metrics.reporting.hadoop.counters.enabled" not in out  # switched off: nothing is lost
    strict = run_gpy_here("validate", "--strict", str(job))
    assert strict.returncode == 2 and "metrics.reporting.jmx.enabled" in strict.stdout + strict.stderr
