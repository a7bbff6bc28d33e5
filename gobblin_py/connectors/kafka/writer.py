"""Records to a Kafka topic (Gobblin's ``KafkaDataWriterBuilder``), at least once — or exactly once.

Which record is which message: a batch of one binary or string column (or with a ``value`` column) sends that
column's values; ``writer.kafka.valueField`` names another column; with ``*`` (the default) and several
columns each row is sent as a JSON object. ``writer.kafka.keyed=true`` with ``writer.kafka.keyField`` keys
each message by that column (bytes, UTF-8 text, or the value's JSON text); otherwise messages have no key.
Keys and values are computed per batch with Arrow kernels; producing is one librdkafka call per message.

Two ways to deliver, chosen by the publisher:

- any publisher but the one below (Gobblin recommends ``NoopPublisher``): the task produces as it goes with an
  idempotent producer (``enable.idempotence=true``, ``acks=all``) and flushes before it commits; a failed
  delivery fails the task. **At least once**: a run that dies after producing and before saving its offsets
  produces those records again next run.
- ``data.publisher.type=gobblin_py.connectors.kafka.writer_commit.KafkaTransactionPublisher``: the task stages its
  records in a file; the publisher produces a dataset's files inside one Kafka transaction, in the dataset's
  exactly-once commit sequence, with a marker committed in the same transaction (see
  :mod:`gobblin_py.connectors.kafka.writer_commit`). **Exactly once** for consumers reading committed messages
  (``isolation.level=read_committed``, librdkafka's default).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.ipc as ipc

from gobblin_py.connectors.files.builder import FsDataWriterBuilder
from gobblin_py.connectors.kafka.flaky import FailingSends, FlakyKafkaProducer
from gobblin_py.connectors.kafka.writer_commit import KafkaTransactionPublisher
from gobblin_py.connectors.kafka.writer_settings import (
    JAVA_PRODUCERS,
    PRODUCER_PREFIX,
    STAGED,
    TOPIC_KEY,
    KafkaWriterSettings,
    kafka_module,
    load_settings,
    messages,
    produce_all,
)
from gobblin_py.formats.base import StagedFileWriter
from gobblin_py.sdk.contracts import CountingDataWriter, DataWriter
from gobblin_py.sdk.errors import GobblinPyError, UsageError
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.states import State

log = get_logger(__name__)

class KafkaDataWriter(CountingDataWriter):
    """Produces during the task; commit flushes and fails on failed deliveries (at least once). It counts the
    messages the broker acknowledged."""

    def __init__(self, settings: KafkaWriterSettings, fails: Callable[[bytes | None], bool] | None = None) -> None:
        kafka = kafka_module()
        self.settings = settings
        config = settings.producer_settings()
        config["on_delivery"] = self._delivered
        try:
            self.producer = kafka.Producer(config)
        except (kafka.KafkaException, ValueError, TypeError) as exc:
            raise UsageError(f"{PRODUCER_PREFIX}*: {exc}") from None
        if fails is not None:  # Gobblin's FlakyKafkaProducer: some sends fail on purpose
            self.producer = FailingSends(self.producer, fails, self._delivered)
        self.sent = self.failed = 0
        self.first_error: str | None = None
        self.encoder = settings.encoder()

    def _delivered(self, error: Any, message: Any) -> None:
        if error is None:
            self._records += 1
        else:
            self.failed += 1
            self.first_error = self.first_error or str(error)

    def write(self, batch: pa.RecordBatch) -> None:
        keys, values = messages(batch, self.settings, self.encoder)
        produce_all(self.producer, self.settings.topic, keys.to_pylist() if keys is not None else None,
                    values.to_pylist())
        self.sent += batch.num_rows
        self._check()

    def _check(self) -> None:
        if self.failed and self.failed * 100.0 > self.settings.failure_allowance * max(self.sent, 1):
            raise GobblinPyError(f"{TOPIC_KEY}={self.settings.topic}: {self.failed} of {self.sent} messages were not "
                                 f"delivered (first: {self.first_error}); writer.kafka.failureAllowancePercentage="
                                 f"{self.settings.failure_allowance:g}")

    def commit(self) -> list[str]:
        left = self.producer.flush(self.settings.commit_timeout_ms / 1000)
        if left:
            self.failed += left
            self.first_error = self.first_error or f"{left} still unacknowledged after writer.kafka.commitTimeoutMillis"
        self._check()
        if self.failed:
            log.warning("kafka_deliveries_failed", topic=self.settings.topic, failed=self.failed, sent=self.sent,
                        first=self.first_error)
        return []

    def cleanup(self) -> None:
        self.producer.flush(1)
        if self.encoder is not None:
            self.encoder.close()


class KafkaStagedWriter(StagedFileWriter):
    """Stages a task's messages (key, value) in an Arrow IPC file for the transactional publisher."""

    codecs = {"none": "none"}

    def __init__(self, fs, staging_path: str, output_path: str, schema: pa.Schema,
                 settings: KafkaWriterSettings | None = None, **kwargs: Any) -> None:
        self.settings = settings
        self.encoder = settings.encoder() if settings is not None else None
        super().__init__(fs, staging_path, output_path, schema, **kwargs)

    @classmethod
    def options(cls, settings: KafkaWriterSettings, state: State, schema: pa.Schema | None) -> dict[str, Any]:
        return {"settings": settings}

    def _open(self, sink) -> None:
        self._writer = ipc.new_stream(sink, STAGED)

    def _write(self, batch: pa.RecordBatch) -> None:
        assert self.settings is not None
        keys, values = messages(batch, self.settings, self.encoder)
        if keys is None:
            keys = pa.nulls(len(values), pa.binary())
        self._writer.write_batch(pa.RecordBatch.from_arrays([keys, values], schema=STAGED))

    def _finish(self) -> None:
        self._writer.close()
        if self.encoder is not None:
            self.encoder.close()


def transactional(state: State) -> bool:
    """Whether the job's publisher produces staged records in transactions (exactly once)."""
    from gobblin_py.sdk.plugins import resolve_class

    name = state.get_prop("data.publisher.job.type") or state.get_prop("data.publisher.type")
    if not name:
        return False
    cls = resolve_class(name, "data.publisher.type")
    return isinstance(cls, type) and issubclass(cls, KafkaTransactionPublisher)


class KafkaDataWriterBuilder(FsDataWriterBuilder):
    """Gobblin's KafkaDataWriterBuilder: produces to ``writer.kafka.topic`` (see the module for delivery)."""

    default_format = "arrows"
    settings_class = KafkaWriterSettings

    @classmethod
    def writer_for(cls, settings: Any) -> tuple[type[StagedFileWriter], str]:
        return KafkaStagedWriter, cls.default_format

    def build(self, state, schema: pa.Schema, branches: int, branch: int, writer_id: str) -> DataWriter:
        settings = load_settings(state, branches, branch)
        flaky = _flaky(settings)
        if transactional(state):
            if flaky:
                raise UsageError("writer.kafka.producerClass: FlakyKafkaProducer fails sends of a task's producer; "
                                 "KafkaTransactionPublisher produces in the publisher: name one or the other")
            return super().build(state, schema, branches, branch, writer_id)
        return KafkaDataWriter(settings, FlakyKafkaProducer.rule(state, branches, branch) if flaky else None)


def _flaky(settings: KafkaWriterSettings) -> bool:
    """Whether the producer class named is Gobblin's FlakyKafkaProducer (Kafka's own producer otherwise)."""
    from gobblin_py.sdk.plugins import resolve_class

    if not settings.producer_class or settings.producer_class in JAVA_PRODUCERS:
        return False
    cls = resolve_class(settings.producer_class, "writer.kafka.producerClass")
    if not (isinstance(cls, type) and issubclass(cls, FlakyKafkaProducer)):
        raise UsageError(f"writer.kafka.producerClass={settings.producer_class}: not a producer gpy has (Kafka's own "
                         "or Gobblin's FlakyKafkaProducer)")
    return True
