"""Confluent Avro through Confluent's schema registry: reading (``CONFLUENT_AVRO`` with ``kafka.schema.registry.url``)
and writing (the Kafka writer with ``value.serializer`` Confluent's ``KafkaAvroSerializer``).

A message in Confluent's wire format is a magic byte 0, its writer schema's id (4 bytes, big-endian) and the
Avro binary record. The registry is asked through :mod:`.registry_http`: every request ends within
``kafka.schema.registry.timeout.seconds`` (``writer.kafka.schema.registry.timeout.seconds`` for the writer),
connection and whole answer, and at once when the run is stopped. Each schema id, and the subject's latest
version, is asked for once per task.

**Reading** is Gobblin's ``KafkaDeserializerExtractor`` with its ``ConfluentKafkaSchemaRegistry``: every record
is read with one reader schema — the latest version of the topic's subject (``<topic>-value``, the suffix being
``kafka.schema_registry.confluent.schema_name_suffix``) when the task starts, or ``source.schema`` when set — so a
compatible change mid-topic (a field added with a default) gives every record the new columns and the older
records their default (null). Per batch, over the Arrow buffers with numpy: the framing check (more than 5
bytes, magic byte 0), the schema ids and the runs of consecutive messages of one id. Per record — the slow path,
forced by the format, as no vectorised Avro decoder for Arrow exists — fastavro's ``schemaless_reader`` resolves
the writer's schema into the reader's (the call confluent-kafka's own ``AvroDeserializer`` makes, without its
per-message subject, rule and context work) and checks that nothing is left after the record. The decoded
dicts then become one Arrow batch.

Set apart as undecodable (counted, stepped over, like any source's bad values): tombstones, values without
Confluent's framing, records that do not decode. Failing the task, naming the topic, partition and offset: a
writer schema that the reader's cannot read (an incompatible change), a schema id the registry does not know,
a registry that does not answer in time.

**Writing**, as Confluent's ``KafkaAvroSerializer`` does: the batch's Avro schema is registered under
``<topic>-value`` (``auto.register.schemas``, true by default; false: it is looked up, and must be registered
already), and each record is framed with its id and written by fastavro, one call per record (the slow path of
the writer).
"""

from __future__ import annotations

import io
import json
import struct
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from gobblin_py.connectors.kafka.deserializers import Bad, Deserializer, UnreadableMessage
from gobblin_py.connectors.kafka.registry_http import RegistryError, RegistryHttp, path_of
from gobblin_py.connectors.kafka.settings import (
    REGISTRY_TIMEOUT_KEY,
    REGISTRY_URL_KEY,
    SCHEMA_KEY,
    KafkaSourceSettings,
)
from gobblin_py.sdk.errors import GobblinPyError, PermanentError

_DECODE_ERRORS = (ValueError, EOFError, IndexError, KeyError, TypeError, OverflowError)


def _not_found(exc: RegistryError) -> bool:
    return exc.http_status_code == 404


def _parse(text: str, where: str) -> Any:
    import fastavro

    try:
        return fastavro.parse_schema(json.loads(text), named_schemas={})
    except Exception as exc:  # noqa: BLE001 - fastavro's schema errors vary
        raise GobblinPyError(f"{where}: not a usable Avro schema ({exc})") from None


def registry_deserializer(settings: KafkaSourceSettings, topic: str) -> RegistryAvroDeserializer:
    """The ``CONFLUENT_AVRO`` decoder of a topic when ``kafka.schema.registry.url`` is set."""
    assert settings.registry_url
    return RegistryAvroDeserializer(RegistryHttp(settings.registry_url, settings.registry_timeout_s,
                                                 REGISTRY_TIMEOUT_KEY),
                                    topic + settings.subject_suffix, settings.schema, settings.registry_cache)


class RegistryAvroDeserializer(Deserializer):
    """Confluent-framed Avro records, each writer schema from the registry, all read with one reader schema."""

    def __init__(self, registry: RegistryHttp, subject: str, reader_schema: str | None, cache_size: int) -> None:
        self.registry = registry
        self.subject = subject
        self.reader_text = reader_schema
        self.cache_size = cache_size
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
                latest = self.registry.get(path_of("subjects", self.subject, "versions", "latest"))
                text = str(latest["schema"])
            except RegistryError as exc:
                error = (PermanentError if _not_found(exc) else GobblinPyError)(
                    f"{REGISTRY_URL_KEY}: the latest schema of subject {self.subject}: {exc}")
                raise error from None
            except (TypeError, KeyError):
                raise GobblinPyError(f"{REGISTRY_URL_KEY}={self.registry.display}: the latest version of subject "
                                     f"{self.subject} holds no schema") from None
            self.reader_name = (f"subject {self.subject}'s latest schema (version {latest.get('version')}, "
                                f"id {latest.get('id')})")
        from gobblin_py.formats.avro import avro_to_arrow

        avro = json.loads(text) if text else None
        if not isinstance(avro, dict) or avro.get("type") != "record":
            raise GobblinPyError(f"{self.reader_name}: not an Avro record schema, which a row needs")
        self.reader = _parse(text, self.reader_name)
        self.reader_avro = avro
        self.schema = avro_to_arrow(avro)

    def close(self) -> None:
        self._writers.clear()

    def _writer(self, schema_id: int, index: int) -> tuple[Any, Any]:
        known = self._writers.get(schema_id)
        if known is not None:
            return known
        try:
            answer = self.registry.get(path_of("schemas", "ids", schema_id))
        except RegistryError as exc:
            raise UnreadableMessage(index, f"schema id {schema_id}: {exc} ({REGISTRY_URL_KEY})",
                                    retryable=None if not _not_found(exc) else False) from None
        answer = answer if isinstance(answer, dict) else {}
        kind, references = answer.get("schemaType") or "AVRO", answer.get("references") or []
        if kind != "AVRO" or references or not isinstance(answer.get("schema"), str):
            raise UnreadableMessage(index, f"schema id {schema_id} is not a self-contained Avro schema "
                                    f"({kind}, {len(references)} reference(s))")
        parsed = _parse(answer["schema"], f"schema id {schema_id}")
        same = json.loads(answer["schema"]) == self.reader_avro  # no resolution to do
        if len(self._writers) >= self.cache_size:  # kafka.schema.registry.max.cache.size: the oldest goes
            del self._writers[next(iter(self._writers))]
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
    """Batches into Confluent-framed Avro values for one topic: the schema registered (or looked up) under
    ``<topic>-value`` once, then a magic byte 0, its id and fastavro's record per value."""

    def __init__(self, registry: RegistryHttp, topic: str, auto_register: bool) -> None:
        self.registry = registry
        self.topic = topic
        self.auto_register = auto_register
        self._schema: pa.Schema | None = None
        self._writer_schema: Any = None
        self._header = b""
        self._rows: Any = None

    def _prepare(self, schema: pa.Schema) -> None:
        import fastavro

        from gobblin_py.formats.avro import AvroRows, arrow_to_avro
        from gobblin_py.sdk.schema_meta import avro_schema_of

        avro = avro_schema_of(schema) or arrow_to_avro(schema, self.topic)
        subject = f"{self.topic}-value"
        where = path_of("subjects", subject, "versions") if self.auto_register else path_of("subjects", subject)
        try:
            answer = self.registry.post(where, {"schema": json.dumps(avro)})
            schema_id = int(answer["id"])
        except RegistryError as exc:
            raise GobblinPyError(f"writer.kafka.topic={self.topic}: Confluent Avro (subject {subject}"
                                 f"{'' if self.auto_register else ', auto.register.schemas=false'}): {exc}") from None
        except (TypeError, KeyError, ValueError):
            raise GobblinPyError(f"writer.kafka.topic={self.topic}: the registry {self.registry.display} gave no "
                                 f"schema id for subject {subject}") from None
        self._writer_schema = fastavro.parse_schema(avro)
        self._header = struct.pack(">bI", 0, schema_id)
        self._rows = AvroRows(schema)
        self._schema = schema

    def encode(self, batch: pa.RecordBatch) -> pa.Array:
        """The batch's records as Confluent-framed Avro values (one fastavro call per record)."""
        from fastavro import schemaless_writer

        if self._schema is None or not batch.schema.equals(self._schema):
            self._prepare(batch.schema)
        values = []
        try:
            for row in self._rows.rows(batch):
                out = io.BytesIO()
                out.write(self._header)
                schemaless_writer(out, self._writer_schema, row)
                values.append(out.getvalue())
        except (ValueError, TypeError, KeyError, OverflowError) as exc:
            raise GobblinPyError(f"writer.kafka.topic={self.topic}: a record does not fit its Avro schema: "
                                 f"{exc}") from None
        return pa.array(values, pa.binary())

    def close(self) -> None:
        self._rows = None
