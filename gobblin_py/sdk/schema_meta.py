"""What a batch's Arrow schema carries beside its columns, in its metadata.

Gobblin passes schemas of many kinds between plugins (an Avro schema, a JSON string, a JSON array); gpy's
batches always have an Arrow schema, and these metadata keys carry the rest:

- ``avro.schema``: the Avro record schema (JSON) the rows follow — names, docs, enums, namespaces. The Avro
  writer writes it as is when its fields are the batch's columns, so an Avro-to-Avro job keeps its schema.
- ``gobblin.schema``: for *text records* (a batch with one string column, each row one record as text, like
  Gobblin's ``String`` records), the schema string the Gobblin extractor would have returned.
- ``gobblin.record.style``: how a record prints as text (``AnyToStringConverter``): ``json`` (default, Avro's
  ``toString``) or ``lombok:<Class>`` for a Java object's ``Class(a=1, b=x)``.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

AVRO_SCHEMA = b"avro.schema"
GOBBLIN_SCHEMA = b"gobblin.schema"
RECORD_STYLE = b"gobblin.record.style"
TEXT_COLUMN = "value"


def with_meta(schema: pa.Schema, **values: str | None) -> pa.Schema:
    """``schema`` with metadata keys set (``avro_schema=``, ``gobblin_schema=``, ``record_style=``); None removes."""
    names = {"avro_schema": AVRO_SCHEMA, "gobblin_schema": GOBBLIN_SCHEMA, "record_style": RECORD_STYLE}
    meta = dict(schema.metadata or {})
    for name, value in values.items():
        key = names[name]
        if value is None:
            meta.pop(key, None)
        else:
            meta[key] = value.encode("utf-8")
    return schema.with_metadata(meta)


def get_meta(schema: pa.Schema, key: bytes) -> str | None:
    value = (schema.metadata or {}).get(key)
    return value.decode("utf-8") if value is not None else None


def avro_schema_of(schema: pa.Schema) -> dict[str, Any] | None:
    """The Avro record schema a batch carries, when it is one whose fields are exactly the batch's columns."""
    text = get_meta(schema, AVRO_SCHEMA)
    if not text:
        return None
    try:
        avro = json.loads(text)
    except ValueError:
        return None
    if not isinstance(avro, dict) or avro.get("type") != "record":
        return None
    if [f.get("name") for f in avro.get("fields", [])] != schema.names:
        return None  # a converter changed the columns: the carried schema no longer describes them
    return avro


def text_schema(gobblin_schema: str | None = None, record_style: str | None = None) -> pa.Schema:
    """The schema of text records: one string column ``value``, with the Gobblin schema string beside it."""
    return with_meta(pa.schema([pa.field(TEXT_COLUMN, pa.string())]), gobblin_schema=gobblin_schema,
                     record_style=record_style)


def text_column(batch: pa.RecordBatch | pa.Schema, who: str) -> int:
    """The index of the one string column of text records; a clear error naming ``who`` otherwise."""
    schema = batch if isinstance(batch, pa.Schema) else batch.schema
    strings = [i for i, f in enumerate(schema) if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)
               or pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type)]
    if len(schema) == 1 and strings:
        return 0
    from gobblin_py.sdk.errors import UsageError

    raise UsageError(f"{who} reads text records (one string column, one record per row), but the batch has "
                     f"columns {schema.names}: put it right after a source or converter that gives text")
