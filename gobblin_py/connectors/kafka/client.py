"""Talking to the brokers: consumer configuration, topic metadata and offsets, broker errors as one clear line.

confluent-kafka (librdkafka) is imported here and only here on the source side, so that a job that names no
Kafka plugin never needs the ``kafka`` extra.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from gobblin_py.connectors.kafka.settings import BROKERS_KEY, KafkaSourceSettings
from gobblin_py.sdk.errors import GobblinPyError, UsageError

LIBRDKAFKA_LOG = logging.getLogger("librdkafka")  # librdkafka's own lines go through logging, not raw stderr
INTERNAL_TOPIC_PREFIX = "__"  # Kafka's own topics (__consumer_offsets, __transaction_state)

# Gobblin's Java consumer settings that mean nothing to librdkafka: dropped rather than refused
JAVA_ONLY = ("key.deserializer", "value.deserializer", "partition.assignment.strategy", "interceptor.classes")
CONSUMER_ONLY = ("group.id", "enable.auto.commit", "auto.offset.reset", "isolation.level", "fetch.wait.max.ms",
                 "fetch.min.bytes", "fetch.max.bytes", "max.partition.fetch.bytes", "queued.max.messages.kbytes",
                 "session.timeout.ms", "enable.auto.offset.store", "enable.partition.eof")


def kafka_module() -> Any:
    """``confluent_kafka``, or a UsageError saying how to install it."""
    try:
        import confluent_kafka
    except ImportError:
        raise UsageError("the Kafka plugins need confluent-kafka: pip install 'gobblin_py[kafka]'") from None
    return confluent_kafka


def consumer_config(settings: KafkaSourceSettings) -> dict[str, Any]:
    """librdkafka consumer settings: ours, then ``gobblin.kafka.sharedConfig.*``, then ``source.kafka.consumerConfig.*``."""
    config: dict[str, Any] = {
        "bootstrap.servers": settings.bootstrap_servers,
        "group.id": settings.group_id,
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "enable.partition.eof": False,
        "auto.offset.reset": "error",  # an offset deleted under us is reported, never silently skipped
        "isolation.level": "read_committed",
        "socket.timeout.ms": settings.socket_timeout_ms,
        "fetch.wait.max.ms": min(500, settings.fetch_timeout_ms),
        "logger": LIBRDKAFKA_LOG,
    }
    for extra in (settings.shared_config or {}, settings.consumer_config or {}):
        for key, value in extra.items():
            if key not in JAVA_ONLY:
                config[key] = value
    return config


def admin_config(settings: KafkaSourceSettings) -> dict[str, Any]:
    """What the driver's admin client needs: the brokers, the timeout and the pass-through settings."""
    config: dict[str, Any] = {"bootstrap.servers": settings.bootstrap_servers,
                              "socket.timeout.ms": settings.socket_timeout_ms, "logger": LIBRDKAFKA_LOG}
    for extra in (settings.shared_config or {}, settings.consumer_config or {}):
        config.update({k: v for k, v in extra.items() if k not in JAVA_ONLY and k not in CONSUMER_ONLY})
    return config


def translate(exc: Exception, what: str, settings: KafkaSourceSettings) -> GobblinPyError:
    """A librdkafka error as one line naming ``kafka.brokers`` or the key to fix."""
    text = str(exc)
    if "No such configuration property" in text or "Invalid value" in text or "Configuration property" in text:
        return UsageError(f"source.kafka.consumerConfig: {text}; use librdkafka's configuration names")
    if "_TRANSPORT" in text or "_TIMED_OUT" in text or "_ALL_BROKERS_DOWN" in text or "timed out" in text.lower():
        return GobblinPyError(f"{BROKERS_KEY}={settings.bootstrap_servers}: no broker answered {what} within "
                              f"{settings.socket_timeout_ms / 1000:g} s ({text}); check the address and that the "
                              "brokers run")
    return GobblinPyError(f"{BROKERS_KEY}={settings.bootstrap_servers}: {what} failed: {text}")


@dataclass(frozen=True)
class PartitionInfo:
    """One partition as the metadata names it: its leader's id and ``host:port``."""

    topic: str
    partition: int
    leader_id: int
    leader: str


class BrokerClient:
    """The driver's view of the cluster while planning: topics, partitions, earliest and latest offsets."""

    def __init__(self, settings: KafkaSourceSettings) -> None:
        self.settings = settings
        kafka = kafka_module()
        from confluent_kafka.admin import AdminClient

        config = admin_config(settings)
        try:
            self.admin = AdminClient(config)
        except (kafka.KafkaException, ValueError, TypeError) as exc:
            raise translate(exc, "creating the admin client", settings) from None
        self.timeout = settings.socket_timeout_ms / 1000

    def topics(self) -> dict[str, list[PartitionInfo]]:
        """Every topic that is not Kafka's own, with its partitions; fails naming kafka.brokers if none answers."""
        kafka = kafka_module()
        try:
            metadata = self.admin.list_topics(timeout=self.timeout)
        except kafka.KafkaException as exc:
            raise translate(exc, "listing topics", self.settings) from None
        brokers = {b.id: f"{b.host}:{b.port}" for b in metadata.brokers.values()}
        found: dict[str, list[PartitionInfo]] = {}
        for name, topic in metadata.topics.items():
            if name.startswith(INTERNAL_TOPIC_PREFIX) or topic.error is not None:
                continue
            found[name] = [PartitionInfo(name, p.id, p.leader, brokers.get(p.leader, ""))
                           for p in sorted(topic.partitions.values(), key=lambda p: p.id)]
        return found

    def offsets(self, topic: str, partitions: list[int]) -> dict[int, tuple[int, int]]:
        """``{partition: (earliest, latest)}``; latest is the last stable offset (committed transactions only).

        A partition whose offsets the broker did not give is missing from the answer.
        """
        kafka = kafka_module()
        from confluent_kafka import IsolationLevel, TopicPartition
        from confluent_kafka.admin import OffsetSpec

        result: dict[int, list[int | None]] = {p: [None, None] for p in partitions}
        for index, spec in enumerate((OffsetSpec.earliest(), OffsetSpec.latest())):
            request = {TopicPartition(topic, p): spec for p in partitions}
            try:
                futures = self.admin.list_offsets(request, isolation_level=IsolationLevel.READ_COMMITTED,
                                                  request_timeout=self.timeout)
            except kafka.KafkaException as exc:
                raise translate(exc, f"listing offsets of topic {topic}", self.settings) from None
            for tp, future in futures.items():
                try:
                    result[tp.partition][index] = future.result().offset
                except kafka.KafkaException:
                    continue
        return {p: (lo, hi) for p, (lo, hi) in result.items() if lo is not None and hi is not None}


    def offsets_for_time(self, topic: str, partitions: list[int], timestamp_ms: int) -> dict[int, int]:
        """``{partition: the first offset whose timestamp is at or after the time}``; -1 when none is (past the end)."""
        kafka = kafka_module()
        from confluent_kafka import IsolationLevel, TopicPartition
        from confluent_kafka.admin import OffsetSpec

        request = {TopicPartition(topic, p): OffsetSpec.for_timestamp(timestamp_ms) for p in partitions}
        try:
            futures = self.admin.list_offsets(request, isolation_level=IsolationLevel.READ_COMMITTED,
                                              request_timeout=self.timeout)
            return {tp.partition: future.result().offset for tp, future in futures.items()}
        except kafka.KafkaException as exc:
            raise translate(exc, f"finding the offsets of topic {topic} at {timestamp_ms}", self.settings) from None

    def topic_ids(self, topics: list[str]) -> dict[str, str]:
        """``{topic: its id}`` (base64, as Kafka prints it) of those the broker names; empty when it keeps none or
        cannot say (a broker before Kafka 2.8): an id only adds evidence, so its absence fails nothing."""
        kafka = kafka_module()
        from confluent_kafka import TopicCollection

        if not topics:
            return {}
        try:
            futures = self.admin.describe_topics(TopicCollection(topics), request_timeout=self.timeout)
        except (kafka.KafkaException, NotImplementedError):
            return {}
        found = {}
        for name, future in futures.items():
            try:
                found[name] = str(future.result().topic_id)
            except kafka.KafkaException:
                continue
        return found

    def first_messages(self, topic: str, starts: dict[int, int]) -> dict[int, tuple[int, int]]:
        """``{partition: (offset, timestamp)}`` of the first committed message at or after each partition's start
        offset, read with one small fetch each; a partition with none there (its end reached, the offset out of
        range), or without an answer within the socket timeout, is left out."""
        kafka = kafka_module()
        config = consumer_config(self.settings)
        for alias in ("max.partition.fetch.bytes", "fetch.message.max.bytes"):
            config.pop(alias, None)
        config["fetch.message.max.bytes"] = 1  # a broker still sends a whole first batch: no more is needed
        config["enable.partition.eof"] = True  # a partition with nothing there says so at once
        try:
            consumer = kafka.Consumer(config)
        except (kafka.KafkaException, ValueError, TypeError) as exc:
            raise translate(exc, "creating a consumer", self.settings) from None
        found: dict[int, tuple[int, int]] = {}
        pending = set(starts)
        deadline = time.monotonic() + self.timeout
        try:
            consumer.assign([kafka.TopicPartition(topic, pid, offset) for pid, offset in starts.items()])
            while pending and time.monotonic() < deadline:
                for message in consumer.consume(len(starts), timeout=0.1):
                    pid = message.partition()
                    if pid in pending:  # its message, or its end (or an error): either way, it has answered
                        pending.discard(pid)
                        if message.error() is None:
                            found[pid] = (message.offset(), message.timestamp()[1])
        except kafka.KafkaException as exc:
            raise translate(exc, f"reading back messages of topic {topic}", self.settings) from None
        finally:
            consumer.close()
        return found
