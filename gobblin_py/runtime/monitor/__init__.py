"""A run's reporters: Gobblin's metrics file, Gobblin's Kafka, Graphite and InfluxDB reporters, Prometheus
(Pushgateway, node-exporter textfile), OpenLineage.

The launcher makes one :class:`~gobblin_py.runtime.monitor.report.RunMonitor` per run (:func:`monitor_for`) and
tells it when the run starts and ends; it tells each reporter the job configures. Prometheus and OpenLineage
need the ``metrics`` extra (prometheus_client, openlineage-python), Kafka the ``kafka`` extra (confluent-kafka):
a job that asks for them without it gets a warning, and its run goes on.
"""

from __future__ import annotations

from gobblin_py.runtime.monitor.report import RunInfo, RunListener, RunMonitor
from gobblin_py.runtime.monitor.settings import LineageSettings, MetricsSettings, PrometheusSettings, lineage_configured
from gobblin_py.sdk.logs import get_logger

log = get_logger(__name__)

__all__ = ["RunInfo", "RunMonitor", "monitor_for"]
_EXTRA = "pip install 'gobblin_py[metrics]'"


def monitor_for(run: RunInfo) -> RunMonitor:
    """The monitor of ``run`` with a reporter for each the job configures (none: it does nothing)."""
    props = run.props
    listeners: list[RunListener] = []
    metrics = MetricsSettings.load(props)
    if metrics.file_reporting:
        from gobblin_py.runtime.monitor.file_reporter import FileReporter

        listeners.append(FileReporter(metrics, props))
    if metrics.enabled:
        listeners += gobblin_reporters(run, metrics.interval_ms)
    prometheus = PrometheusSettings.load(props)
    if metrics.enabled and prometheus.enabled:
        try:
            import prometheus_client  # noqa: F401 - the reporter imports it when the run ends: say now it is missing

            from gobblin_py.runtime.monitor.prometheus import PrometheusReporter
        except ImportError:
            log.warning("metrics_not_sent", job=run.job, reporter="prometheus",
                        error=f"prometheus_client is not installed ({_EXTRA})")
        else:
            listeners.append(PrometheusReporter(prometheus, props))
    lineage = LineageSettings.load(props)
    if lineage_configured(lineage):
        try:
            from gobblin_py.runtime.monitor.lineage import LineageReporter
        except ImportError:
            log.warning("lineage_not_sent", job=run.job, error=f"openlineage-python is not installed ({_EXTRA})")
        else:
            try:
                listeners.append(LineageReporter(lineage, props))
            except Exception as exc:  # noqa: BLE001 - a client that cannot be configured is a warning
                log.warning("lineage_not_sent", job=run.job, error=f"{type(exc).__name__}: {exc}")
    return RunMonitor(run, listeners)


def gobblin_reporters(run: RunInfo, interval_ms: int) -> list[RunListener]:
    """A reporter for each of Gobblin's Kafka, Graphite and InfluxDB reporters the job turns on (one that cannot
    be set up is a warning naming it)."""
    from gobblin_py.runtime.monitor import graphite_reporter, influxdb_reporter, kafka_reporter
    from gobblin_py.runtime.monitor.gobblin_reporter import GobblinReporter

    reporters: list[RunListener] = []
    for name, module in (("kafka", kafka_reporter), ("graphite", graphite_reporter), ("influxdb", influxdb_reporter)):
        try:
            sink = module.sink_for(run.props)
        except ImportError as exc:
            log.warning("metrics_not_sent", job=run.job, reporter=name,
                        error=f"{exc.name} is not installed (pip install 'gobblin_py[kafka]')")
        except Exception as exc:  # noqa: BLE001 - a reporter that cannot be set up is a warning
            log.warning("metrics_not_sent", job=run.job, reporter=name, error=f"{type(exc).__name__}: {exc}")
        else:
            if sink is not None:
                reporters.append(GobblinReporter(sink, interval_ms))
    return reporters
