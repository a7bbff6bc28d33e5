"""Prometheus for batch jobs, the two ways Prometheus documents: a Pushgateway push when a run ends and a
node-exporter textfile, both with prometheus_client (the ``metrics`` extra).

Every run ends with a push, whether it succeeded, failed or was stopped. The group is ``job=<job.name>``;
per-dataset series carry a ``dataset`` label. A run that succeeded replaces the group (PUT); any other run only
replaces the series it sends (POST), so ``gpy_job_last_success_timestamp_seconds`` keeps the last success's
time — what an alert on stale jobs needs. The textfile (``<dir>/gpy_<job.name>.prom``, written to a temporary
file and renamed) keeps it the same way, read back from the file the last run wrote.

Each push holds every dataset the job's state store knows, not only those the run committed: a run that commits
nothing (NOTHING_NEW), fails or is stopped still sends each dataset's series, with its lag measured from this
run's end to the event time last committed, so a lag alert fires exactly when data stops arriving (a group
replaced by a run without them would lose them).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from gobblin_py.io.contained_paths import contained_join
from gobblin_py.runtime.monitor.report import STATUSES, RunInfo, RunReport, within
from gobblin_py.runtime.monitor.settings import PrometheusSettings
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.run_states import DatasetState
from gobblin_py.store import open_state_store, progress
from gobblin_py.store.store import StateStoreSettings

log = get_logger(__name__)

LAST_SUCCESS = "gpy_job_last_success_timestamp_seconds"
# name → help, for the docs' list (operating/monitoring.md, Grafana) and the registry
JOB_METRICS = {
    LAST_SUCCESS: "when the job's last successful run ended (SUCCEEDED, NOTHING_NEW or PARTIAL), epoch seconds",
    "gpy_job_last_run_timestamp_seconds": "when the job's last run ended, epoch seconds",
    "gpy_job_last_run_status": "1 for the last run's status (label status: SUCCEEDED, NOTHING_NEW, PARTIAL, "
                               "FAILED, STOPPED), 0 for the others",
    "gpy_job_last_run_exit_code": "the last run's exit code (0 ok, 1 failed, 2 configuration, 3 partial, ...)",
    "gpy_job_duration_seconds": "how long the last run took",
    "gpy_job_records_read": "records the last run read",
    "gpy_job_records_written": "records the last run wrote (committed)",
    "gpy_job_bytes_written": "bytes the last run published",
}
DATASET_METRICS = {
    "gpy_dataset_committed": "1 when the last run committed the dataset, else 0 (every dataset the job's state "
                             "store knows is sent by every run)",
    "gpy_dataset_records_read": "records the last run read of the dataset",
    "gpy_dataset_records_written": "records the last run wrote of the dataset",
    "gpy_dataset_bytes_written": "bytes the last run published of the dataset",
    "gpy_dataset_duration_seconds": "from the dataset's first task's start to the end of its commit",
    "gpy_dataset_watermark_lag_seconds": "the run's end minus the dataset's committed event time (its "
                                         "completeness watermark), for sources whose records carry a time",
}


def lag_seconds(ended_ms: int, saved: DatasetState | None) -> float | None:
    """How far behind the run's end the dataset's committed event time is (None without event times)."""
    watermark = progress.completeness(saved)
    return max(0.0, (ended_ms - watermark) / 1000) if watermark is not None else None


def known_datasets(props: Mapping[str, str], job: str) -> dict[str, DatasetState]:
    """The latest state of each dataset the job's state store holds (none without a store, or with a store that
    cannot be read: a warning, the run's own datasets are still sent)."""
    try:
        if not StateStoreSettings.load(props).enabled:
            return {}
        return open_state_store(props).get_latest_dataset_states_by_urns(job)
    except Exception as exc:  # noqa: BLE001 - metrics never fail a run
        log.warning("metrics_datasets_unknown", job=job, error=f"{type(exc).__name__}: {exc}")
        return {}


def registry_of(report: RunReport, job_label: bool, last_success: float | None,
                known: Mapping[str, DatasetState] | None = None) -> Any:
    """The run's metrics in a registry of their own; ``job_label``: each series also carries ``job`` (the
    textfile; a push gets it from its group). ``known``: the latest state of each dataset of the job's state
    store; one this run did not commit is sent as read and written nothing, its lag measured from its state."""
    from prometheus_client import CollectorRegistry, Gauge

    registry = CollectorRegistry()
    base = {"job": report.run.job} if job_label else {}

    def gauge(name: str, value: float, **labels: str) -> None:
        every = {**base, **labels}
        metric = gauges.get(name)
        if metric is None:
            help_text = JOB_METRICS.get(name) or DATASET_METRICS[name]
            metric = gauges[name] = Gauge(name, help_text, list(every), registry=registry)
        (metric.labels(**every) if every else metric).set(value)

    gauges: dict[str, Any] = {}
    ended = report.ended_ms / 1000
    success = ended if report.succeeded else last_success
    if success is not None:
        gauge(LAST_SUCCESS, success)
    gauge("gpy_job_last_run_timestamp_seconds", ended)
    for status in STATUSES:
        gauge("gpy_job_last_run_status", 1 if status == report.status else 0, status=status)
    gauge("gpy_job_last_run_exit_code", report.exit_code)
    gauge("gpy_job_duration_seconds", report.seconds)
    gauge("gpy_job_records_read", report.records_read)
    gauge("gpy_job_records_written", report.records_written)
    gauge("gpy_job_bytes_written", report.bytes_written)
    known = known or {}
    for d in report.results:
        gauge("gpy_dataset_committed", 1 if d.persisted else 0, dataset=d.urn)
        gauge("gpy_dataset_records_read", d.records_extracted, dataset=d.urn)
        gauge("gpy_dataset_records_written", d.records_written, dataset=d.urn)
        gauge("gpy_dataset_bytes_written", d.bytes_written, dataset=d.urn)
        gauge("gpy_dataset_duration_seconds", d.seconds, dataset=d.urn)
        lag = lag_seconds(report.ended_ms, d.saved if d.saved is not None else known.get(d.urn))
        if lag is not None:
            gauge("gpy_dataset_watermark_lag_seconds", lag, dataset=d.urn)
    ran = {d.urn for d in report.results}
    for urn in sorted(set(known) - ran):
        for name in ("gpy_dataset_committed", "gpy_dataset_records_read", "gpy_dataset_records_written",
                     "gpy_dataset_bytes_written", "gpy_dataset_duration_seconds"):
            gauge(name, 0, dataset=urn)
        lag = lag_seconds(report.ended_ms, known[urn])
        if lag is not None:
            gauge("gpy_dataset_watermark_lag_seconds", lag, dataset=urn)
    return registry


def previous_success(path: str, job: str) -> float | None:
    """The last success time the textfile at ``path`` holds for ``job`` (None when there is none)."""
    from prometheus_client.parser import text_string_to_metric_families

    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name == LAST_SUCCESS and sample.labels.get("job") == job:
                    return float(sample.value)
    except (OSError, ValueError):
        return None
    return None


def _gateway_url(url: str) -> str:
    return url if "://" in url else f"http://{url}"


class PrometheusReporter:
    """Pushes the run's metrics to a Pushgateway and writes the node-exporter textfile when the run ends."""

    name = "prometheus"

    def __init__(self, settings: PrometheusSettings, props: Mapping[str, str]) -> None:
        self.settings = settings
        self.props = props

    def run_started(self, run: RunInfo) -> None:
        """Nothing: a batch job reports once, at its end."""

    def run_finished(self, report: RunReport) -> None:
        problems: list[str] = []
        known = known_datasets(self.props, report.run.job)
        if self.settings.textfile_dir:
            try:
                self.write_textfile(report, known)
            except (OSError, ValueError) as exc:
                problems.append(f"textfile: {exc}")
        if self.settings.pushgateway:
            try:
                self.push(report, known)
            except (OSError, ValueError, TimeoutError) as exc:
                problems.append(f"pushgateway {self.settings.pushgateway}: {exc}")
        for problem in problems:
            log.warning("metrics_not_sent", job=report.run.job, reporter=self.name, error=problem)

    def textfile_path(self, job: str) -> str:
        return contained_join(str(self.settings.textfile_dir), f"gpy_{job}.prom",
                              what="metrics.reporting.prometheus.textfile.dir")

    def write_textfile(self, report: RunReport, known: Mapping[str, DatasetState]) -> None:
        from prometheus_client import write_to_textfile

        path = self.textfile_path(report.run.job)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        last = None if report.succeeded else previous_success(path, report.run.job)
        write_to_textfile(path, registry_of(report, True, last, known))

    def push(self, report: RunReport, known: Mapping[str, DatasetState]) -> None:
        from prometheus_client import push_to_gateway, pushadd_to_gateway

        send = push_to_gateway if report.succeeded else pushadd_to_gateway
        registry = registry_of(report, False, None, known)
        url, timeout = _gateway_url(str(self.settings.pushgateway)), self.settings.timeout
        within(timeout, "pushgateway", lambda: send(url, job=report.run.job, registry=registry, timeout=timeout))
