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


@pytest.mark.parametrize("schema", [None, "id:int64"])
def test_a_json_message_that_is_not_an_object_is_a_bad_message(schema):
    # found by fuzzing: `null` as the first line Arrow's JSON reader parsed crashed the whole process (a
    # segmentation fault in pyarrow 26), and after another line it was taken for a row of nulls
    values = pa.array([b"null", b'{"id": 1}', b"  \n null", b"null", b"[1]", b"7", b"   ", b'\t{"id": 2}'], pa.binary())
    batch, bad = deserializer_for("JSON", schema).decode(values)
    assert batch.column("id").to_pylist() == [1, 2]
    assert bad == [(i, "ValueError: not a JSON object") for i in (0, 2, 3, 4, 5, 6)]


def test_json_messages_decoded_into_a_schema_without_fields_are_bad_not_lost():
    # found by fuzzing: when no message of a work unit could be inferred a schema from, decoding into the empty
    # schema kept no row and reported no bad message: the messages vanished from the counts
    values = pa.array([b'{"\xff": 1}', b"{}"], pa.binary())
    batch, bad = deserializer_for("JSON", None).with_schema(pa.schema([])).decode(values)
    assert batch.num_rows == 0
    assert bad == [(0, "ValueError: no field to decode into: the schema has none"),
                   (1, "ValueError: no field to decode into: the schema has none")]


@pytest.mark.parametrize("text,said", [
    ("id:decimal(0, 2)", "source.schema: field 'id': type 'decimal(0, 2)': precision should be between 1 and 38"),
    ("id:int64,n:list<int32>", "source.schema: field 'n': unknown type 'list<int32>'"),
    ('{"type": "record", "name": "R"}', "source.schema: not a usable Avro record schema (KeyError: 'fields')"),
    ('{"type": "record", "name": "R", "fields": [{"name": "id", "typ": "long"}]}',
     "source.schema: not a usable Avro record schema (KeyError: 'type')"),
    ('{"type": "record", "name": "R", "fields": [{"name": "id", "type": 7}]}',
     "source.schema: not a usable Avro record schema (AttributeError: "),
    ('[{"columnName": "id", "dataType": {"type": ["long"]}}]', "source.schema: "),
    ('[{"columnName": 7, "dataType": {"type": "long"}}]', "source.schema: "),
    ('"id"', "source.schema: "),
])
def test_every_bad_source_schema_is_a_usage_error_naming_the_key(text, said):
    # found by fuzzing: these raised KeyError, TypeError, ValueError or an error that did not name the key
    with pytest.raises(UsageError) as info:
        parse_schema_text(text)
    assert str(info.value).startswith(said)
    with pytest.raises(UsageError, match="^source.schema: not a usable Avro schema"):
        deserializer_for("AVRO", '{"type": "record", "name": "R", "fields": [{"name": "id", "typ": "long"}]}')


@pytest.mark.parametrize("schema", [None, "id:int64"])
def test_a_batch_of_only_tombstones_is_all_undecodable(schema):
    # found by fuzzing: with every value null, Arrow's JSON reader was given no data, failed, and the bisection of
    # the empty batch recursed until RecursionError
    values = pa.array([None, None], pa.binary())
    decoder = deserializer_for("JSON", schema)
    if schema is None:
        inferred, bad = decoder.infer(values)
        assert inferred is None and bad == []
        decoder = decoder.with_schema(pa.schema([]))
    batch, bad = decoder.decode(values)
    assert batch.num_rows == 0 and bad == [(0, "null value (a tombstone)"), (1, "null value (a tombstone)")]
