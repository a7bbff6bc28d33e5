"""JsonIntermediateToAvroConverter against the schemas and records of Gobblin's own converter tests.

Inputs and expected outputs are byte copies of Gobblin's test resources (tests/data/gobblin/converter, see
cases.md there). Schemas are compared as JSON, as Gobblin's tests compare them; records are written with gpy's
Avro writer and read back with fastavro.
"""

from __future__ import annotations

import datetime as dt
import json
from zoneinfo import ZoneInfo

import pyarrow as pa
import pytest

from gobblin_py.transforms.converters.json_avro import JsonIntermediateToAvroConverter
from gobblin_py.transforms.converters.json_schema import SchemaError, avro_type, parse_column
from gobblin_py.sdk.errors import GobblinPyError
from tests.converters.gobblin_cases import CASES, convert_text, gobblin_state, load, write_and_read

FACTORY = CASES / "elementfactory" / "split"
# the namespace each JsonElementConversionFactoryTest case builds its converter with (cases.md, table B)
FACTORY_NAMESPACES = {
    "schemaWithRecord": "namespace.something", "schemaWithRecordOfMap": "namespace.something",
    "schemaWithRecordOfArray": "namespace.something", "schemaWithRecordOfEnum": "namespace.something",
    "schemaWithRecordOfRecord": "namespace.something", "schemaWithRecordOfRecordCheckNamespace": "namespace.person",
    "schemaWithRecordOfEnumCheckNamespace": "namespace.something", "schemaWithRecordIsNullable": "namespace.something",
    "schemaWithEnumIsNullable": "something",
}
FACTORY_CASES = sorted(p.name.split(".")[0] for p in FACTORY.glob("*.expected_avro_schema.json"))


@pytest.mark.parametrize("case", FACTORY_CASES)
def test_element_conversion_factory_schemas(case):
    column = json.loads((FACTORY / f"{case}.input.json").read_text())
    expected = json.loads((FACTORY / f"{case}.expected_avro_schema.json").read_text())
    assert avro_type(parse_column(column, FACTORY_NAMESPACES.get(case)).node) == expected


def test_element_factory_cases_are_all_covered():
    assert len(FACTORY_CASES) == 22  # schemaWithNullType has no entry in the JSON file


@pytest.mark.parametrize("case", ["schemaWithMapValuesAsJsonArray", "schemaWithMapValuesAsJsonNull"])
def test_map_values_as_a_list_of_names_or_null_are_refused(case):
    with pytest.raises(SchemaError):
        parse_column(json.loads((FACTORY / f"{case}.input.json").read_text()), "namespace.something")


@pytest.mark.parametrize("case", ["complex1", "complex2", "complex3"])
def test_complex_schemas_and_records(case, tmp_path):
    schema, record = load("split", f"{case}.input_schema.json"), load("split", f"{case}.input_record.json")
    converter = JsonIntermediateToAvroConverter()
    out_schema, batches = convert_text(converter, schema, [record], gobblin_state())
    assert converter.avro == load("split", f"{case}.expected_avro_schema.json")
    written_schema, rows = write_and_read(tmp_path, out_schema, batches)
    assert rows == [load("split", f"{case}.expected_record.json")]
    assert written_schema["name"] == "dummy_table" and written_schema["namespace"] == "namespace"


def test_flat_schema_of_every_type_in_pst_then_est(tmp_path):
    data = load("schema.json")
    state = gobblin_state(**{"converter.avro.time.format": "HH:mm:ss", "converter.avro.date.timezone": "PST"})
    out_schema, batches = convert_text(JsonIntermediateToAvroConverter(), data["schema"], [data["record"]], state)
    _, (row,) = write_and_read(tmp_path, out_schema, batches)
    assert row["Id"] == "232498" and row["IsDeleted"] is False and row["Industry"] == "IT"
    assert row["Salutation"] == ["test", "test1", "test2"] and row["MapAccount"] == {"test": "test", "test1": "test",
                                                                                   "test2": "test"}
    pst = ZoneInfo("America/Los_Angeles")
    assert dt.datetime.fromtimestamp(row["LastModifiedDate"] / 1000, pst).strftime("%Y-%m-%d %H:%M:%S") == \
        "2014-01-02 12:23:37"
    assert row["LastModifiedDate"] == row["date_type"] == 1388694217000
    assert row["time_type"] == 73417000 and dt.datetime.fromtimestamp(73417000 / 1000, pst).strftime("%H:%M:%S") == \
        "12:23:37"
    assert row["bytes_type"] == b"dfkljafnio3ebpoahdjhjh" and row["int_type"] == 3
    assert row["long_type"] == 7899083748927 and row["double_type"] == 9.763649736
    assert abs(row["float_type"] - 4.3) < 1e-6
    assert row["null_this"] is None  # nullable columns the record lacks are null, not an error

    est = gobblin_state(**{"converter.avro.time.format": "HH:mm:ss", "converter.avro.date.timezone": "EST"})
    _, (batch,) = convert_text(JsonIntermediateToAvroConverter(), data["schema"], [data["record"]], est)
    assert batch.column("LastModifiedDate")[0].as_py() == 1388683417000 != row["LastModifiedDate"]


def test_nested_json_records(tmp_path):
    schema, record = load("nested_schema.json"), load("nested_json.json")
    out_schema, batches = convert_text(JsonIntermediateToAvroConverter(), schema, [record], gobblin_state())
    _, (row,) = write_and_read(tmp_path, out_schema, batches)
    assert row["metaData"] == record["metaData"] and row["metaData"]["id"] == "12345"
    assert row["context"] == record["context"]


def _typed(schema_columns, batch: pa.RecordBatch, **props):
    from gobblin_py.sdk.schema_meta import with_meta

    converter = JsonIntermediateToAvroConverter()
    state = gobblin_state(**props)
    converter.init(state)
    schema = with_meta(batch.schema, gobblin_schema=json.dumps(schema_columns))
    out = converter.convert_schema(schema, state)
    return out, converter.convert_batch(batch.cast(schema), state)


def test_typed_columns_go_through_arrow_kernels_with_gobblins_rules():
    columns = [{"columnName": "n", "dataType": {"type": "int"}}, {"columnName": "at", "dataType": {"type": "timestamp"}},
               {"columnName": "d", "dataType": {"type": "date"}, "isNullable": True},
               {"columnName": "flag", "dataType": {"type": "boolean"}}]
    batch = pa.record_batch({"n": [3.7, -2.5], "at": ["2014-01-02T12:23:37+0100", "2014-01-02 12:23:37"],
                             "d": ["2017-03-01", None], "flag": ["TRUE", "no"]})
    props = {"converter.avro.timestamp.format": "yyyy-MM-dd'T'HH:mm:ssZ,yyyy-MM-dd HH:mm:ss",
             "converter.avro.date.format": "yyyy-MM-dd", "converter.avro.date.timezone": "America/Los_Angeles",
             "converter.is.epoch.time.in.seconds": "true"}
    _, (out,) = _typed(columns, batch, **props)
    assert out.column("n").to_pylist() == [3, -2]  # Java truncation
    assert out.column("at").to_pylist() == [1388661817, 1388694217]  # the offset, else the zone; seconds
    assert out.column("d").to_pylist() == [1488355200, None]
    assert out.column("flag").to_pylist() == [True, False]  # only "true" is true, any case


def test_the_first_failure_fails_unless_a_budget_is_set():
    columns = [{"columnName": "n", "dataType": {"type": "int"}}]
    bad = pa.record_batch({"n": ["1", "x", "y", "4"]})
    with pytest.raises(GobblinPyError, match="converter.avro.max.conversion.failures=0"):
        _typed(columns, bad)
    with pytest.raises(GobblinPyError):  # with 2: the first bad record is dropped, the second fails
        _typed(columns, bad, **{"converter.avro.max.conversion.failures": "2"})
    _, (out,) = _typed(columns, bad, **{"converter.avro.max.conversion.failures": "3"})
    assert out.column("n").to_pylist() == [1, 4]


def test_null_in_a_non_nullable_field_fails_naming_it():
    columns = [{"columnName": "name", "dataType": {"type": "string"}}]
    with pytest.raises(GobblinPyError, match="Field: name is not nullable and contains a null value"):
        _typed(columns, pa.record_batch({"name": pa.array([None], pa.string())}))


def test_unknown_zone_or_bad_pattern_is_a_configuration_error():
    from gobblin_py.transforms.converters.json_avro import JsonAvroSettings

    problems = JsonAvroSettings.problems({"converter.avro.date.timezone": "Mars/Olympus",
                                          "converter.avro.date.format": "yyyy-QQ"})
    assert {p.key for p in problems} == {"converter.avro.date.timezone", "converter.avro.date.format"}
