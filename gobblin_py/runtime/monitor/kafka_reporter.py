"""Gobblin's Kafka reporters: ``MetricReport`` records to the metrics topic, ``GobblinTrackingEvent`` records to
the events topic, each record as Gobblin's ``AvroSerializer`` writes it.

A record is the 4-byte big-endian schema version 1 (Gobblin's ``FixedSchemaVersionWriter``) followed by the
record in Avro's JSON encoding (format ``json``, Gobblin's ``KafkaReporter``/``KafkaEventReporter``) or Avro's
binary encoding (``avro``, ``KafkaAvroReporter``/``KafkaAvroEventReporter``), with Gobblin's schemas
(:data:`METRIC_REPORT`, :data:`TRACKING_EVENT`). A MetricReport's metric names are Gobblin's:
``<meter>.COUNT`` and ``<meter>.MEAN_RATE``. Sent with confluent-kafka (the ``kafka`` extra).
"""

from __future__ import annotations

import io
import json
import logging
import struct
from collections.abc import Mapping
from typing import Any

from gobblin_py.runtime.monitor.gobblin_metrics import MetricSet, TrackingEvent
from gobblin_py.runtime.monitor.gobblin_reporter_settings import KafkaReporterSettings

LIBRDKAFKA_LOG = logging.getLogger("librdkafka")  # librdkafka's own lines go through logging, not raw stderr
VERSION_PREFIX = struct.pack(">i", 1)  # FixedSchemaVersionWriter.SCHEMA_VERSION, as DataOutputStream.writeInt
# Gobblin's MetricReport.avsc and GobblinTrackingEvent.avsc (gobblin-metrics-base/src/main/avro)
METRIC_REPORT: dict[str, Any] = {
    "type": "record", "name": "MetricReport", "namespace": "org.apache.gobblin.metrics",
    "fields": [
        {"name": "tags", "type": {"type": "map", "values": "string"}},
        {"name": "timestamp", "type": "long"},
        {"name": "metrics", "type": {"type": "array", "items": {
            "type": "record", "name": "Metric",
            "fields": [{"name": "name", "type": "string"}, {"name": "value", "type": "double"}]}}},
    ],
}
TRACKING_EVENT: dict[str, Any] = {
    "type": "record", "name": "GobblinTrackingEvent", "namespace": "org.apache.gobblin.metrics",
    "fields": [
        {"name": "timestamp", "type": "long", "default": 0},
        {"name": "namespace", "type": ["string", "null"]},
        {"name": "name", "type": "string"},
        {"name": "metadata", "type": {"type": "map", "values": "string"}, "default": {}},
    ],
}


def metric_record(metrics: MetricSet) -> dict[str, Any]:
    return {"tags": dict(metrics.tags), "timestamp": metrics.timestamp_ms,
            "metrics": [{"name": name, "value": float(value)} for name, value in metrics.values("COUNT", "MEAN_RATE")]}


def event_record(event: TrackingEvent) -> dict[str, Any]:
    return {"timestamp": event.timestamp_ms, "namespace": event.namespace, "name": event.name,
            "metadata": dict(event.metadata)}


def encode(record: dict[str, Any], schema: dict[str, Any], fmt: str) -> bytes:
    """``record`` as Gobblin's serializer writes it in format ``fmt`` (json or avro), after the version prefix."""
    if fmt == "avro":
        import fastavro

        out = io.BytesIO()
        fastavro.schemaless_writer(out, fastavro.parse_schema(schema), record)
        return VERSION_PREFIX + out.getvalue()
    return VERSION_PREFIX + json.dumps(_avro_json(record, schema), separators=(",", ":")).encode()


def _avro_json(record: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """Avro's JSON encoding: a union's non-null value is wrapped as ``{"<type>": value}`` (the namespace)."""
    out = dict(record)
    for fld in schema["fields"]:
        if isinstance(fld["type"], list) and out.get(fld["name"]) is not None:
            out[fld["name"]] = {"string": out[fld["name"]]}
    return out


class KafkaSink:
    """Produces the reports to their topics; ``send`` waits for the broker's acknowledgement, at most the timeout."""

    name = "kafka"

    def __init__(self, settings: KafkaReporterSettings) -> None:
        from confluent_kafka import Producer

        self.settings = settings
        self.timeout = settings.timeout
        self.metrics_topic, self.events_topic = settings.topics
        self.metrics_format = settings.format.lower()
        self.events_format = (settings.events_format or settings.format).lower()
        ms = int(settings.timeout * 1000)
        config: dict[str, Any] = {"bootstrap.servers": settings.brokers, "message.timeout.ms": ms,
                                  "socket.timeout.ms": max(10, ms), "socket.connection.setup.timeout.ms": max(1000, ms),
                                  "logger": LIBRDKAFKA_LOG}
        config.update(settings.producer or {})
        self.producer = Producer(config)

    def send(self, metrics: list[MetricSet], events: list[TrackingEvent]) -> None:
        errors: list[str] = []

        def delivered(error: Any, _message: Any) -> None:
            if error is not None:
                errors.append(str(error))

        if self.metrics_topic:
            for metric_set in metrics:
                self.producer.produce(self.metrics_topic, encode(metric_record(metric_set), METRIC_REPORT,
                                                                 self.metrics_format), on_delivery=delivered)
        if self.events_topic:
            for tracking in events:
                self.producer.produce(self.events_topic, encode(event_record(tracking), TRACKING_EVENT,
                                                                self.events_format), on_delivery=delivered)
        left = self.producer.flush(self.timeout)
        if left:
            self.producer.purge()
            raise TimeoutError(f"{left} reports not acknowledged by {self.settings.brokers} within {self.timeout:g} s")
        if errors:
            raise OSError(f"{self.settings.brokers}: {errors[0]}")

    def close(self) -> None:
        self.producer.flush(0)


def sink_for(props: Mapping[str, str]) -> KafkaSink | None:
    """The job's Kafka sink, or None when the job does not report to Kafka."""
    settings = KafkaReporterSettings.load(props)
    return KafkaSink(settings) if settings.topics != (None, None) else None
