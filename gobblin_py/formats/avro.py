"""The Avro writer (fastavro): Arrow batches into one Avro container file, staged then committed.

Schema mapping (:func:`arrow_to_avro`, inverse :func:`avro_to_arrow`):

=============================================  =======================================================
Arrow                                          Avro
=============================================  =======================================================
nullable field                                 ``["null", T]`` with ``"default": null``
bool                                           boolean
int8/16/32, uint8/16                           int
int64, uint32, uint64 (must fit in a long)     long
float16/32, float64                            float, double
string, large_string, string_view              string
binary, large_binary, binary_view              bytes
fixed_size_binary(n)                           fixed (size n)
decimal128/256(p, s)                           bytes, logicalType decimal, precision p, scale s
date32, date64                                 int, logicalType date
time32(s/ms), time64(us/ns)                    int time-millis, long time-micros (ns must be whole µs)
timestamp(s/ms, tz)                            long timestamp-millis (an instant, UTC)
timestamp(us/ns, tz)                           long timestamp-micros (ns must be whole µs)
timestamp without tz                           long local-timestamp-millis / -micros (Avro 1.10+)
list / large_list / fixed_size_list            array (items ``["null", T]`` when nullable)
struct                                         record named ``<parent>_<field>``
map<string, V>                                 map
dictionary<V>                                  V (decoded)
=============================================  =======================================================

A batch whose schema carries an Avro record schema (metadata ``avro.schema``, see
:mod:`gobblin_py.sdk.schema_meta`) with exactly its columns is written with that schema as is: names, docs, enums
and namespaces survive an Avro-to-Avro job. A tz-aware timestamp keeps its Arrow time zone name in the extra attribute ``arrow.timezone`` (readers that
do not know it ignore it); names that are not valid Avro names are made valid (``[A-Za-z0-9_]``, not starting
with a digit) and the original kept in ``arrow.name``. Duration, interval, union and non-string-keyed maps
have no Avro form and fail the build naming the column.

Rows: temporal columns are turned into Avro's integers by Arrow casts (vectorised); the batch then becomes
Python dicts (``to_pylist``), which is what fastavro encodes. Codecs: ``writer.codec.type`` null, deflate
(level ``writer.deflate.level``, default 9, Gobblin's defaults), bzip2, xz, and snappy / zstandard / lz4 when
fastavro's optional library for them is installed (a clear error says which otherwise).
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from functools import cache
from typing import Any

import pyarrow as pa

from gobblin_py.formats.arrow_lists import rebased_offsets
from gobblin_py.formats.base import StagedFileWriter
from gobblin_py.formats.settings import WriterSettings
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.schema_meta import avro_schema_of
from gobblin_py.sdk.states import State

CODECS = {"null": "null", "none": "null", "uncompressed": "null", "deflate": "deflate", "snappy": "snappy",
          "bzip2": "bzip2", "xz": "xz", "zstandard": "zstandard", "zstd": "zstandard", "lz4": "lz4"}
DEFAULT_CODEC = "deflate"
DEFAULT_DEFLATE_LEVEL = 9
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class AvroSchemaError(UsageError):
    """An Arrow type with no Avro form (or an Avro type with no Arrow form)."""


# -- names -------------------------------------------------------------------------------------------------------

def avro_name(name: str) -> str:
    """``name`` as a valid Avro name: other characters become ``_``; a leading digit gets a ``_`` prefix."""
    if _NAME.match(name):
        return name
    cleaned = re.sub(r"[^A-Za-z0-9_]", "_", name) or "_"
    return "_" + cleaned if cleaned[0].isdigit() else cleaned


def _field_names(fields: list[pa.Field], where: str) -> list[str]:
    names = [avro_name(f.name) for f in fields]
    seen: dict[str, str] = {}
    for field, name in zip(fields, names, strict=True):
        if name in seen:
            raise AvroSchemaError(f"{where}: columns '{seen[name]}' and '{field.name}' both become the Avro name '{name}'")
        seen[name] = field.name
    return names


# -- Arrow -> Avro schema ----------------------------------------------------------------------------------------

def arrow_to_avro(schema: pa.Schema, name: str = "Record", namespace: str | None = None) -> dict[str, Any]:
    """The Avro record schema (a JSON-able dict) for an Arrow schema."""
    record: dict[str, Any] = {"type": "record", "name": avro_name(name)}
    if namespace:
        record["namespace"] = ".".join(avro_name(p) for p in namespace.split(".") if p)
    record["fields"] = _fields(list(schema), record["name"])
    return record


def _fields(fields: list[pa.Field], parent: str) -> list[dict[str, Any]]:
    out = []
    for field, name in zip(fields, _field_names(fields, parent), strict=True):
        avro_type = _type(field.type, f"{parent}_{name}", field.name)
        entry: dict[str, Any] = {"name": name}
        if field.nullable:
            entry["type"] = ["null", avro_type] if avro_type != "null" else "null"
            entry["default"] = None
        else:
            entry["type"] = avro_type
        if name != field.name:
            entry["arrow.name"] = field.name
        out.append(entry)
    return out


def _type(t: pa.DataType, path: str, column: str) -> Any:
    if pa.types.is_dictionary(t):
        return _type(t.value_type, path, column)
    if pa.types.is_null(t):
        return "null"
    if pa.types.is_boolean(t):
        return "boolean"
    if t in (pa.int8(), pa.int16(), pa.int32(), pa.uint8(), pa.uint16()):
        return "int"
    if t in (pa.int64(), pa.uint32(), pa.uint64()):
        return "long"
    if t in (pa.float16(), pa.float32()):
        return "float"
    if t == pa.float64():
        return "double"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return "string"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return "bytes"
    if pa.types.is_fixed_size_binary(t):
        return {"type": "fixed", "name": path, "size": t.byte_width}
    if pa.types.is_decimal(t):
        return {"type": "bytes", "logicalType": "decimal", "precision": t.precision, "scale": t.scale}
    if pa.types.is_date(t):
        return {"type": "int", "logicalType": "date"}
    if pa.types.is_time32(t):
        return {"type": "int", "logicalType": "time-millis"}
    if pa.types.is_time64(t):
        return {"type": "long", "logicalType": "time-micros"}
    if pa.types.is_timestamp(t):
        millis = t.unit in ("s", "ms")
        if t.tz is None:
            return {"type": "long", "logicalType": "local-timestamp-millis" if millis else "local-timestamp-micros"}
        logical: dict[str, Any] = {"type": "long", "logicalType": "timestamp-millis" if millis else "timestamp-micros"}
        if t.tz not in ("UTC", "+00:00", "Z"):
            logical["arrow.timezone"] = t.tz
        return logical
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) or pa.types.is_list_view(t):
        item = _type(t.value_type, path + "_item", column)
        return {"type": "array", "items": ["null", item] if t.value_field.nullable and item != "null" else item}
    if pa.types.is_map(t):
        if not (pa.types.is_string(t.key_type) or pa.types.is_large_string(t.key_type)):
            raise AvroSchemaError(f"column '{column}': Avro maps have string keys, not {t.key_type}")
        value = _type(t.item_type, path + "_value", column)
        return {"type": "map", "values": ["null", value] if t.item_field.nullable and value != "null" else value}
    if pa.types.is_struct(t):
        return {"type": "record", "name": path, "fields": _fields(list(t), path)}
    raise AvroSchemaError(f"column '{column}': Arrow type {t} has no Avro form (cast it first, e.g. with a converter)")


# -- Avro -> Arrow schema ----------------------------------------------------------------------------------------

def avro_to_arrow(avro: dict[str, Any] | str) -> pa.Schema:
    """The Arrow schema of an Avro record schema (the inverse of :func:`arrow_to_avro` on its image)."""
    try:
        record = json.loads(avro) if isinstance(avro, str) else avro
        if not isinstance(record, dict) or record.get("type") != "record":
            raise AvroSchemaError("an Avro schema for rows must be a record")
        named: dict[str, Any] = {}
        return pa.schema([_arrow_field(f, named, record.get("namespace")) for f in record["fields"]])
    except (KeyError, TypeError, ValueError, AttributeError, RecursionError, pa.ArrowException) as exc:
        # a malformed schema: a field without a name or type, a type of the wrong kind, an impossible size
        raise AvroSchemaError(f"not a usable Avro record schema ({type(exc).__name__}: {exc})") from None


def _arrow_field(field: dict[str, Any], named: dict[str, Any], namespace: str | None) -> pa.Field:
    t, nullable = _arrow_type_nullable(field["type"], named, namespace)
    return pa.field(field.get("arrow.name", field["name"]), t, nullable=nullable)


def _arrow_type_nullable(avro: Any, named: dict[str, Any], namespace: str | None) -> tuple[pa.DataType, bool]:
    if isinstance(avro, list):
        branches = [b for b in avro if b != "null"]
        if len(branches) == 0:
            return pa.null(), True
        if len(branches) > 1:
            raise AvroSchemaError(f"union {avro}: only [\"null\", T] unions have an Arrow form")
        return _arrow_type(branches[0], named, namespace), len(branches) < len(avro)
    t = _arrow_type(avro, named, namespace)
    return t, pa.types.is_null(t)


def _arrow_type(avro: Any, named: dict[str, Any], namespace: str | None) -> pa.DataType:
    if isinstance(avro, str):
        simple = {"null": pa.null(), "boolean": pa.bool_(), "int": pa.int32(), "long": pa.int64(),
                  "float": pa.float32(), "double": pa.float64(), "bytes": pa.binary(), "string": pa.string()}
        if avro in simple:
            return simple[avro]
        key = avro if "." in avro or not namespace else f"{namespace}.{avro}"
        if key in named or avro in named:
            return named.get(key, named.get(avro))
        raise AvroSchemaError(f"unknown Avro type {avro}")
    kind = avro.get("type")
    logical = avro.get("logicalType")
    if kind in ("int", "long", "bytes", "fixed") and logical:
        if logical == "decimal":
            precision, scale = int(avro["precision"]), int(avro.get("scale", 0))
            return pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)
        if logical == "date":
            return pa.date32()
        if logical == "time-millis":
            return pa.time32("ms")
        if logical == "time-micros":
            return pa.time64("us")
        timestamps = {"timestamp-millis": "ms", "timestamp-micros": "us", "local-timestamp-millis": "ms",
                      "local-timestamp-micros": "us"}
        if logical in timestamps:
            tz = None if logical.startswith("local-") else avro.get("arrow.timezone", "UTC")
            return pa.timestamp(timestamps[logical], tz)
    if kind in ("null", "boolean", "int", "long", "float", "double", "bytes", "string"):
        return _arrow_type(kind, named, namespace)
    if kind == "fixed":
        t = pa.binary(int(avro["size"]))
        named[avro["name"]] = t
        return t
    if kind == "enum":
        named[avro["name"]] = pa.string()
        return pa.string()
    if kind == "array":
        item, nullable = _arrow_type_nullable(avro["items"], named, namespace)
        return pa.list_(pa.field("item", item, nullable=nullable))
    if kind == "map":
        value, nullable = _arrow_type_nullable(avro["values"], named, namespace)
        return pa.map_(pa.string(), pa.field("value", value, nullable=nullable))
    if kind == "record":
        t = pa.struct([_arrow_field(f, named, avro.get("namespace", namespace)) for f in avro["fields"]])
        named[avro["name"]] = t
        return t
    raise AvroSchemaError(f"Avro type {avro} has no Arrow form")


# -- rows --------------------------------------------------------------------------------------------------------

def _ready(arr: pa.Array) -> pa.Array:
    """``arr`` with temporals as Avro's integers and dictionaries decoded, nested types rebuilt (vectorised)."""
    t = arr.type
    if pa.types.is_dictionary(t):
        return _ready(arr.dictionary_decode())
    if pa.types.is_timestamp(t):
        unit = "ms" if t.unit in ("s", "ms") else "us"
        if t.unit != unit:
            arr = arr.cast(pa.timestamp(unit, t.tz))  # safe: ns with sub-µs digits fail instead of being cut
        return arr.cast(pa.int64())
    if pa.types.is_date64(t):
        return arr.cast(pa.date32()).cast(pa.int32())
    if pa.types.is_date32(t):
        return arr.cast(pa.int32())
    if pa.types.is_time32(t):
        return (arr.cast(pa.time32("ms")) if t.unit == "s" else arr).cast(pa.int32())
    if pa.types.is_time64(t):
        return (arr.cast(pa.time64("us")) if t.unit == "ns" else arr).cast(pa.int64())
    if t == pa.float16():
        return arr.cast(pa.float32())
    if t == pa.uint64():
        return arr.cast(pa.int64())  # safe: values above 2^63-1 fail
    if pa.types.is_struct(t):
        if not _needs_ready(t) and all(_NAME.match(f.name) for f in t):
            return arr
        names = _field_names(list(t), str(t))
        children = [_ready(arr.field(i)) for i in range(t.num_fields)]
        return pa.StructArray.from_arrays(children, names=names, mask=arr.is_null() if arr.null_count else None)
    if pa.types.is_map(t):
        if not _needs_ready(t):
            return arr
        offsets, start, length = rebased_offsets(arr)
        items = _ready(arr.items.slice(start, length))
        return pa.MapArray.from_arrays(offsets, arr.keys.slice(start, length), items,
                                       type=pa.map_(t.key_field, pa.field(t.item_field.name, items.type, t.item_field.nullable)),
                                       mask=arr.is_null() if arr.null_count else None)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) or pa.types.is_list_view(t):
        if not _needs_ready(t):
            return arr
        if not pa.types.is_list(t):
            arr = arr.cast(pa.list_(t.value_field))
        offsets, start, length = rebased_offsets(arr)
        values = _ready(arr.values.slice(start, length))
        item = pa.field(t.value_field.name, values.type, t.value_field.nullable)
        return pa.ListArray.from_arrays(offsets, values, type=pa.list_(item),
                                        mask=arr.is_null() if arr.null_count else None)
    return arr


def _needs_ready(t: pa.DataType) -> bool:
    if pa.types.is_dictionary(t) or pa.types.is_temporal(t) or t in (pa.float16(), pa.uint64()):
        return True
    if pa.types.is_struct(t):
        return any(_needs_ready(f.type) or not _NAME.match(f.name) for f in t)
    if pa.types.is_map(t):
        return _needs_ready(t.item_type)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) or pa.types.is_list_view(t):
        return _needs_ready(t.value_type) or not pa.types.is_list(t)
    return False


def _map_fixer(t: pa.DataType) -> Callable[[Any], Any] | None:
    """A function turning ``to_pylist``'s ``[(key, value), ...]`` maps into dicts, or None if ``t`` has no map."""
    if pa.types.is_dictionary(t):
        return _map_fixer(t.value_type)
    if pa.types.is_map(t):
        inner = _map_fixer(t.item_type)
        if inner is None:
            return lambda v: None if v is None else dict(v)
        return lambda v: None if v is None else {k: inner(x) for k, x in v}
    if pa.types.is_struct(t):
        fixers = [(avro_name(f.name), fx) for f in t if (fx := _map_fixer(f.type)) is not None]
        if not fixers:
            return None

        def fix_struct(v: Any) -> Any:
            if v is not None:
                for name, fixer in fixers:
                    v[name] = fixer(v[name])
            return v
        return fix_struct
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) or pa.types.is_list_view(t):
        element = _map_fixer(t.value_type)
        if element is None:
            return None
        return lambda v: None if v is None else [element(x) for x in v]
    return None


class AvroRows:
    """Turns batches of one Arrow schema into the dicts fastavro writes."""

    def __init__(self, schema: pa.Schema) -> None:
        self.names = _field_names(list(schema), "record")
        self.convert = [_needs_ready(f.type) for f in schema]
        self.fixers = [(name, fixer)
                       for name, fixer in ((n, _map_fixer(f.type)) for n, f in zip(self.names, schema, strict=True))
                       if fixer is not None]

    def rows(self, batch: pa.RecordBatch) -> list[dict[str, Any]]:
        columns = [_ready(col) if convert else col for col, convert in zip(batch.columns, self.convert, strict=True)]
        rows = pa.RecordBatch.from_arrays(columns, names=self.names).to_pylist()
        if self.fixers:
            for row in rows:
                for name, fixer in self.fixers:
                    row[name] = fixer(row[name])
        return rows


# -- codecs ------------------------------------------------------------------------------------------------------

@cache
def _codec_problem(codec: str) -> str | None:
    """Why fastavro cannot write ``codec`` here (a missing optional library), or None when it can."""
    import fastavro

    try:
        fastavro.writer(io.BytesIO(), {"type": "record", "name": "probe", "fields": []}, [{}], codec=codec)
    except (ValueError, ImportError) as exc:
        return str(exc)
    return None


def avro_codec(value: str | None, level: int = DEFAULT_DEFLATE_LEVEL) -> tuple[str, int | None]:
    """``(fastavro codec, compression level)`` for ``writer.codec.type`` / ``writer.deflate.level``."""
    name = (value or DEFAULT_CODEC).strip().lower()
    if name not in CODECS:
        raise UsageError(f"writer.codec.type={value}: Avro supports {', '.join(sorted(set(CODECS)))}")
    codec = CODECS[name]
    problem = _codec_problem(codec)
    if problem is not None:
        raise UsageError(f"writer.codec.type={value}: this Python environment cannot write Avro {codec} ({problem}); "
                         f"install that library or use deflate, bzip2, xz or null")
    return codec, (level if codec == "deflate" else None)


# -- the writer --------------------------------------------------------------------------------------------------

class AvroDataWriter(StagedFileWriter):
    """Streams batches into one Avro container file (fastavro), with Gobblin's default deflate level 9."""

    codecs = CODECS
    extension = "avro"
    default_codec = DEFAULT_CODEC

    def __init__(self, fs, staging_path: str, output_path: str, schema: pa.Schema, codec: str = DEFAULT_CODEC,
                 compression_level: int | None = DEFAULT_DEFLATE_LEVEL, record_name: str = "Record",
                 namespace: str | None = None, **kwargs: Any) -> None:
        self.compression_level = compression_level if codec == "deflate" else None
        self.avro_schema = avro_schema_of(schema) or arrow_to_avro(schema, record_name, namespace)
        self._rows = AvroRows(schema)
        super().__init__(fs, staging_path, output_path, schema, codec=codec, **kwargs)

    @classmethod
    def options(cls, settings: WriterSettings, state: State, schema: pa.Schema) -> dict[str, Any]:
        codec, level = avro_codec(settings.codec, settings.deflate_level)
        record_name = state.get_prop("extract.table.name") or "Record"
        if schema is not None and avro_schema_of(schema) is None:
            arrow_to_avro(schema, record_name)  # fail the build, not the first write, on a type Avro cannot hold
        return {"codec": codec, "compression_level": level, "record_name": record_name,
                "namespace": state.get_prop("extract.namespace") or None}

    def _open(self, sink) -> None:
        from fastavro import parse_schema
        from fastavro.write import Writer

        parse_schema(self.avro_schema)  # checks it; the file's header then holds the schema as given
        self._writer = Writer(sink, self.avro_schema, codec=self.codec,
                              compression_level=self.compression_level)

    def _write(self, batch: pa.RecordBatch) -> None:
        write = self._writer.write
        for row in self._rows.rows(batch):
            write(row)

    def _finish(self) -> None:
        self._writer.flush()


__all__ = ["AvroDataWriter", "AvroRows", "AvroSchemaError", "arrow_to_avro", "avro_codec", "avro_name",
           "avro_to_arrow"]
