"""Gobblin's InfluxDB reporters: InfluxDB 1.x line protocol, written over HTTP (``/write?db=...&precision=ms``).

As Gobblin's ``InfluxDBReporter`` writes them, each metric is a measurement of its own named by its whole path,
``gobblin.metrics.<job id>[.<task id>].<meter>.count`` (an integer) and ``...<meter>.meanRate`` (a float), with
one field ``value`` at the report's time in milliseconds. Events go to ``metrics.reporting.influxdb.events.database``
as ``gobblin.metrics.<job id>[.<task id>].events.<name>`` (value 0), or one measurement per field of Gobblin's
multi-part events (``...events.JobSucceededTimer.durationMillis``, ``...events.JobStateEvent.jobState``: a
number where the value is one, else a string).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping

from gobblin_py.runtime.monitor.gobblin_metrics import MetricSet, TrackingEvent
from gobblin_py.runtime.monitor.gobblin_reporter_settings import InfluxDBReporterSettings


def _measurement(name: str) -> str:
    return name.replace("\\", "\\\\").replace(",", "\\,").replace(" ", "\\ ")


def _field(value: int | float | str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value}i"
    if isinstance(value, float):
        return repr(value)
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _event_value(name: str, text: str | None) -> int | float | str:
    if text is None:
        return 0
    try:
        return float(text)  # Gobblin's Doubles.tryParse; durationMillis is a duration in milliseconds already
    except ValueError:
        return text


def metric_lines(metrics: list[MetricSet]) -> list[str]:
    return [f"{_measurement(f'{m.path}.{name}')} value={_field(value)} {m.timestamp_ms}"
            for m in metrics if m.level != "dataset" for name, value in m.values("count", "meanRate")]


def event_lines(events: list[TrackingEvent]) -> list[str]:
    lines = []
    for event in events:
        fields = event.parts()
        if not fields:
            lines.append(f"{_measurement(event.path)} value=0i {event.timestamp_ms}")
        for name in fields:
            value = _event_value(name, event.metadata.get(name))
            lines.append(f"{_measurement(f'{event.path}.{name}')} value={_field(value)} {event.timestamp_ms}")
    return lines


class InfluxDBSink:
    """Writes metrics and events to InfluxDB's HTTP API; a write that is not answered 2xx is an error."""

    name = "influxdb"

    def __init__(self, settings: InfluxDBReporterSettings) -> None:
        self.settings = settings
        self.timeout = settings.timeout

    def send(self, metrics: list[MetricSet], events: list[TrackingEvent]) -> None:
        settings = self.settings
        if settings.metrics_enabled and metrics:
            self._write(str(settings.database), metric_lines(metrics))
        if settings.events_enabled and events:
            self._write(str(settings.events_database or settings.database), event_lines(events))

    def _write(self, database: str, lines: list[str]) -> None:
        if not lines:
            return
        import urllib.parse
        import urllib.request  # (it loads hashlib and more: only a job that reports to InfluxDB needs it)

        url = f"{str(self.settings.url).rstrip('/')}/write?" + urllib.parse.urlencode({"db": database,
                                                                                        "precision": "ms"})
        request = urllib.request.Request(url, data="\n".join(lines).encode(), method="POST")
        if self.settings.user:
            token = base64.b64encode(f"{self.settings.user}:{self.settings.password or ''}".encode()).decode()
            request.add_header("Authorization", f"Basic {token}")
        with urllib.request.urlopen(request, timeout=self.timeout) as answer:
            answer.read()

    def close(self) -> None:
        """Nothing: each write is a request of its own."""


def sink_for(props: Mapping[str, str]) -> InfluxDBSink | None:
    """The job's InfluxDB sink, or None when the job does not report to InfluxDB."""
    settings = InfluxDBReporterSettings.load(props)
    return InfluxDBSink(settings) if settings.enabled else None
