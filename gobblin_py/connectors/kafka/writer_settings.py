"""What the Kafka writer and the transaction publisher share: the writer's keys, messages from batches, producing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from gobblin_py.formats.jsonl import json_lines, json_texts
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.settings import Context, Scope, Settings, setting

TOPIC_KEY = "writer.kafka.topic"
PRODUCER_PREFIX = "writer.kafka.producerConfig."
# Java client settings that mean nothing to librdkafka
JAVA_ONLY = ("key.serializer", "value.serializer", "kafka.schemaRegistry.switchName", "schema.registry.url",
             "auto.register.schemas")
# producer settings read by Gobblin's own producer and serializer classes, not by the Kafka client
GOBBLIN_ONLY = ("flaky.", "kafka.schemaRegistry.", "schemaRegistry.")
JAVA_PRODUCERS = ("org.apache.kafka.clients.producer.KafkaProducer", "KafkaProducer")
# value serializers: Kafka's own send the records as they are (a text or binary column, or JSON objects)
KAFKA_SERIALIZERS = tuple(f"org.apache.kafka.common.serialization.{kind}Serializer" for kind in ("String", "ByteArray"))
LI_AVRO = "org.apache.gobblin.kafka.serialize.LiAvroSerializer"
MD5_REGISTRY = "org.apache.gobblin.kafka.schemareg.ConfigDrivenMd5SchemaRegistry"
STAGED = pa.schema([("key", pa.binary()), ("value", pa.binary())])
SERIALIZER_KEY = PRODUCER_PREFIX + "value.serializer"
WRITER_REGISTRY_KEY = PRODUCER_PREFIX + "schema.registry.url"
WRITER_REGISTRY_TIMEOUT_KEY = "writer.kafka.schema.registry.timeout.seconds"
CONFLUENT_SERIALIZER = "io.confluent.kafka.serializers.KafkaAvroSerializer"


@dataclass(frozen=True)
class KafkaWriterSettings(Settings):
    """The keys of :class:`KafkaDataWriterBuilder` (``.N`` suffixed per branch when a job has several)."""

    topic: str = setting(TOPIC_KEY, required=True, scope=Scope.BRANCH, doc="the topic every record goes to")
    producer_config: dict = setting("writer.kafka.producerConfig.*", scope=Scope.BRANCH,
                                    doc="passed to the producer (librdkafka's names); bootstrap.servers is needed")
    shared_config: dict = setting("gobblin.kafka.sharedConfig.*",
                                  doc="producer settings not given under writer.kafka.producerConfig")
    keyed: bool = setting("writer.kafka.keyed", default=False, scope=Scope.BRANCH,
                          doc="key each message by writer.kafka.keyField")
    key_field: str | None = setting("writer.kafka.keyField", scope=Scope.BRANCH, doc="the column holding the key")
    value_field: str = setting("writer.kafka.valueField", default="*", scope=Scope.BRANCH,
                               doc="the column holding the value; * the whole record")
    commit_timeout_ms: int = setting("writer.kafka.commitTimeoutMillis", default=60000, minimum=1, scope=Scope.BRANCH,
                                     doc="how long a commit waits for outstanding messages to be acknowledged")
    producer_class: str | None = setting(
        "writer.kafka.producerClass", scope=Scope.BRANCH,
        doc="the producer: Kafka's own (KafkaProducer, the default) or Gobblin's FlakyKafkaProducer, which fails "
            "sends on purpose (flaky.errorType under writer.kafka.producerConfig); another class is refused")
    value_serializer: str | None = setting(
        SERIALIZER_KEY, scope=Scope.BRANCH,
        doc=f"Kafka's StringSerializer or ByteArraySerializer (the records as described above), Gobblin's "
            f"LiAvroSerializer (LinkedIn's Avro framing, with kafka.schemaRegistry.class={MD5_REGISTRY}) or "
            f"{CONFLUENT_SERIALIZER} (Confluent's Avro, framed with its schema's id in "
            "writer.kafka.producerConfig.schema.registry.url); another is refused")
    registry_url: str | None = setting(WRITER_REGISTRY_KEY, scope=Scope.BRANCH, example="http://localhost:8081",
                                       doc="Confluent's schema registry, where KafkaAvroSerializer registers the "
                                           "records' schema under <topic>-value")
    auto_register: bool = setting(PRODUCER_PREFIX + "auto.register.schemas", default=True, scope=Scope.BRANCH,
                                  doc="KafkaAvroSerializer registers the schema; false: it must be registered")
    registry_timeout_s: float = setting(WRITER_REGISTRY_TIMEOUT_KEY, default=30.0, minimum=0.001, maximum=3600,
                                        scope=Scope.BRANCH,
                                        doc="KafkaAvroSerializer: each request to the registry, connection and "
                                            "whole answer, ends within this many seconds (else the task fails "
                                            "naming the registry)")
    failure_allowance: float = setting("writer.kafka.failureAllowancePercentage", default=0.0, minimum=0,
                                       maximum=100, scope=Scope.BRANCH,
                                       doc="percent of messages whose delivery may fail before the task fails")

    def check(self) -> list:
        from gobblin_py.sdk.config_errors import ConfigError

        problems = []
        if self.keyed and not self.key_field:
            problems.append(ConfigError("writer.kafka.keyed=true needs a key column", key="writer.kafka.keyField",
                                        hint="name the column holding the message key"))
        if self.producer_class and self.producer_class not in JAVA_PRODUCERS and not self.producer_class.startswith(
                ("org.apache.gobblin.", "gobblin.")):
            problems.append(ConfigError(f"{self.producer_class}: not a producer gpy has", key="writer.kafka.producerClass",
                                        hint="leave it out (Kafka's producer) or name Gobblin's FlakyKafkaProducer"))
        serializer, registry = self.serializer, (self.producer_config or {}).get("kafka.schemaRegistry.class")
        if serializer and serializer not in (*KAFKA_SERIALIZERS, CONFLUENT_SERIALIZER) and not serializer.startswith(
                ("org.apache.gobblin.", "gobblin.")):
            problems.append(ConfigError(f"{serializer}: not a serializer gpy has", key=SERIALIZER_KEY,
                                        hint="Kafka's StringSerializer or ByteArraySerializer, Gobblin's "
                                             f"LiAvroSerializer or {CONFLUENT_SERIALIZER}"))
        if self.confluent_avro and not self.registry_url:
            problems.append(ConfigError(f"is not set ({SERIALIZER_KEY}={CONFLUENT_SERIALIZER} needs it)",
                                        key=WRITER_REGISTRY_KEY, hint="give the schema registry's URL"))
        if self.confluent_avro and self.value_field != "*":
            problems.append(ConfigError(f"{CONFLUENT_SERIALIZER} sends whole records", key="writer.kafka.valueField",
                                        hint="leave writer.kafka.valueField unset (*)"))
        key_serializer = {**(self.shared_config or {}), **(self.producer_config or {})}.get("key.serializer")
        if key_serializer and key_serializer not in KAFKA_SERIALIZERS:
            problems.append(ConfigError(f"{key_serializer}: not a key serializer gpy has", key=PRODUCER_PREFIX
                                        + "key.serializer", hint="Kafka's StringSerializer or ByteArraySerializer "
                                        "(keys are sent as text or bytes)"))
        if self.li_avro and registry != MD5_REGISTRY:
            problems.append(ConfigError(f"{registry or 'not set'}: LiAvroSerializer's schema ids come from "
                                        "ConfigDrivenMd5SchemaRegistry, the only registry gpy has",
                                        key=PRODUCER_PREFIX + "kafka.schemaRegistry.class", hint=f"set it to {MD5_REGISTRY}"))
        if "bootstrap.servers" not in {**(self.shared_config or {}), **(self.producer_config or {})}:
            problems.append(ConfigError("is not set", key=PRODUCER_PREFIX + "bootstrap.servers",
                                        hint="name the brokers to produce to (kafka.brokers is the source's)"))
        return problems

    @property
    def serializer(self) -> str | None:
        """The value serializer the job names (Java's key, per branch or shared), if any."""
        named = self.value_serializer or (self.shared_config or {}).get("value.serializer")
        return named.strip() if named else None

    @property
    def li_avro(self) -> bool:
        """Whether values are Gobblin's LinkedIn-Avro messages (LiAvroSerializer)."""
        from gobblin_py.sdk.plugins import gobblin_name

        return gobblin_name(self.serializer or "") == LI_AVRO

    @property
    def confluent_avro(self) -> bool:
        """Whether values are Confluent's Avro messages (KafkaAvroSerializer and a schema registry)."""
        return self.serializer == CONFLUENT_SERIALIZER

    def encoder(self) -> Any:
        """The Confluent Avro encoder of the records when the value serializer is Confluent's, else None."""
        if not self.confluent_avro:
            return None
        from gobblin_py.connectors.kafka.registry import ConfluentAvroEncoder
        from gobblin_py.connectors.kafka.registry_http import RegistryHttp

        assert self.registry_url
        registry = RegistryHttp(self.registry_url, self.registry_timeout_s, WRITER_REGISTRY_TIMEOUT_KEY)
        return ConfluentAvroEncoder(registry, self.topic, self.auto_register)

    def producer_settings(self) -> dict[str, Any]:
        """librdkafka producer settings: idempotent, all replicas; the job's settings win."""
        config: dict[str, Any] = {"client.id": "gobblin", "enable.idempotence": True, "acks": "all",
                                  "linger.ms": 20}
        for extra in (self.shared_config or {}, self.producer_config or {}):
            config.update({k: v for k, v in extra.items() if k not in JAVA_ONLY and not k.startswith(GOBBLIN_ONLY)})
        return config


def load_settings(state: Any, branches: int = 1, branch: int = 0) -> KafkaWriterSettings:
    return KafkaWriterSettings.load(state, Context(branches=branches, branch=branch))


def _as_bytes(column: pa.Array) -> pa.Array:
    kind = column.type
    if pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
        return column.cast(pa.binary())
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return column.cast(pa.binary())
    return pc.if_else(pc.is_valid(column), json_texts(column), pa.scalar(None, pa.large_string())).cast(pa.binary())


def messages(batch: pa.RecordBatch, settings: KafkaWriterSettings,
             encoder: Any = None) -> tuple[pa.Array | None, pa.Array]:
    """``(keys or None, values)`` of a batch as binary arrays (``encoder``: Confluent Avro values)."""
    names = batch.schema.names
    if encoder is not None:
        values = encoder.encode(batch)
    elif settings.li_avro:
        from gobblin_py.connectors.kafka.li_avro import LiAvroSerializer

        values = pa.array(LiAvroSerializer.values(batch, f"{TOPIC_KEY}={settings.topic}"), pa.binary())
    elif settings.value_field != "*":
        if settings.value_field not in names:
            raise UsageError(f"writer.kafka.valueField={settings.value_field}: no such column ({', '.join(names)})")
        values = _as_bytes(batch.column(names.index(settings.value_field)))
    elif len(names) == 1 and _is_bytes_like(batch.schema.field(0).type):
        values = _as_bytes(batch.column(0))
    elif "value" in names and _is_bytes_like(batch.schema.field("value").type):
        values = _as_bytes(batch.column(names.index("value")))
    else:
        values = pc.utf8_rtrim(json_lines(batch), characters="\n").cast(pa.binary())
    keys = None
    if settings.keyed:
        if settings.key_field not in names:
            raise UsageError(f"writer.kafka.keyField={settings.key_field}: no such column ({', '.join(names)})")
        keys = _as_bytes(batch.column(names.index(settings.key_field)))
    return keys, values


def _is_bytes_like(kind: pa.DataType) -> bool:
    return pa.types.is_binary(kind) or pa.types.is_large_binary(kind) or pa.types.is_string(kind) \
        or pa.types.is_large_string(kind)


def kafka_module() -> Any:
    try:
        import confluent_kafka
    except ImportError:
        raise UsageError("the Kafka writer needs confluent-kafka: pip install 'gobblin_py[kafka]'") from None
    return confluent_kafka


def produce_all(producer: Any, topic: str, keys: list | None, values: list) -> None:
    """Hand every message to the producer, waiting for room when its queue is full."""
    produce, poll = producer.produce, producer.poll
    for index, value in enumerate(values):
        key = keys[index] if keys is not None else None
        while True:
            try:
                produce(topic, value=value, key=key)
                break
            except BufferError:
                poll(0.05)
    poll(0)
