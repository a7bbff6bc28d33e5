"""Gobblin's Graphite reporters: the plaintext protocol (``<path> <value> <epoch seconds>\\n``) to carbon.

Metric paths are Gobblin's: ``[<prefix>.]gobblin.metrics.<job id>[.<task id>].<meter>.count`` and
``...<meter>.meanRate``. An event is ``[<prefix>.]gobblin.metrics.<job id>[.<task id>].events.<name>`` with value
0, or for Gobblin's multi-part events one path per field: a timing event's ``startTime``, ``endTime`` and
``durationMillis``; the job state event's ``jobBeginTime``, ``jobEndTime``, ``jobLaunchedTasks``,
``jobCompletedTasks`` and ``jobState`` — a state is no number, so it is sent only with
``metrics.reporting.graphite.events.value.as.key=true``, as ``...jobState.<STATE> 0``.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping

from gobblin_py.runtime.monitor.gobblin_metrics import MetricSet, TrackingEvent
from gobblin_py.runtime.monitor.gobblin_reporter_settings import GraphiteReporterSettings

_STATE_FIELDS = ("jobState", "taskWorkingState")  # what events.value.as.key puts in the path


def _number(value: str) -> str | None:
    try:
        float(value)
    except ValueError:
        return None
    return value


def metric_lines(metrics: list[MetricSet], prefix: str) -> list[str]:
    lines = []
    for metric_set in metrics:
        if metric_set.level == "dataset":
            continue
        base = ".".join(p for p in (prefix, metric_set.path) if p)
        seconds = metric_set.timestamp_ms // 1000
        lines += [f"{base}.{name} {value} {seconds}\n" for name, value in metric_set.values("count", "meanRate")]
    return lines


def event_lines(events: list[TrackingEvent], prefix: str, value_as_key: bool) -> list[str]:
    lines = []
    for event in events:
        base = ".".join(p for p in (prefix, event.path) if p)
        seconds = event.timestamp_ms // 1000
        fields = event.parts()
        if not fields:
            lines.append(f"{base} 0 {seconds}\n")
        for name in fields:
            value = event.metadata.get(name)
            if value is None:
                lines.append(f"{base}.{name} 0 {seconds}\n")
            elif name in _STATE_FIELDS:
                if value_as_key:
                    lines.append(f"{base}.{name}.{value} 0 {seconds}\n")
            elif _number(value) is not None:
                shown = str(float(value)) if name == "durationMillis" else value  # Gobblin's converted duration
                lines.append(f"{base}.{name} {shown} {seconds}\n")
    return lines


class GraphiteSink:
    """Sends metrics and events to carbon over TCP (a connection per batch) or UDP."""

    name = "graphite"

    def __init__(self, settings: GraphiteReporterSettings) -> None:
        self.settings = settings
        self.timeout = settings.timeout

    def send(self, metrics: list[MetricSet], events: list[TrackingEvent]) -> None:
        settings = self.settings
        if settings.metrics_enabled and metrics:
            self._push(settings.port, metric_lines(metrics, settings.prefix))
        if settings.events_enabled and events:
            self._push(settings.events_port or settings.port,
                       event_lines(events, settings.prefix, settings.value_as_key))

    def _push(self, port: int, lines: list[str]) -> None:
        if not lines:
            return
        host = str(self.settings.hostname)
        if self.settings.sending_type.upper() == "UDP":
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
                for line in lines:
                    udp.sendto(line.encode(), (host, port))
            return
        with socket.create_connection((host, port), timeout=self.timeout) as conn:
            conn.sendall("".join(lines).encode())

    def close(self) -> None:
        """Nothing: each batch has its own connection."""


def sink_for(props: Mapping[str, str]) -> GraphiteSink | None:
    """The job's Graphite sink, or None when the job does not report to Graphite."""
    settings = GraphiteReporterSettings.load(props)
    return GraphiteSink(settings) if settings.enabled else None
