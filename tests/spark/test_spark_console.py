"""Spark at a terminal: progress from executors, and the JVM's start-up noise off the console at the default log
level; DEBUG, or a job that sets Spark's logging itself, gets it back; real errors always come through."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys

import pytest
from click.testing import CliRunner

from gobblin_py.cli import main
from gobblin_py.cli.base import load_job_properties
from gobblin_py.runtime.engines import spark_logging
from gobblin_py.runtime.execute import task_progress
from gobblin_py.runtime.execute.task_progress import TaskReport
from gobblin_py.runtime.launcher import JobLauncher
from tests.support.console import summary_cells
from tests.support.jobs import Job, write_csv
from tests.support.pty_run import run_gpy_in_pty

LOG4J_WARN = re.compile(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d WARN ", re.MULTILINE)
NOISE = ("WARNING: Using incubator modules", "Using Spark's default log4j profile", "Setting default log level")


def _spark_job(tmp_path, extra: str = "") -> Job:
    job = Job(tmp_path, extra="spark.master=local[1]\n" + extra)
    write_csv(job.data / "a.csv", 1)
    return job


@pytest.mark.spark
def test_a_spark_run_at_a_terminal_shows_progress_and_the_summary_without_jvm_noise(tmp_path):
    """The one test that starts its own Spark: start-up noise is only seen where a JVM starts."""
    job = _spark_job(tmp_path)
    result = run_gpy_in_pty("run", str(job.file), "--engine", "spark")
    text = result.text
    assert result.returncode == 0, text
    assert not LOG4J_WARN.search(text), text
    assert not any(noise in text for noise in NOISE), text
    assert "work units" in text and "1/1" in text and "rows read 40" in text and "branch fork_0" in text, text
    # while the session starts the display says so, with the master, and counts the planned task already
    lines = text.splitlines()
    starting = [i for i, line in enumerate(lines) if "starting Spark (local[1])…" in line]
    assert starting and all("work units" in lines[i - 1] and "0/1" in lines[i - 1] for i in starting), text
    header = next(line for line in text.splitlines() if "rows out" in line)
    row = next(line for line in text.splitlines() if "fork_0" in line and "│" in line)
    cells = summary_cells(header, row)
    assert (cells["status"], cells["rows in"], cells["branch"], cells["rows out"]) == ("COMMITTED", "40", "fork_0", "40"), text


class _Recorder:
    """Every report as it came, and whether the engine had returned by then."""

    shows_tasks = True

    def __init__(self) -> None:
        self.reports: list[TaskReport] = []
        self.tasks = 0

    def planned(self, tasks: int) -> None:
        self.tasks += tasks

    def update(self, report: TaskReport) -> None:
        self.reports.append(report)


@pytest.mark.spark
def test_spark_executors_report_progress_to_the_driver_over_the_channel(spark, tmp_path):
    job = _spark_job(tmp_path)
    write_csv(job.data / "b.csv", 100)
    launcher = JobLauncher(load_job_properties(str(job.file), None, None), engine="spark", master="local[2]")
    recorder = _Recorder()
    task_progress.install(recorder)
    try:
        result = launcher.run()
    finally:
        task_progress.install(None)
    assert result.exit_code == 0
    assert recorder.tasks == 2
    ended: dict[str, list[TaskReport]] = {}
    for report in recorder.reports:
        if report.state is not None:
            ended.setdefault(report.task_id, []).append(report)
    assert len(ended) == 2
    # each task's end came twice: from its executor over the channel while the job ran, and from the driver once
    # the task's state came back (what a display gets when executors cannot reach the driver)
    for reports in ended.values():
        assert len(reports) == 2, reports
        assert all(r.read == 40 and r.written == {"fork_0": 40} and r.state == "SUCCESSFUL" for r in reports)


@pytest.mark.spark
def test_a_spark_run_off_a_terminal_logs_json_lines_and_the_shared_jvm_is_quiet(spark, tmp_path):
    job = _spark_job(tmp_path)
    result = CliRunner().invoke(main, ["run", str(job.file), "--engine", "spark", "--master", "local[2]"])
    assert result.exit_code == 0, result.output
    events = [json.loads(line) for line in result.stderr.splitlines() if line.strip()]  # JSON lines, nothing else
    progress = [e for e in events if e["event"] == "run_progress"][-1]
    assert (progress["work_units_done"], progress["rows_read"], progress["rows_written"]) == (1, 40, {"fork_0": 40})
    assert next(e for e in events if e["event"] == "dataset_summary")["records_written"] == 40
    if os.environ.get("GPY_LOG_LEVEL", "INFO").upper() != "DEBUG":
        # the suite's session started with gpy's quiet log4j2 configuration: errors only
        root = spark.sparkContext._jvm.org.apache.logging.log4j.LogManager.getRootLogger()
        assert str(root.getLevel().toString()) == "ERROR"


def test_the_job_takes_over_sparks_logging_with_its_own_settings(monkeypatch):
    monkeypatch.setenv("GPY_LOG_LEVEL", "INFO")
    monkeypatch.delenv("GPY_SPARK_LOG_LEVEL", raising=False)
    assert spark_logging.quiet({}) and spark_logging.spark_log_level({}) == "ERROR"
    assert not spark_logging.quiet({"spark.log.level": "INFO"})
    assert spark_logging.spark_log_level({"spark.log.level": "INFO"}) is None  # Spark applies the job's own
    own = {"spark.driver.extraJavaOptions": "-Dlog4j2.configurationFile=file:/etc/mine.properties"}
    assert not spark_logging.quiet(own) and spark_logging.spark_log_level(own) == "WARN"
    merged = spark_logging.driver_java_options({"spark.driver.extraJavaOptions": "-Xss4m"})
    assert merged.startswith("-Xss4m -Dlog4j2.configurationFile=file:") and merged.endswith("log4j2-quiet.properties")
    assert spark_logging.QUIET_CONFIG.is_file()
    monkeypatch.setenv("GPY_LOG_LEVEL", "DEBUG")
    assert not spark_logging.quiet({}) and spark_logging.spark_log_level({}) == "WARN"


def test_the_stderr_filter_drops_start_up_noise_and_passes_real_errors(monkeypatch):
    lines = [
        "WARNING: Using incubator modules: jdk.incubator.vector",
        "Setting default log level to \"WARN\".",
        "26/11/23 04:24:00 ERROR SparkContext: Error initializing SparkContext.",
        "Exception in thread \"main\" java.lang.OutOfMemoryError: Java heap space",
        "\tat org.apache.spark.SparkContext.<init>(SparkContext.scala:1)",
        '{"event": "task_finished", "level": "info"}',
    ]
    script = "import sys\n" + "".join(f"sys.stderr.write({line + chr(10)!r})\n" for line in lines)
    proc = subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE)
    captured = io.StringIO()
    monkeypatch.setattr(sys, "stderr", captured)
    reader = spark_logging.JvmStderrFilter(proc.stderr)
    reader.start()
    reader.join(timeout=60)
    proc.wait(timeout=60)
    assert captured.getvalue().splitlines() == lines[2:]


def test_at_debug_the_stderr_filter_passes_everything(monkeypatch):
    lines = ["WARNING: Using incubator modules: jdk.incubator.vector", "Using Spark's default log4j profile: x",
             "26/11/23 04:24:00 WARN NativeCodeLoader: Unable to load native-hadoop library for your platform"]
    proc = subprocess.Popen([sys.executable, "-c", f"import sys; sys.stderr.write({chr(10).join(lines) + chr(10)!r})"],
                            stderr=subprocess.PIPE)
    captured = io.StringIO()
    monkeypatch.setattr(sys, "stderr", captured)
    reader = spark_logging.JvmStderrFilter(proc.stderr, drop_noise=False)
    reader.start()
    reader.join(timeout=60)
    proc.wait(timeout=60)
    assert captured.getvalue().splitlines() == lines
