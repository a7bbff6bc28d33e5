"""ConverterContract over every built-in converter (and the example's PurgingConverter)."""

from __future__ import annotations

import json
from decimal import Decimal

import pyarrow as pa

from gobblin_py.sdk.schema_meta import text_schema
from gobblin_py.connectors.testdata.test_sources import USER_SCHEMA
from gobblin_py.testing import ConverterContract
from gobblin_py.testing.base import default_batches
from gobblin_py.testing.outputs import rows


class DefaultInput(ConverterContract):
    """Converters of any rows, on the kit's default input: two batches of ids, names, amounts and flags."""

    engines = ("local",)


# the plugin guide's three lines, as they are: the kit's defaults (its input, both engines) do the rest
class TestIdentityConverter(ConverterContract):
    converter_class = "org.apache.gobblin.converter.IdentityConverter"


class TestAvroRecordToAvroWritableConverter(DefaultInput):
    converter_class = "org.apache.gobblin.converter.avro.AvroRecordToAvroWritableConverter"

    def expected_rows(self):
        return rows(pa.Table.from_batches(default_batches()))


class TestFieldProjectionConverter(DefaultInput):
    converter_class = "FieldProjectionConverter"
    fork_scoped_keys = True

    def converter_props(self):
        return {"converter.projection.fields": "name:customer,id"}

    def expected_rows(self):
        return [{"customer": r["name"], "id": r["id"]} for r in rows(pa.Table.from_batches(default_batches()))]


class TestTypeCastConverter(DefaultInput):
    converter_class = "TypeCastConverter"
    fork_scoped_keys = True

    def converter_props(self):
        return {"converter.cast.fields": "id:int32,amount:decimal128(14, 2)"}

    def expected_rows(self):
        return [{**r, "amount": None if r["amount"] is None else Decimal(str(r["amount"]))}
                for r in rows(pa.Table.from_batches(default_batches()))]


class TestAnyToStringConverter(DefaultInput):
    converter_class = "org.apache.gobblin.test.AnyToStringConverter"


class TestSamplingConverter(DefaultInput):
    """Random: a job publishes some of its input rows, unchanged."""

    converter_class = "org.apache.gobblin.converter.SamplingConverter"
    deterministic = False
    fork_scoped_keys = True

    def converter_props(self):
        return {"converter.sample.ratio": "0.5"}

    def compare_published(self, published, converted):
        source = rows(pa.Table.from_batches(default_batches()))
        for row in rows(published):
            assert row in source, f"published a row the input does not hold: {row}"


class TestPurgingConverter(DefaultInput):
    """The fork example's converter: blanks fields."""

    converter_class = "gobblin_py.examples.sensitive.PurgingConverter"
    fork_scoped_keys = True

    def converter_props(self):
        return {"converter.purge.fields": "name,amount"}

    def expected_rows(self):
        return [{**r, "name": None, "amount": None} for r in rows(pa.Table.from_batches(default_batches()))]


USERS = [{"name": f"user {i}", "favorite_number": i, "favorite_color": "red" if i % 2 else "blue"} for i in range(5)]


class TestJsonTextToAvroConverter(ConverterContract):
    """Gobblin's TestConverter / SimpleJsonConverter: JSON text records carrying their Avro schema."""

    converter_class = "org.apache.gobblin.example.simplejson.SimpleJsonConverter"
    engines = ("local",)

    def input_batches(self):
        schema = text_schema(USER_SCHEMA, "json")
        texts = [json.dumps(u) for u in USERS]
        return [pa.RecordBatch.from_arrays([pa.array(texts[:3])], schema=schema),
                pa.RecordBatch.from_arrays([pa.array(texts[3:])], schema=schema)]

    def expected_rows(self):
        return USERS


INTERMEDIATE = [{"columnName": "id", "dataType": {"type": "long"}},
                {"columnName": "name", "dataType": {"type": "string"}, "isNullable": True},
                {"columnName": "score", "dataType": {"type": "double"}, "isNullable": True},
                {"columnName": "active", "dataType": {"type": "boolean"}},
                {"columnName": "day", "dataType": {"type": "date"}, "isNullable": True}]


class TestJsonIntermediateToAvroConverter(ConverterContract):
    """Typed columns named like the JSON intermediate schema of source.schema."""

    converter_class = "org.apache.gobblin.converter.avro.JsonIntermediateToAvroConverter"
    engines = ("local",)

    def converter_props(self):
        return {"source.schema": json.dumps(INTERMEDIATE), "converter.avro.date.format": "yyyy-MM-dd",
                "extract.table.name": "scores"}

    def input_batches(self):
        batch = pa.record_batch({"id": [1, 2, 3], "name": ["a", None, "c, d"], "score": [1.5, None, -2.0],
                                 "active": ["true", "false", "TRUE"], "day": ["2024-01-02", None, "1969-12-31"]})
        return [batch.slice(0, 2), batch.slice(2)]

    def expected_rows(self):
        return [{"id": 1, "name": "a", "score": 1.5, "active": True, "day": 1704153600000},
                {"id": 2, "name": None, "score": None, "active": False, "day": None},
                {"id": 3, "name": "c, d", "score": -2.0, "active": True, "day": -86400000}]


class TestCsvToJsonConverterV2(ConverterContract):
    """CSV fields as text, by position, into the JSON intermediate schema of source.schema."""

    converter_class = "org.apache.gobblin.converter.csv.CsvToJsonConverterV2"
    engines = ("local",)

    def converter_props(self):
        return {"source.schema": json.dumps(INTERMEDIATE[:4])}

    def input_batches(self):
        batch = pa.record_batch({"c0": ["1", "2", "3"], "c1": ["a", "", "null"], "c2": ["1.9", "1e3", ""],
                                 "c3": ["true", "yes", "TRUE"]})
        return [batch.slice(0, 1), batch.slice(1)]

    def expected_rows(self):
        return [{"id": 1, "name": "a", "score": 1.9, "active": True},
                {"id": 2, "name": None, "score": 1000.0, "active": False},
                {"id": 3, "name": None, "score": None, "active": True}]


class TestAvroToJdbcEntryConverter(ConverterContract):
    """Nested records flattened (``geo_region``), columns renamed for the JDBC writer."""

    converter_class = "org.apache.gobblin.converter.jdbc.AvroToJdbcEntryConverter"
    engines = ("local",)

    def converter_props(self):
        return {"converter.avro.jdbc.entry_fields_pairs": '{"businessUnit": "business_unit"}'}

    def input_batches(self):
        geo = pa.struct([("region", pa.string())])
        batch = pa.RecordBatch.from_pylist(
            [{"id": 1, "businessUnit": "bu1", "geo": {"region": "EMEA"}},
             {"id": 2, "businessUnit": None, "geo": {"region": None}},
             {"id": 3, "businessUnit": "bu3", "geo": None}],
            schema=pa.schema([("id", pa.int64()), ("businessUnit", pa.string()), ("geo", geo)]))
        return [batch.slice(0, 2), batch.slice(2)]

    def expected_rows(self):
        return [{"id": 1, "business_unit": "bu1", "geo_region": "EMEA"},
                {"id": 2, "business_unit": None, "geo_region": None},
                {"id": 3, "business_unit": "bu3", "geo_region": None}]
