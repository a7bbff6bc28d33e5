"""The Kafka broker of the whole suite (a plugin of tests/conftest.py): one real Kafka-protocol broker per test
session, for the Kafka tests and the plugin contracts alike.

The broker is noida-db's single binary (installed from PyPI by the dev extra), started in the foreground on a
free loopback port with its data under a temporary directory, and stopped with SIGTERM at the end of the
session. Nothing is installed by hand; only when the package is missing are the Kafka tests skipped, saying
why. Topics are created with ``retention.ms=-1`` unless a test is about retention (the broker deletes
records by their timestamps within seconds).
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.environment import missing
from tests.support.net import free_port

QUIET = logging.getLogger("tests.librdkafka")  # the clients' connection chatter when the broker stops
QUIET.setLevel(logging.CRITICAL)


def broker_binary() -> str | None:
    """The broker executable inside the installed ``noida_db`` package (made executable), or None."""
    try:
        import noida_db
    except ImportError:
        return None
    path = Path(noida_db.__file__).parent / "noida-db"
    if not path.is_file():
        return None
    if not os.access(path, os.X_OK):
        path.chmod(path.stat().st_mode | 0o111)
    return str(path)


@dataclass
class Broker:
    """A running broker: ``bootstrap`` is ``127.0.0.1:<port>``."""

    process: subprocess.Popen
    port: int
    directory: str

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def admin(self):
        """One admin client per broker (a future outlives no client, so it is kept)."""
        if not hasattr(self, "_admin"):
            from confluent_kafka.admin import AdminClient

            self._admin = AdminClient({"bootstrap.servers": self.bootstrap, "logger": QUIET})
        return self._admin

    def create_topic(self, name: str | None = None, partitions: int = 3, **config: str) -> str:
        """A new topic (a unique name unless given), kept forever unless ``retention_ms`` says otherwise."""
        from confluent_kafka.admin import NewTopic

        name = name or f"t_{uuid.uuid4().hex[:10]}"
        settings = {"retention.ms": "-1", **{k.replace("_", "."): v for k, v in config.items()}}
        self.admin().create_topics([NewTopic(name, partitions, 1, config=settings)])[name].result(10)
        _wait(lambda: len(self.partitions(name)) == partitions, f"topic {name} to appear")
        return name

    def fresh_topic(self, name: str, partitions: int = 1) -> str:
        """Topic ``name`` empty and new: deleted first if an earlier test made it (the corpus jobs name theirs)."""
        if name in self.admin().list_topics(timeout=10).topics:
            self.admin().delete_topics([name])[name].result(10)
            _wait(lambda: name not in self.admin().list_topics(timeout=10).topics, f"topic {name} to go")
        return self.create_topic(name, partitions)

    def partitions(self, topic: str) -> list[int]:
        metadata = self.admin().list_topics(timeout=10).topics.get(topic)
        return sorted(metadata.partitions) if metadata is not None and not metadata.error else []

    def add_partitions(self, topic: str, total: int) -> None:
        from confluent_kafka.admin import NewPartitions

        for future in self.admin().create_partitions([NewPartitions(topic, total)]).values():
            future.result(10)
        _wait(lambda: len(self.partitions(topic)) == total, f"topic {topic} to have {total} partitions")

    def producer(self, **config):
        from confluent_kafka import Producer

        return Producer({"bootstrap.servers": self.bootstrap, "linger.ms": 20, "logger": QUIET, **config})

    def produce(self, topic: str, values, partition: int | None = None, keys=None, timestamp_ms: int | None = None) -> int:
        """Produce ``values`` (bytes or str), round-robin over partitions unless one is named; returns the count."""
        producer = self.producer()
        count = len(self.partitions(topic)) or 1
        for index, value in enumerate(values):
            value = value.encode() if isinstance(value, str) else value
            key = keys[index] if keys is not None else None
            target = partition if partition is not None else index % count
            while True:
                try:
                    kwargs = {"timestamp": timestamp_ms} if timestamp_ms is not None else {}
                    producer.produce(topic, value=value, key=key, partition=target, **kwargs)
                    break
                except BufferError:
                    producer.poll(0.05)
        producer.flush(30)
        return len(values)

    def end_offsets(self, topic: str) -> dict[int, int]:
        from confluent_kafka import Consumer, TopicPartition

        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": "gpy-tests", "logger": QUIET})
        try:
            return {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
                    for p in self.partitions(topic)}
        finally:
            consumer.close()

    def read_all(self, topic: str, committed_only: bool = True) -> list:
        """Every message of a topic (read_committed unless told), as confluent-kafka Messages."""
        from confluent_kafka import Consumer, TopicPartition

        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": "gpy-tests",
                             "isolation.level": "read_committed" if committed_only else "read_uncommitted",
                             "enable.auto.commit": False, "logger": QUIET})
        found = []
        try:
            for p in self.partitions(topic):
                low, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
                if low >= high:
                    continue
                consumer.assign([TopicPartition(topic, p, low)])
                deadline = time.time() + 20
                while time.time() < deadline:
                    # consume() returns once it has as many messages as asked or its timeout passed: a short
                    # timeout, so a partition read to its end is not waited on (a transaction's markers take
                    # offsets and are never returned)
                    batch = consumer.consume(10000, timeout=0.05)
                    found += [m for m in batch if m.error() is None]
                    position = consumer.position([TopicPartition(topic, p)])[0].offset
                    if position >= high:
                        break
                consumer.unassign()
        finally:
            consumer.close()
        return found


def _wait(condition, what: str, seconds: float = 10.0) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(scope="session")
def broker():
    """One Kafka-protocol broker for the whole test session."""
    binary = broker_binary()
    if binary is None:
        missing("the noida-db package (the tests' Kafka broker) is not installed: pip install -e '.[dev,kafka]'")
    try:
        import confluent_kafka  # noqa: F401
    except ImportError:
        missing("confluent-kafka is not installed: pip install -e '.[dev,kafka]'")
    directory = tempfile.mkdtemp(prefix="gpy-kafka-")
    process = None
    for _ in range(5):  # a free port may be taken between asking and binding: try another
        port = free_port()
        log = open(os.path.join(directory, "broker.log"), "ab")
        process = subprocess.Popen(
            [binary, "start", "--only", "kafka", "--host", "127.0.0.1", "--kafka-port", str(port),
             "--data-dir", os.path.join(directory, "data")],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        deadline = time.time() + 15
        while time.time() < deadline and process.poll() is None and not _listening(port):
            time.sleep(0.02)
        if process.poll() is None and _listening(port):
            break
        process.kill() if process.poll() is None else None
        process = None
    if process is None:
        text = Path(directory, "broker.log").read_text(errors="replace")[-2000:]
        shutil.rmtree(directory, ignore_errors=True)
        raise RuntimeError(f"the Kafka broker did not start: {text}")
    yield Broker(process, port, directory)
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="session")
def schema_registry():
    """One stand-in for Confluent's Schema Registry for the whole test session: the documented REST subset its
    clients call (``/schemas/ids/{id}``, ``/subjects/{s}/versions``, …), served on loopback from a thread, since no
    real registry can be installed here (see tests/kafka/registry.py)."""
    try:
        from confluent_kafka.schema_registry.avro import AvroSerializer  # noqa: F401
    except ImportError as exc:
        missing(f"confluent-kafka's schema-registry extras are not installed ({exc}): pip install -e '.[dev,kafka]'")
    from tests.kafka.registry import SchemaRegistry

    registry = SchemaRegistry()
    yield registry
    registry.close()
