"""Message values to Arrow columns, a whole batch at a time (``kafka.deserializer.type``).

Every deserializer takes the batch's values as one binary array and returns the decoded rows as a record batch,
with the values it could not decode set apart (their index and the reason). A null value (a tombstone) is
never decodable, as in Gobblin's batch extractor.

- ``BYTE_ARRAY``: one ``value`` column, binary — no work at all;
- ``STRING``: one ``value`` column, UTF-8 checked by Arrow's cast;
- ``JSON`` (and Gobblin's ``GSON``): a column per field, parsed by Arrow's JSON reader from the values joined by
  newlines (a newline inside a message is JSON whitespace: it becomes a space first). With ``source.schema`` the
  fields and types are given; without it they are inferred (see :func:`unify`);
- ``AVRO``: Avro binary with the writer's schema in ``source.schema``; ``CONFLUENT_AVRO`` without a schema
  registry: the same behind Confluent's 5-byte header (magic byte 0 and a schema id, which is not looked up).
  fastavro decodes one record at a time: the only per-record Python of the source, unavoidable without a
  vectorised Avro decoder. ``CONFLUENT_AVRO`` with ``kafka.schema.registry.url``: see :mod:`.registry`.

A batch that fails as a whole is bisected, so finding the bad values costs a few parses per bad value, and
good values are never decoded one by one.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

from gobblin_py.connectors.kafka.raw import binary_scalar
from gobblin_py.connectors.kafka.settings import SCHEMA_KEY
from gobblin_py.formats.types import parse_type
from gobblin_py.sdk.errors import GobblinPyError, UsageError

VALUE = "value"
Bad = list[tuple[int, str]]


def bisect(values: pa.Array, parse: Callable[[pa.Array], pa.RecordBatch], offset: int = 0) -> tuple[list[pa.RecordBatch], Bad]:
    """Parse ``values`` whole; when that fails, each half, down to the single values that fail."""
    if not len(values):  # nothing to parse (a batch of tombstones only): a reader may refuse empty input
        return [], []
    try:
        return [parse(values)], []
    except (pa.ArrowException, ValueError, TypeError, EOFError, IndexError, KeyError) as exc:
        if len(values) == 1:
            return [], [(offset, _reason(exc))]
    middle = len(values) // 2
    left, bad_left = bisect(values.slice(0, middle), parse, offset)
    right, bad_right = bisect(values.slice(middle), parse, offset + middle)
    return left + right, bad_left + bad_right


def _reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".splitlines()[0][:500]


class UnreadableMessage(GobblinPyError):
    """A message that must stop the task rather than be stepped over (its writer's schema cannot be read with
    the reader's, or is unknown): ``index`` is its place in the decoded batch, which the extractor turns into
    its topic, partition and offset."""

    def __init__(self, index: int, message: str, retryable: bool | None = False) -> None:
        self.index = index
        self.retryable = retryable
        super().__init__(message)


class Deserializer:
    """Decodes a batch of message values; subclasses set :attr:`schema` (None: known only from the data)."""

    schema: pa.Schema | None = None

    def load_schema(self, empty: bool) -> None:
        """Set :attr:`schema` where it comes from elsewhere (a schema registry); ``empty``: no message to read."""

    def close(self) -> None:
        """Let go of what decoding held (a registry client's connections)."""

    def decode(self, values: pa.Array) -> tuple[pa.RecordBatch, Bad]:
        """The decoded rows (in order, bad ones left out) and the bad ones as ``(index, reason)``."""
        nulls = values.null_count
        if not nulls:
            return self._decode_all(values)
        valid = pc.is_valid(values)
        index = pc.indices_nonzero(valid)
        batch, bad = self._decode_all(values.filter(valid))
        positions = index.to_pylist() if bad else []
        bad = [(positions[i], why) for i, why in bad]
        bad += [(i, "null value (a tombstone)") for i in pc.indices_nonzero(pc.invert(valid)).to_pylist()]
        return batch, sorted(bad)

    def _decode_all(self, values: pa.Array) -> tuple[pa.RecordBatch, Bad]:
        batches, bad = bisect(values, self._parse)
        schema = self.schema if self.schema is not None else (batches[0].schema if batches else pa.schema([]))
        if not batches:
            return pa.RecordBatch.from_pylist([], schema=schema), bad
        if len(batches) == 1:
            return batches[0], bad
        combined = pa.Table.from_batches(batches, schema).combine_chunks().to_batches()
        return (combined[0] if combined else pa.RecordBatch.from_pylist([], schema=schema)), bad

    def _parse(self, values: pa.Array) -> pa.RecordBatch:
        raise NotImplementedError


class BytesDeserializer(Deserializer):
    """``BYTE_ARRAY``: the value as it is."""

    schema = pa.schema([pa.field(VALUE, pa.binary())])

    def _parse(self, values: pa.Array) -> pa.RecordBatch:
        return pa.RecordBatch.from_arrays([values], schema=self.schema)


class StringDeserializer(Deserializer):
    """``STRING``: the value as UTF-8 text (an invalid value is undecodable)."""

    schema = pa.schema([pa.field(VALUE, pa.string())])

    def _parse(self, values: pa.Array) -> pa.RecordBatch:
        return pa.RecordBatch.from_arrays([values.cast(pa.string())], schema=self.schema)


_NEWLINE, _EMPTY = binary_scalar(b"\n"), binary_scalar(b"")


def joined_lines(values: pa.Array) -> pa.Buffer:
    """The values as newline-terminated lines in one buffer (newlines inside a value become spaces)."""
    flat = pc.replace_substring(values, b"\n", b" ")
    lines = pc.binary_join_element_wise(flat, _NEWLINE, _EMPTY).cast(pa.large_binary())
    _, offsets, data = lines.buffers()
    view = memoryview(offsets).cast("q")
    start, end = view[lines.offset], view[lines.offset + len(lines)]
    return data.slice(start, end - start)


_OBJECT_START = r"^[ \t\r\n]*\{"  # JSON whitespace, then an object


class JsonDeserializer(Deserializer):
    """``JSON``: one JSON object per message, a column per field (given by ``source.schema`` or inferred)."""

    def __init__(self, schema: pa.Schema | None) -> None:
        self.schema = schema

    def with_schema(self, schema: pa.Schema) -> JsonDeserializer:
        return JsonDeserializer(schema)

    def _parse(self, values: pa.Array) -> pa.RecordBatch:
        # only objects reach Arrow's reader: a line that is not one is no row, and a first line of `null` crashes
        # pyarrow's reader (26.0) outright; bisection finds the values that are not objects
        if not pc.all(pc.match_substring_regex(values, _OBJECT_START)).as_py():
            raise ValueError("not a JSON object")
        data = joined_lines(values)
        options = pa_json.ParseOptions(explicit_schema=self.schema,
                                       unexpected_field_behavior="ignore" if self.schema is not None else "infer")
        table = pa_json.read_json(pa.BufferReader(data), parse_options=options,
                                  read_options=pa_json.ReadOptions(use_threads=False, block_size=max(1 << 20, data.size + 1)))
        if table.num_rows != len(values):  # a blank value is skipped by the reader: find it by bisection
            raise ValueError("not a JSON object")
        if self.schema is not None:
            table = table.select(self.schema.names).cast(self.schema)
        batches = table.combine_chunks().to_batches()
        if not batches and len(values):  # a table without columns keeps no rows: the messages would vanish
            raise ValueError("no field to decode into: the schema has none")
        return batches[0] if batches else pa.RecordBatch.from_pylist([], schema=table.schema)

    def infer(self, values: pa.Array) -> tuple[pa.Schema | None, Bad]:
        """The schema the decodable values of a batch suggest (None when none is decodable)."""
        valid = values.filter(pc.is_valid(values)) if values.null_count else values
        batches, bad = bisect(valid, JsonDeserializer(None)._parse)
        schemas = [b.schema for b in batches]
        if not schemas:
            return None, bad
        merged = schemas[0]
        for other in schemas[1:]:
            merged = unify(merged, other)
        return merged, bad


def unify(first: pa.Schema, second: pa.Schema) -> pa.Schema:
    """Two inferred schemas as one: new fields added, numbers widened, nested fields merged (Arrow's permissive
    promotion); where two types cannot meet, the earlier wins and values of the other kind become undecodable."""
    fields = {f.name: f for f in first}
    for field in second:
        known = fields.get(field.name)
        if known is None:
            fields[field.name] = field
            continue
        try:
            fields[field.name] = pa.unify_schemas([pa.schema([known]), pa.schema([field])],
                                                  promote_options="permissive").field(0)
        except (pa.ArrowException, TypeError):
            pass
    return pa.schema(list(fields.values()))


class AvroDeserializer(Deserializer):
    """``AVRO`` / ``CONFLUENT_AVRO``: Avro binary records of the writer's schema given in the job."""

    def __init__(self, avro_schema: dict[str, Any], confluent: bool) -> None:
        import fastavro

        from gobblin_py.formats.avro import avro_to_arrow

        self.parsed = fastavro.parse_schema(avro_schema)
        self.schema = avro_to_arrow(avro_schema)
        self.confluent = confluent
        self._read = fastavro.schemaless_reader

    def _parse(self, values: pa.Array) -> pa.RecordBatch:
        rows = []
        for raw in values.to_pylist():  # per record: fastavro has no batch decoder
            if self.confluent:
                if len(raw) < 5 or raw[0] != 0:
                    raise ValueError("not Confluent's wire format (magic byte 0 and a schema id)")
                raw = raw[5:]
            stream = io.BytesIO(raw)
            rows.append(self._read(stream, self.parsed, None))
            if stream.tell() != len(raw):
                raise ValueError(f"{len(raw) - stream.tell()} bytes left after the record: another schema?")
        return pa.RecordBatch.from_pylist(rows, schema=self.schema)


def parse_schema_text(text: str) -> pa.Schema:
    """``source.schema`` as an Arrow schema: Gobblin's column list, an Avro record schema, or ``name:type,…``."""
    stripped = text.strip()
    if stripped.startswith(("[", "{")):
        try:
            data = json.loads(stripped)
        except ValueError as exc:
            raise UsageError(f"{SCHEMA_KEY}: not JSON ({exc})") from None
        if isinstance(data, dict):
            from gobblin_py.formats.avro import avro_to_arrow

            try:
                return avro_to_arrow(data)
            except UsageError as exc:
                raise UsageError(f"{SCHEMA_KEY}: {exc}") from None
        if not isinstance(data, list):
            raise UsageError(f"{SCHEMA_KEY}: not a list of columns nor an Avro record schema")
        return pa.schema([_gobblin_column(item) for item in data])
    fields = []
    for item in _top_level_items(stripped):
        name, sep, type_text = item.partition(":")
        if not sep or not name.strip():
            raise UsageError(f"{SCHEMA_KEY}: {item.strip()!r} is not name:type (e.g. id:int64,name:string)")
        try:
            fields.append(pa.field(name.strip(), parse_type(type_text)))
        except UsageError as exc:
            raise UsageError(f"{SCHEMA_KEY}: field {name.strip()!r}: {exc}") from None
    return pa.schema(fields)


def _top_level_items(spec: str) -> list[str]:
    """``spec`` split at the commas outside brackets (``decimal(10, 2)``, ``timestamp[ms, UTC]`` stay whole)."""
    items, depth, current = [], 0, ""
    for char in spec:
        depth += char in "(["
        depth -= char in ")]"
        if char == "," and depth == 0:
            items.append(current)
            current = ""
        else:
            current += char
    return [item for item in [*items, current] if item.strip()]


_GOBBLIN_TYPES = {"string": pa.string(), "int": pa.int32(), "long": pa.int64(), "float": pa.float32(),
                  "double": pa.float64(), "boolean": pa.bool_(), "bytes": pa.binary(), "date": pa.date32(),
                  "timestamp": pa.timestamp("ms"), "time": pa.time32("ms")}


def _gobblin_column(item: Any) -> pa.Field:
    try:
        name = item["columnName"]
        kind = item["dataType"]["type"]
        if not isinstance(name, str) or not isinstance(kind, str):
            raise TypeError("a name and a type name are text")
    except (KeyError, TypeError):
        raise UsageError(f"{SCHEMA_KEY}: {json.dumps(item)[:200]} is not a column ({{\"columnName\": …, \"dataType\": "
                         "{\"type\": …}}})") from None
    if kind not in _GOBBLIN_TYPES:
        raise UsageError(f"{SCHEMA_KEY}: column {name}: type {kind!r} is not one of {', '.join(_GOBBLIN_TYPES)}")
    return pa.field(name, _GOBBLIN_TYPES[kind], nullable=bool(item.get("isNullable", True)))


def deserializer_for(kind: str, schema_text: str | None) -> Deserializer:
    """The deserializer ``kafka.deserializer.type`` names (already checked by the settings)."""
    if kind == "BYTE_ARRAY":
        return BytesDeserializer()
    if kind == "STRING":
        return StringDeserializer()
    if kind in ("JSON", "GSON"):
        return JsonDeserializer(parse_schema_text(schema_text) if schema_text else None)
    try:
        avro = json.loads(schema_text or "")
    except ValueError as exc:
        raise UsageError(f"{SCHEMA_KEY}: not an Avro schema in JSON ({exc})") from None
    try:
        return AvroDeserializer(avro, confluent=kind == "CONFLUENT_AVRO")
    except Exception as exc:  # noqa: BLE001 - fastavro's schema errors vary; ours (UsageError) get the key too
        raise UsageError(f"{SCHEMA_KEY}: not a usable Avro schema ({exc})") from None
