"""A run's metrics and events as Gobblin's reporters send them: metric contexts with meters, tracking events.

Gobblin reports the meters of each metric context: the job's (``gobblin.metrics.<job id>``) and each task's
(``gobblin.metrics.<job id>.<task id>``), tagged with ``jobName``, ``jobId`` (and ``taskId``, ``datasetUrn``).
The meters are Gobblin's ``gobblin.extractor.records.read``, ``gobblin.writer.records.written`` and
``gobblin.writer.bytes.written``, each with its count and mean rate per second. Events are Gobblin's
``GobblinTrackingEvent`` (namespace ``gobblin.runtime``, a name and string metadata): the timing events carry
``eventType=timingEvent`` with ``startTime``/``endTime``/``durationMillis``, the job state event
``eventType=JobStateEvent`` with Gobblin's ``jobBeginTime``... fields.

While the run goes, :func:`progress_report` counts what the driver saw finish; at its end :func:`final_reports`
counts what each task and dataset did.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gobblin_py.runtime.monitor.report import RunInfo, RunReport
from gobblin_py.sdk.redact import redact_value

NAMESPACE = "gobblin.runtime"  # Gobblin's JobMetrics.NAMESPACE, the namespace of the job launcher's events
RECORDS_READ = "gobblin.extractor.records.read"
RECORDS_WRITTEN = "gobblin.writer.records.written"
BYTES_WRITTEN = "gobblin.writer.bytes.written"
END_EVENTS = {"FAILED": "JobFailedTimer", "STOPPED": "JobCancelTimer"}  # any other status: JobSucceededTimer
# Gobblin's MultiPartEvent: eventType → the metadata fields Graphite and InfluxDB send one by one
MULTI_PART = {
    "timingEvent": ("startTime", "endTime", "durationMillis"),
    "JobStateEvent": ("jobBeginTime", "jobEndTime", "jobLaunchedTasks", "jobCompletedTasks", "jobState"),
}


def context_name(job_id: str) -> str:
    """Gobblin's name of a job run's metric context (also the folder of its metrics file)."""
    return f"gobblin.metrics.{job_id}"


@dataclass(frozen=True)
class MetricSet:
    """The meters of one Gobblin metric context at one time: ``counts`` (meter → count) over ``seconds``."""

    path: str  # gobblin.metrics.<job id>[.<task id>]: Graphite's and InfluxDB's name prefix
    tags: dict[str, str]
    timestamp_ms: int
    seconds: float
    counts: dict[str, int]
    level: str = "job"  # job, dataset or task; Graphite and InfluxDB have no name for a dataset's context

    def values(self, count: str, mean_rate: str) -> list[tuple[str, int | float]]:
        """``(meter.<count>, count)`` and ``(meter.<mean_rate>, count per second)`` for each meter."""
        out: list[tuple[str, int | float]] = []
        for name, value in self.counts.items():
            out.append((f"{name}.{count}", value))
            out.append((f"{name}.{mean_rate}", value / self.seconds if self.seconds > 0 else 0.0))
        return out


@dataclass(frozen=True)
class TrackingEvent:
    """A Gobblin ``GobblinTrackingEvent``: a name, a time and string metadata."""

    name: str
    timestamp_ms: int
    metadata: dict[str, str] = field(default_factory=dict)
    namespace: str = NAMESPACE

    @property
    def path(self) -> str:
        """Gobblin's metric name of the event: ``gobblin.metrics.<job id>[.<task id>].events.<name>``."""
        parts = ["gobblin.metrics", self.metadata.get("jobId"), self.metadata.get("taskId"), "events", self.name]
        return ".".join(p for p in parts if p)

    def parts(self) -> tuple[str, ...]:
        """The metadata fields sent one by one to Graphite and InfluxDB (none: the event is one point)."""
        return MULTI_PART.get(self.metadata.get("eventType", ""), ())


def event(name: str, at_ms: int, metadata: Mapping[str, Any]) -> TrackingEvent:
    """A tracking event with ``metadata`` as strings (None left out, lists as JSON) and credentials masked."""
    safe = redact_value(dict(metadata))
    return TrackingEvent(name, at_ms, {k: _text(v) for k, v in safe.items() if v is not None})


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (list, dict)):
        return json.dumps(value, default=str)
    return str(value)


def timing(name: str, start_ms: int, end_ms: int, **metadata: Any) -> TrackingEvent:
    """A Gobblin TimingEvent: start, end and duration in milliseconds, with the event's own metadata."""
    return event(name, end_ms, {**metadata, "eventType": "timingEvent", "startTime": start_ms, "endTime": end_ms,
                                "durationMillis": max(0, end_ms - start_ms)})


def run_tags(run: RunInfo) -> dict[str, str]:
    return {"jobName": run.job, "jobId": run.job_id}


def start_event(run: RunInfo, now_ms: int) -> TrackingEvent:
    return timing("JobStartTimer", run.started_ms, now_ms, **run_tags(run), jobLauncherType=run.engine)


def progress_report(run: RunInfo, now_ms: int, read: int, written: int) -> MetricSet:
    """The job context's meters while the run goes: the records of the tasks the driver saw finish."""
    tags = {**run_tags(run), "metricContextName": context_name(run.job_id)}
    return MetricSet(context_name(run.job_id), tags, now_ms, max(0, now_ms - run.started_ms) / 1000,
                     {RECORDS_READ: read, RECORDS_WRITTEN: written})


def final_reports(report: RunReport) -> tuple[list[MetricSet], list[TrackingEvent]]:
    """The run's last metrics (each task's, each dataset's and the job's) and its end events."""
    run, end = report.run, report.ended_ms
    tags, base = run_tags(run), context_name(run.job_id)
    seconds = report.seconds
    metrics: list[MetricSet] = []
    events: list[TrackingEvent] = []
    for dataset in report.results:
        dataset_tags = {**tags, "datasetUrn": dataset.urn}
        for task in dataset.task_counts:
            task_tags = {**dataset_tags, "taskId": str(task["task"])}
            metrics.append(MetricSet(f"{base}.{task['task']}", {**task_tags, "metricContextName": base}, end, seconds,
                                     _counts(task["records_read"], task["records_written"], task["bytes"]), "task"))
            if task["state"] == "FAILED":
                events.append(event("TaskFailed", end, {**task_tags, "taskState": task["state"]}))
        metrics.append(MetricSet(base, {**dataset_tags, "metricContextName": base}, end, seconds,
                                 _counts(dataset.records_extracted, dataset.records_written, dataset.bytes_written),
                                 "dataset"))
        events.append(timing("JobCommitTimer", dataset.started_ms or run.started_ms, dataset.ended_ms or end,
                             **dataset_tags, datasetState=dataset.state.value, committed=dataset.persisted,
                             error=dataset.error))
    metrics.append(MetricSet(base, {**tags, "metricContextName": base}, end, seconds,
                             _counts(report.records_read, report.records_written, report.bytes_written)))
    start = run.started_ms
    events.append(timing(END_EVENTS.get(report.status, "JobSucceededTimer"), start, end, **tags,
                         status=report.status, exitCode=report.exit_code, error=report.error))
    events.append(timing("FullJobExecutionTimer", start, end, **tags, status=report.status))
    launched = sum(d.tasks for d in report.results)
    events.append(event("JobStateEvent", end, {
        **tags, "eventType": "JobStateEvent", "jobBeginTime": start, "jobEndTime": end, "jobState": report.status,
        "jobLaunchedTasks": launched, "jobCompletedTasks": launched - sum(d.failed_tasks for d in report.results)}))
    return metrics, events


def _counts(read: int, written: int, size: int) -> dict[str, int]:
    return {RECORDS_READ: int(read), RECORDS_WRITTEN: int(written), BYTES_WRITTEN: int(size)}
