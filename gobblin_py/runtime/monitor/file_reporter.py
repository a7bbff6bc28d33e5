"""Gobblin's file metric reporter: one file per job run under ``metrics.log.dir``, where Gobblin puts it.

The file is ``<metrics.log.dir>/gobblin.metrics.<job id>/gobblin.metrics.<job id>[.<suffix>].metrics.log``
(Gobblin's ``GobblinMetrics`` name of a job run is ``gobblin.metrics.<job id>``), on the filesystem of
``fs.uri``. Each line is one JSON object (the docs' Monitoring page lists them)::

    {"timestamp": "...Z", "type": "event", "name": "JobSucceededTimer", "metadata": {"jobName": ..., ...}}
    {"timestamp": "...Z", "type": "metric", "name": "gobblin.writer.records.written", "value": 10,
     "tags": {"jobName": ..., "jobId": ..., "datasetUrn": ..., "taskId": ...}}

Metric names are Gobblin's (``MetricNames``: ``gobblin.extractor.records.read``, ``gobblin.writer.records.written``,
``gobblin.writer.bytes.written``), per task (``taskId`` tag), per dataset (``datasetUrn``) and for the job (neither);
events are Gobblin's timing and job events (``JobStartTimer``, ``JobCommitTimer`` per dataset, ``TaskFailed``,
``JobSucceededTimer`` / ``JobFailedTimer`` / ``JobCancelTimer``, ``FullJobExecutionTimer``, ``JobStateEvent``).
While the job runs, a ``JobProgress`` event every ``metrics.report.interval`` ms carries the elapsed time and
the tasks the driver saw finish. The file is rewritten whole at each report, so a reader never sees half a line.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping, MutableMapping
from typing import Any

from gobblin_py.io import fs as fsutil
from gobblin_py.io.contained_paths import contained_join
from gobblin_py.runtime.monitor.gobblin_metrics import (
    BYTES_WRITTEN,
    END_EVENTS,
    RECORDS_READ,
    RECORDS_WRITTEN,
    context_name,
)
from gobblin_py.runtime.monitor.report import RunInfo, RunReport
from gobblin_py.runtime.monitor.settings import MetricsSettings
from gobblin_py.sdk import logs
from gobblin_py.sdk.redact import redact_value
from gobblin_py.store.report import iso_time


def metrics_file(settings: MetricsSettings, job_id: str) -> str:
    """Where the run's metrics go: Gobblin's folder and file name for a job run."""
    name = context_name(job_id)
    suffix = settings.file_suffix.strip()
    if suffix and not suffix.startswith("."):
        suffix = "." + suffix
    return contained_join(str(settings.log_dir), name, f"{name}{suffix}.metrics.log", what="metrics.log.dir")


def _timing(start_ms: int, end_ms: int, **metadata: Any) -> dict[str, Any]:
    """A Gobblin TimingEvent's metadata: start, end and duration in milliseconds, and the event's own."""
    return {**metadata, "eventType": "timingEvent", "startTime": start_ms, "endTime": end_ms,
            "durationMillis": max(0, end_ms - start_ms)}


class FileReporter:
    """Writes one job run's metrics and events to its metrics file (a :class:`~.report.RunListener`)."""

    name = "metrics file"

    def __init__(self, settings: MetricsSettings, props: Mapping[str, str]) -> None:
        self.settings = settings
        self.fs_uri = props.get("fs.uri")
        self.lines: list[str] = []
        self.path = ""
        self.fs: Any = None
        self.tags: dict[str, str] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._finished_tasks: dict[str, int] = {}
        self._run: RunInfo | None = None

    def run_started(self, run: RunInfo) -> None:
        self._run = run
        self.path = metrics_file(self.settings, run.job_id)
        self.fs, self.path = fsutil.open_fs(self.path, self.fs_uri)
        self.tags = {"jobName": run.job, "jobId": run.job_id}
        now = int(time.time() * 1000)
        self._event("JobStartTimer", _timing(run.started_ms, now, **self.tags, jobLauncherType=run.engine))
        self._write()
        logs.add_listener(self._observe)
        self._thread = threading.Thread(target=self._report_progress, name="gpy-metrics-file", daemon=True)
        self._thread.start()

    def _observe(self, level: str, event: MutableMapping[str, Any]) -> bool:
        """Counts the tasks the driver sees finish (tasks run in this process log ``task_finished`` here)."""
        if event.get("event") == "task_finished":
            with self._lock:
                state = str(event.get("state"))
                self._finished_tasks[state] = self._finished_tasks.get(state, 0) + 1
        return False

    def _report_progress(self) -> None:
        interval = self.settings.interval_ms / 1000
        while not self._stop.wait(interval):
            run = self._run
            if run is None:
                return
            with self._lock:
                finished = dict(self._finished_tasks)
            self._event("JobProgress", {**self.tags, "elapsedMillis": int(time.time() * 1000) - run.started_ms,
                                        "tasksFinished": finished})
            try:
                self._write()
            except Exception:  # noqa: BLE001 - the final report says what went wrong, with the run's warning
                pass

    def run_finished(self, report: RunReport) -> None:
        self._stop.set()
        logs.remove_listener(self._observe)
        if self._thread is not None:
            self._thread.join(timeout=5)
        tags, end = self.tags, report.ended_ms
        for dataset in report.results:
            dataset_tags = {**tags, "datasetUrn": dataset.urn}
            for task in dataset.task_counts:
                task_tags = {**dataset_tags, "taskId": task["task"]}
                self._metric(RECORDS_READ, task["records_read"], task_tags)
                self._metric(RECORDS_WRITTEN, task["records_written"], task_tags)
                self._metric(BYTES_WRITTEN, task["bytes"], task_tags)
                if task["state"] == "FAILED":
                    self._event("TaskFailed", {**task_tags, "taskState": task["state"]})
            self._metric(RECORDS_READ, dataset.records_extracted, dataset_tags)
            self._metric(RECORDS_WRITTEN, dataset.records_written, dataset_tags)
            self._metric(BYTES_WRITTEN, dataset.bytes_written, dataset_tags)
            self._event("JobCommitTimer", _timing(dataset.started_ms or report.run.started_ms,
                                                  dataset.ended_ms or end, **dataset_tags,
                                                  datasetState=dataset.state.value, committed=dataset.persisted,
                                                  published=list(dataset.published), commits=list(dataset.commits),
                                                  error=dataset.error))
        self._metric(RECORDS_READ, report.records_read, tags)
        self._metric(RECORDS_WRITTEN, report.records_written, tags)
        self._metric(BYTES_WRITTEN, report.bytes_written, tags)
        start = report.run.started_ms
        self._event(END_EVENTS.get(report.status, "JobSucceededTimer"),
                    _timing(start, end, **tags, status=report.status, exitCode=report.exit_code, error=report.error))
        self._event("FullJobExecutionTimer", _timing(start, end, **tags, status=report.status))
        launched = sum(d.tasks for d in report.results)
        self._event("JobStateEvent", {**tags, "jobBeginTime": start, "jobEndTime": end, "jobState": report.status,
                                      "jobLaunchedTasks": launched,
                                      "jobCompletedTasks": launched - sum(d.failed_tasks for d in report.results)})
        self._write()

    def _metric(self, name: str, value: int, tags: Mapping[str, str]) -> None:
        self._line({"type": "metric", "name": name, "value": value, "tags": dict(tags)})

    def _event(self, name: str, metadata: Mapping[str, Any]) -> None:
        self._line({"type": "event", "name": name, "metadata": redact_value(dict(metadata))})  # errors: no credential

    def _line(self, record: dict[str, Any]) -> None:
        stamp = iso_time(int(time.time() * 1000))
        with self._lock:
            self.lines.append(json.dumps({"timestamp": stamp, **record}, default=str) + "\n")

    def _write(self) -> None:
        with self._lock:
            data = "".join(self.lines).encode()
        fsutil.atomic_write(self.fs, self.path, data)
