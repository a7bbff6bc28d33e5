"""Message values to Arrow columns, batch at a time; bad values set apart with their index and reason."""

from __future__ import annotations

import io
import struct

import fastavro
import pyarrow as pa
import pytest

from gobblin_py.sdk.errors import UsageError
from gobblin_py.connectors.kafka.deserializers import deserializer_for, parse_schema_text

AVRO = {"type": "record", "name": "Order", "fields": [{"name": "id", "type": "long"},
                                                     {"name": "note", "type": ["null", "string"]}]}


def avro(record: dict, confluent: bool = False) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(AVRO), record)
    return (b"\x00" + struct.pack(">i", 7) if confluent else b"") + out.getvalue()


@pytest.mark.parametrize("kind", ["AVRO", "CONFLUENT_AVRO"])
def test_avro_with_the_schema_in_the_job(kind):
    import json

    confluent = kind == "CONFLUENT_AVRO"
    values = pa.array([avro({"id": 1, "note": None}, confluent), b"\x01\x02", None,
                       avro({"id": 2, "note": "x"}, confluent)], pa.binary())
    batch, bad = deserializer_for(kind, json.dumps(AVRO)).decode(values)
    assert batch.to_pylist() == [{"id": 1, "note": None}, {"id": 2, "note": "x"}]
    assert [index for index, _ in bad] == [1, 2]


def test_schema_forms_for_json():
    gobblin = '[{"columnName": "id", "dataType": {"type": "long"}}, {"columnName": "at", "dataType": {"type": "timestamp"}}]'
    assert parse_schema_text(gobblin) == pa.schema([("id", pa.int64()), ("at", pa.timestamp("ms"))])
    assert parse_schema_text("id:int64, amount:decimal(10, 2), at:timestamp[ms, UTC]") == pa.schema(
        [("id", pa.int64()), ("amount", pa.decimal128(10, 2)), ("at", pa.timestamp("ms", "UTC"))])
    assert parse_schema_text('{"type": "record", "name": "R", "fields": [{"name": "id", "type": "int"}]}') == \
        pa.schema([pa.field("id", pa.int32(), nullable=False)])
    with pytest.raises(UsageError, match="source.schema"):
        parse_schema_text("id")


def test_strings_and_bytes():
    values = pa.array([b"ok", b"\xff", None, b""], pa.binary())
    batch, bad = deserializer_for("STRING", None).decode(values)
    assert batch.column(0).to_pylist() == ["ok", ""] and [i for i, _ in bad] == [1, 2]
    batch, bad = deserializer_for("BYTE_ARRAY", None).decode(values)
    assert batch.column(0).to_pylist() == [b"ok", b"\xff", b""] and [i for i, _ in bad] == [2]
