"""CsvToJsonConverterV2 against Gobblin's CsvToJsonConverterV2Test cases, and on into Avro through a job."""

from __future__ import annotations

import json

import fastavro
import pyarrow as pa
import pytest

from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.schema_meta import with_meta
from gobblin_py.sdk.states import WorkUnitState
from gobblin_py.transforms.converters.csv_json import CsvToJsonConverterV2
from tests.converters.gobblin_cases import CASES, load
from tests.support.cli import run_gpy

# the rows of Gobblin's test, split as OpenCSV splits them
ROW_10 = "20160924,desktop,42935,0.0446255968324211,1590.4702457202748,348380,8.1141260044252945,232467,206.98603475430664,33028".split(",")
ROW_11 = ROW_10[:2] + ["Dynamic Segment"] + ROW_10[2:]


def convert(schema_file: str, row: list[str], **props):
    converter = CsvToJsonConverterV2()
    state = WorkUnitState(properties=props)
    converter.init(state)
    batch = pa.RecordBatch.from_arrays([pa.array([v]) for v in row], names=[f"f{i}" for i in range(len(row))])
    schema = with_meta(batch.schema, gobblin_schema=(CASES / "csv" / schema_file).read_text())
    converter.convert_schema(schema, state)
    return converter.convert_batch(batch, state).to_pylist()[0]


def test_convert_output():
    assert convert("schema_with_10_fields.json", ROW_10) == load("csv", "10_fields.json")


def test_convert_output_skipping_a_field():
    assert convert("schema_with_10_fields.json", ROW_11,
                   **{"converter.csv_to_json.custom_order": "0,1,3,4,5,6,7,8,9,10"}) == load("csv", "10_fields.json")


def test_convert_output_mismatching_fields():
    with pytest.raises(UsageError, match="# of columns mismatch. Input 11 , output: 10"):
        convert("schema_with_10_fields.json", ROW_11)


def test_convert_output_adding_null():
    assert convert("schema_with_11_fields.json", ROW_11, **{"converter.csv_to_json.custom_order":
                                                            "0,1,-1,3,4,5,6,7,8,9,10"}) == load("csv", "11_fields_with_null.json")


def test_java_number_rules_and_nulls():
    columns = [{"columnName": n, "dataType": {"type": t}} for n, t in
               [("i", "int"), ("l", "long"), ("b", "boolean"), ("s", "string")]]
    converter = CsvToJsonConverterV2()
    state = WorkUnitState(properties={"source.schema": json.dumps(columns)})
    converter.init(state)
    batch = pa.record_batch({"a": ["1.9", "1e12", "", "NULL"], "b": ["-7", "9e30", "3", "4"],
                             "c": ["TRUE", "yes", "false", "true"], "d": ["x", "", "null", "y"]})
    converter.convert_schema(batch.schema, state)
    out = converter.convert_batch(batch, state)
    assert out.column("i").to_pylist() == [1, 2**31 - 1, None, None]  # truncation, saturation; "" and null are null
    assert out.column("l").to_pylist() == [-7, 2**63 - 1, 3, 4]
    assert out.column("b").to_pylist() == [True, False, False, True]
    assert out.column("s").to_pylist() == ["x", None, None, "y"]


def test_csv_to_avro_job(tmp_path):
    """A CSV file → CsvToJsonConverterV2 → JsonIntermediateToAvroConverter → Avro files, as Gobblin's CSV jobs do."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "report.csv").write_text(",".join(f"c{i}" for i in range(11)) + "\n" + ",".join(ROW_11) + "\n")
    schema = (CASES / "csv" / "schema_with_10_fields.json").read_text().replace("\n", " ")
    job = tmp_path / "report.pull"
    job.write_text(
        f"job.name=Report\nsource.class=gobblin_py.connectors.files.filebased.FileBasedSource\n"
        f"source.filebased.data.directory={tmp_path / 'data'}\nsource.schema={schema}\n"
        "converter.classes=org.apache.gobblin.converter.csv.CsvToJsonConverterV2,"
        "org.apache.gobblin.converter.avro.JsonIntermediateToAvroConverter\n"
        "converter.csv_to_json.custom_order=0,1,3,4,5,6,7,8,9,10\nconverter.avro.timestamp.format=yyyyMMdd\n"
        "extract.namespace=ga\nextract.table.name=report\nwriter.output.format=AVRO\n"
        f"writer.staging.dir={tmp_path / 'staging'}\nwriter.output.dir={tmp_path / 'output'}\n"
        f"data.publisher.final.dir={tmp_path / 'published'}\nstate.store.dir={tmp_path / 'state'}\ntask.maxretries=0\n")
    result = run_gpy("run", str(job), "--engine", "local")
    assert result.returncode == 0, result.stdout + result.stderr
    (path,) = (tmp_path / "published").rglob("*.avro")
    with open(path, "rb") as stream:
        reader = fastavro.reader(stream)
        (row,) = list(reader)
    assert json.loads(reader.metadata["avro.schema"])["name"] == "report"
    expected = load("csv", "10_fields.json")
    assert row["Date"] == 1474675200000  # 2016-09-24 as a Gobblin timestamp: epoch milliseconds (UTC)
    assert {k: v for k, v in row.items() if k != "Date"} == {k: v for k, v in expected.items() if k != "Date"}
