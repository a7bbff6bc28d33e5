"""Confluent Avro through Confluent's schema registry: reading (``CONFLUENT_AVRO`` with ``kafka.schema.registry.url``)
and writing (the Kafka writer with ``value.serializer`` Confluent's ``KafkaAvroSerializer``).

A message in Confluent's wire format is a magic byte 0, its writer schema's id (4 bytes, big-endian) and the
Avro binary record. confluent-kafka's ``SchemaRegistryClient`` talks to the registry and caches what it gets:
each schema id, and the subject's latest version, is asked for once per task.

**Reading** is Gobblin's ``KafkaDeserializerExtractor`` with its ``ConfluentKafkaSchemaRegistry``: every record
is read with one reader schema — the latest version of the topic's subject (``<topic>-value``, the suffix being
``kafka.schema_registry.confluent.schema_name_suffix``) when the task starts, or ``source.schema`` when set — so a
compatible change mid-topic (a field added with a default) gives every record the new columns and the older
records their default (null). Per batch, over the Arrow buffers with numpy: the framing check (more than 5
bytes, magic byte 0), the schema ids and the runs of consecutive messages of one id. Per record — the slow path,
forced by the format, as no vectorised Avro decoder for Arrow exists — fastavro's ``schemaless_reader`` resolves
the writer's schema into the reader's. It is the call confluent-kafka's own ``AvroDeserializer`` makes; made
directly it costs half as much per record (no per-message subject, rule and context work) and checks that
nothing is left after the record. The decoded dicts then become one Arrow batch.

Set apart as undecodable (counted, stepped over, like any source's bad values): tombstones, values without
Confluent's framing, records that do not decode. Failing the task, naming the topic, partition and offset: a
writer schema that the reader's cannot read (an incompatible change), a schema id the registry does not know,
a registry that does not answer.

**Writing**: confluent-kafka's ``AvroSerializer`` registers the batch's Avro schema under ``<topic>-value``
(``auto.register.schemas``, true by default as in Confluent's Java serializer; false: the schema must be
registered already) and frames each record, one call per record (the slow path of the writer).
"""

from __future__ import annotations

import io
import json
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from gobblin_py.connectors.kafka.deserializers import Bad, Deserializer, UnreadableMessage
from gobblin_py.connectors.kafka.settings import REGISTRY_URL_KEY, SCHEMA_KEY, KafkaSourceSettings
from gobblin_py.sdk.errors import GobblinPyError, PermanentError, UsageError

CONFLUENT_SERIALIZER = "io.confluent.kafka.serializers.KafkaAvroSerializer"
_DECODE_ERRORS = (ValueError, EOFError, IndexError, KeyError, TypeError, OverflowError)


def registry_client(url: str, cache_size: int = 1000) -> Any:
    """confluent-kafka's registry client for ``url`` (a comma list), its caches ``cache_size`` entries each."""
    try:
        from confluent_kafka.schema_registry import SchemaRegistryClient
    except ImportError as exc:
        raise UsageError(f"Confluent's schema registry needs confluent-kafka's extras ({exc}): "
                         "pip install 'gobblin_py[kafka]'") from None
    return SchemaRegistryClient({"url": url, "cache.capacity": cache_size})


def _why(exc: BaseException) -> str:
    status = getattr(exc, "http_status_code", None)
    text = getattr(exc, "error_message", None) or str(exc) or type(exc).__name__
    return f"{text} (HTTP {status})" if status and status > 0 else text


def _not_found(exc: BaseException) -> bool:
    return getattr(exc, "http_status_code", None) == 404


def _parse(text: str, where: str) -> Any:
    import fastavro

    try:
        return fastavro.parse_schema(json.loads(text), named_schemas={})
    except Exception as exc:  # noqa: BLE001 - fastavro's schema errors vary
        raise GobblinPyError(f"{where}: not a usable Avro schema ({exc})") from None


def registry_deserializer(settings: KafkaSourceSettings, topic: str) -> RegistryAvroDeserializer:
    """The ``CONFLUENT_AVRO`` decoder of a topic when ``kafka.schema.registry.url`` is set."""
    assert settings.registry_url
    return RegistryAvroDeserializer(settings.registry_url, topic + settings.subject_suffix, settings.schema,
                                    settings.registry_cache)


class RegistryAvroDeserializer(Deserializer):
    """Confluent-framed Avro records, each writer schema from the registry, all read with one reader schema."""

    def __init__(self, url: str, subject: str, reader_schema: str | None, cache_size: int) -> None:
        self.url = url
        self.subject = subject
        self.reader_text = reader_schema
        self.client = registry_client(url, cache_size)
        self.reader: Any = None
        self.reader_avro: Any = None
        self.reader_name = ""
        self._writers: dict[int, tuple[Any, Any]] = {}  # schema id → (parsed writer schema, reader or None)

    def load_schema(self, empty: bool) -> None:
        if self.schema is not None:
            return
        if self.reader_text is not None:
            text, self.reader_name = self.reader_text, SCHEMA_KEY
        elif empty:  # nothing to read: the subject is not asked for (it may not exist yet), as in Gobblin
            self.schema = pa.schema([])
            return
        else:
            try:
                latest = self.client.get_latest_version(self.subject)
            except Exception as exc:  # noqa: BLE001 - the client raises its own errors and the HTTP library's
                error = (PermanentError if _not_found(exc) else GobblinPyError)(
                    f"{REGISTRY_URL_KEY}={self.url}: the latest schema of subject {self.subject}: {_why(exc)}")
                raise error from None
            text = latest.schema.schema_str
            self.reader_name = f"subject {self.subject}'s latest schema (version {latest.version}, id {latest.schema_id})"
        from gobblin_py.formats.avro import avro_to_arrow

        avro = json.loads(text) if text else None
        if not isinstance(avro, dict) or avro.get("type") != "record":
            raise GobblinPyError(f"{self.reader_name}: not an Avro record schema, which a row needs")
        self.reader = _parse(text, self.reader_name)
        self.reader_avro = avro
        self.schema = avro_to_arrow(avro)

    def close(self) -> None:
        self.client.close()

    def _writer(self, schema_id: int, index: int) -> tuple[Any, Any]:
        known = self._writers.get(schema_id)
        if known is not None:
            return known
        try:
            schema = self.client.get_schema(schema_id)
        except Exception as exc:  # noqa: BLE001
            raise UnreadableMessage(index, f"schema id {schema_id}: {_why(exc)} ({REGISTRY_URL_KEY}={self.url})",
                                    retryable=None if not _not_found(exc) else False) from None
        if (schema.schema_type or "AVRO") != "AVRO" or schema.references:
            raise UnreadableMessage(index, f"schema id {schema_id} is not a self-contained Avro schema "
                                    f"({schema.schema_type or 'AVRO'}, {len(schema.references or [])} reference(s))")
        parsed = _parse(schema.schema_str, f"schema id {schema_id}")
        same = json.loads(schema.schema_str) == self.reader_avro  # no resolution to do
        known = self._writers[schema_id] = (parsed, None if same else self.reader)
        return known

    def decode(self, values: pa.Array) -> tuple[pa.RecordBatch, Bad]:
        from fastavro import schemaless_reader
        from fastavro.read import SchemaResolutionError

        assert self.schema is not None, "load_schema() first"
        framed, ids, bad = frames(values)
        index = np.flatnonzero(framed)
        rows: list[Any] = []
        if len(index):
            payloads = values.take(pa.array(index)).to_pylist()
            ids = ids[index]
            cuts = [0, *(np.flatnonzero(np.diff(ids)) + 1).tolist(), len(ids)]
            for start, stop in zip(cuts, cuts[1:], strict=False):  # runs of one schema id
                schema_id = int(ids[start])
                writer, reader = self._writer(schema_id, int(index[start]))
                for at in range(start, stop):
                    payload = payloads[at]
                    stream = io.BytesIO(payload)
                    stream.seek(5)
                    try:
                        record = schemaless_reader(stream, writer, reader)
                    except SchemaResolutionError as exc:
                        raise UnreadableMessage(int(index[at]), f"its writer's schema (id {schema_id}) cannot be "
                                                f"read with {self.reader_name}: {exc}") from None
                    except _DECODE_ERRORS as exc:
                        bad.append((int(index[at]), f"schema id {schema_id}: {type(exc).__name__}: {exc}"[:500]))
                        continue
                    if stream.tell() != len(payload):
                        bad.append((int(index[at]), f"{len(payload) - stream.tell()} bytes left after the record: "
                                                    f"not written with schema id {schema_id}?"))
                        continue
                    rows.append(record)
        return pa.RecordBatch.from_pylist(rows, schema=self.schema), sorted(bad)


def frames(values: pa.Array) -> tuple[np.ndarray, np.ndarray, Bad]:
    """Per value: whether it has Confluent's framing, its schema id (-1 without), and why each other one has not
    (computed over the Arrow buffers, no per-value Python but for the bad ones)."""
    if not pa.types.is_binary(values.type):
        values = values.cast(pa.binary())
    count = len(values)
    lengths = pc.fill_null(pc.binary_length(values), -1).to_numpy(zero_copy_only=False).astype(np.int64)
    offsets = np.frombuffer(values.buffers()[1], np.int32, count=count + 1, offset=4 * values.offset) \
        if count else np.zeros(1, np.int32)
    buffer = values.buffers()[2]
    data = np.frombuffer(buffer, np.uint8) if buffer is not None and buffer.size else np.zeros(0, np.uint8)
    framed = lengths > 5
    starts = np.where(framed, offsets[:-1].astype(np.int64), 0)
    if data.size:
        head = data[np.minimum(starts[:, None] + np.arange(5), data.size - 1)].astype(np.int64)
        framed &= head[:, 0] == 0
        ids = np.where(framed, (head[:, 1] << 24) | (head[:, 2] << 16) | (head[:, 3] << 8) | head[:, 4], -1)
    else:
        framed[:] = False
        ids = np.full(count, -1, np.int64)
    bad: Bad = []
    for i in np.flatnonzero(~framed).tolist():
        size = int(lengths[i])
        if size < 0:
            bad.append((i, "null value (a tombstone)"))
        elif size <= 5:
            bad.append((i, f"{size} bytes: too short for Confluent's framing (magic byte 0, a 4-byte schema id, "
                           "the record)"))
        else:
            bad.append((i, f"magic byte {int(data[starts[i]])}: not Confluent's "
                           "framing (magic byte 0, a 4-byte schema id, the record)"))
    return framed, ids, bad


class ConfluentAvroEncoder:
    """Batches into Confluent-framed Avro values for one topic, through confluent-kafka's AvroSerializer."""

    def __init__(self, url: str, topic: str, auto_register: bool, cache_size: int = 1000) -> None:
        self.url = url
        self.topic = topic
        self.auto_register = auto_register
        self.client = registry_client(url, cache_size)
        self._schema: pa.Schema | None = None
        self._serializer: Any = None
        self._rows: Any = None

    def _prepare(self, schema: pa.Schema) -> None:
        from confluent_kafka.schema_registry.avro import AvroSerializer

        from gobblin_py.formats.avro import AvroRows, arrow_to_avro
        from gobblin_py.sdk.schema_meta import avro_schema_of

        avro = avro_schema_of(schema) or arrow_to_avro(schema, self.topic)
        self._serializer = AvroSerializer(self.client, json.dumps(avro),
                                          conf={"auto.register.schemas": self.auto_register,
                                                "subject.name.strategy": lambda ctx, name: f"{ctx.topic}-value"})
        self._rows = AvroRows(schema)
        self._schema = schema

    def encode(self, batch: pa.RecordBatch) -> pa.Array:
        """The batch's records as Confluent-framed Avro values (one serializer call per record)."""
        from confluent_kafka.serialization import MessageField, SerializationContext

        if self._schema is None or not batch.schema.equals(self._schema):
            self._prepare(batch.schema)
        context = SerializationContext(self.topic, MessageField.VALUE)
        serialize = self._serializer
        try:
            return pa.array([serialize(row, context) for row in self._rows.rows(batch)], pa.binary())
        except Exception as exc:  # noqa: BLE001 - the registry's errors, the HTTP library's, the encoder's
            raise GobblinPyError(f"writer.kafka.topic={self.topic}: Confluent Avro through {self.url} (subject "
                                 f"{self.topic}-value): {_why(exc)}") from None

    def close(self) -> None:
        self.client.close()
