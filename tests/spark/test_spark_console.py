"""Spark's and the JVM's start-up noise stays off the console at the default log level; DEBUG, or a job that sets
Spark's logging itself, gets it back; real errors always come through."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys

import pytest

from gobblin_py.runtime import spark_logging
from tests.runtime.test_run_cli import Job, write_csv
from tests.conftest import run_gpy

LOG4J_WARN = re.compile(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d WARN ", re.MULTILINE)
NOISE = ("WARNING: Using incubator modules", "Using Spark's default log4j profile", "Setting default log level")


def _spark_job(tmp_path, extra: str = "") -> Job:
    job = Job(tmp_path, extra="spark.master=local[1]\n" + extra)
    write_csv(job.data / "a.csv", 1)
    return job


@pytest.mark.spark
def test_a_spark_run_at_the_default_level_prints_no_jvm_noise(tmp_path):
    job = _spark_job(tmp_path)
    result = run_gpy("run", str(job.file), "--engine", "spark")
    assert result.returncode == 0, result.stderr
    assert not LOG4J_WARN.search(result.stderr), result.stderr
    assert not any(noise in result.stderr for noise in NOISE), result.stderr
    events = [json.loads(line) for line in result.stderr.splitlines() if line.strip()]  # JSON lines, nothing else
    assert {"job_started", "dataset_committed", "job_finished"} <= {e["event"] for e in events}
    assert 'dataset "" (default): COMMITTED  tasks 1/1 committed  records extracted 40  written 40' in result.stdout


@pytest.mark.spark
def test_a_spark_run_at_debug_shows_sparks_own_warnings(tmp_path):
    job = _spark_job(tmp_path)
    result = run_gpy("--log-level", "DEBUG", "run", str(job.file), "--engine", "spark")
    assert result.returncode == 0, result.stderr
    assert LOG4J_WARN.search(result.stderr), result.stderr  # e.g. NativeCodeLoader: no native Hadoop library
    assert "Using Spark's default log4j profile" in result.stderr


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
