"""The keys of Gobblin's Kafka, Graphite and InfluxDB metric reporters, with Gobblin's names and defaults.

Each reporter also has a ``.timeout`` key of gpy's own: the seconds one send may take, and the most the end of a
run waits for the reporter's last report.
"""

from __future__ import annotations

from dataclasses import dataclass

from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.settings import Kind, Settings, setting

KAFKA = "metrics.reporting.kafka."
GRAPHITE = "metrics.reporting.graphite."
INFLUXDB = "metrics.reporting.influxdb."
FORMATS = ("json", "avro")
_TIMEOUT_DOC = "seconds one send to {what} may take, and the most the end of a run waits for its last report"


def _timeout(prefix: str, what: str) -> float:
    return setting(prefix + "timeout", default=5.0, minimum=0.1, maximum=300, doc=_TIMEOUT_DOC.format(what=what))


@dataclass(frozen=True)
class KafkaReporterSettings(Settings):
    """Gobblin's Kafka reporters: MetricReport records to the metrics topic, GobblinTrackingEvent records to the
    events topic, as JSON or Avro (Gobblin's schemas, each record after Gobblin's 4-byte schema version 1)."""

    enabled: bool = setting(KAFKA + "enabled", default=False, doc="report the run's metrics and events to Kafka")
    metrics_enabled: bool = setting(KAFKA + "metrics.enabled", default=True,
                                    doc="send MetricReport records (when a metrics or common topic is set)")
    events_enabled: bool = setting(KAFKA + "events.enabled", default=True,
                                   doc="send GobblinTrackingEvent records (when an events or common topic is set)")
    brokers: str | None = setting(KAFKA + "brokers", example="broker1:9092,broker2:9092",
                                  doc="the Kafka bootstrap servers the reports go to")
    topic: str | None = setting(KAFKA + "topic.common", doc="the topic of metrics and events alike")
    metrics_topic: str | None = setting(KAFKA + "topic.metrics", default_doc="metrics.reporting.kafka.topic.common",
                                        doc="the topic of the MetricReport records")
    events_topic: str | None = setting(KAFKA + "topic.events", default_doc="metrics.reporting.kafka.topic.common",
                                       doc="the topic of the GobblinTrackingEvent records")
    format: str = setting(KAFKA + "format", default="json", choices=FORMATS,
                          doc="json: Avro's JSON encoding of the record; avro: Avro's binary encoding (both after "
                              "the bytes 00 00 00 01, as Gobblin's FixedSchemaVersionWriter writes)")
    events_format: str | None = setting("metrics.reporting.events.kafka.format", choices=FORMATS,
                                        default_doc="metrics.reporting.kafka.format",
                                        doc="the format of the events, when it differs from the metrics'")
    schema_registry: bool = setting(KAFKA + "avro.use.schema.registry", default=False,
                                    doc="Gobblin's schema-registry version prefix; gpy writes the fixed version "
                                        "only, so true is refused")
    producer: dict[str, str] | None = setting(KAFKA + "config.*", kind=Kind.PREFIX,
                                              example="metrics.reporting.kafka.config.security.protocol=SSL",
                                              doc="producer settings passed on to the Kafka client (librdkafka's "
                                                  "names)")
    timeout: float = _timeout(KAFKA, "Kafka")

    @property
    def topics(self) -> tuple[str | None, str | None]:
        """The metrics topic and the events topic (None: that kind of report is not sent)."""
        if not self.enabled:
            return None, None
        metrics = (self.metrics_topic or self.topic) if self.metrics_enabled else None
        events = (self.events_topic or self.topic) if self.events_enabled else None
        return metrics, events

    def check(self) -> list[ConfigError]:
        if not self.enabled:
            return []
        errors = []
        if not self.brokers:
            errors.append(ConfigError("is not set (metrics.reporting.kafka.enabled=true needs it)",
                                      key=KAFKA + "brokers"))
        if self.topics == (None, None):
            errors.append(ConfigError("is not set: no topic to report to", key=KAFKA + "topic.common",
                                      hint="set it, or metrics.reporting.kafka.topic.metrics / .topic.events"))
        if self.schema_registry:
            errors.append(ConfigError("is not supported: reports carry Gobblin's fixed schema version",
                                      key=KAFKA + "avro.use.schema.registry", hint="set it to false"))
        return errors


@dataclass(frozen=True)
class GraphiteReporterSettings(Settings):
    """Gobblin's Graphite reporters: the plaintext protocol to carbon, metrics and events."""

    metrics_enabled: bool = setting(GRAPHITE + "metrics.enabled", default=False,
                                    doc="send the run's metrics to Graphite")
    events_enabled: bool = setting(GRAPHITE + "events.enabled", default=False,
                                   doc="send the run's events to Graphite")
    hostname: str | None = setting(GRAPHITE + "hostname", doc="the carbon host")
    port: int = setting(GRAPHITE + "port", default=2003, minimum=1, maximum=65535,
                        doc="carbon's plaintext port")
    events_port: int | None = setting(GRAPHITE + "events.port", minimum=1, maximum=65535,
                                      default_doc="metrics.reporting.graphite.port",
                                      doc="carbon's plaintext port for the events")
    prefix: str = setting(GRAPHITE + "prefix", default="",
                          doc="put before every metric and event path (PREFIX.gobblin.metrics.JOB_ID...)")
    value_as_key: bool = setting(GRAPHITE + "events.value.as.key", default=False,
                                 doc="send a job's or task's state as part of the path (...jobState.SUCCEEDED 0)")
    sending_type: str = setting(GRAPHITE + "sending.type", default="TCP", choices=("TCP", "UDP"),
                                doc="send over TCP or UDP")
    timeout: float = _timeout(GRAPHITE, "carbon")

    @property
    def enabled(self) -> bool:
        return self.metrics_enabled or self.events_enabled

    def check(self) -> list[ConfigError]:
        if self.enabled and not self.hostname:
            return [ConfigError("is not set (Graphite reporting is enabled)", key=GRAPHITE + "hostname")]
        return []


@dataclass(frozen=True)
class InfluxDBReporterSettings(Settings):
    """Gobblin's InfluxDB reporters: InfluxDB 1.x line protocol over HTTP, one measurement per metric."""

    metrics_enabled: bool = setting(INFLUXDB + "metrics.enabled", default=False,
                                    doc="send the run's metrics to InfluxDB")
    events_enabled: bool = setting(INFLUXDB + "events.enabled", default=False,
                                   doc="send the run's events to InfluxDB")
    url: str | None = setting(INFLUXDB + "url", example="http://influxdb:8086", doc="InfluxDB's HTTP address")
    database: str | None = setting(INFLUXDB + "database", doc="the database of the metrics (it must exist)")
    events_database: str | None = setting(INFLUXDB + "events.database", default_doc="metrics.reporting.influxdb"
                                          ".database", doc="the database of the events (it must exist)")
    user: str | None = setting(INFLUXDB + "user", doc="the user to write as")
    password: str | None = setting(INFLUXDB + "password", secret=True, doc="the user's password")
    sending_type: str = setting(INFLUXDB + "sending.type", default="TCP", choices=("TCP",),
                                doc="TCP: HTTP writes (Gobblin's UDP sending is not supported)")
    timeout: float = _timeout(INFLUXDB, "InfluxDB")

    @property
    def enabled(self) -> bool:
        return self.metrics_enabled or self.events_enabled

    def check(self) -> list[ConfigError]:
        if not self.enabled:
            return []
        return [ConfigError("is not set (InfluxDB reporting is enabled)", key=INFLUXDB + name)
                for name, value in (("url", self.url), ("database", self.database)) if not value]


REPORTER_SETTINGS: tuple[type[Settings], ...] = (KafkaReporterSettings, GraphiteReporterSettings,
                                                 InfluxDBReporterSettings)
