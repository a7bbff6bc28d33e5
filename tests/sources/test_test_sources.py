"""Gobblin's test sources: SequentialTestSource's watermarks and records, TestSource with TestConverter."""

from __future__ import annotations

import json
from pathlib import Path

import fastavro
import pyarrow.parquet as pq
import pytest

from gobblin_py.sdk.watermarks import LongWatermark
from gobblin_py.store import FsDatasetStateStore
from tests.support.cli import run_gpy
from tests.support.paths import GOBBLIN_DATA

TEST_AVRO = GOBBLIN_DATA / "testsource" / "test.avro.0"


def write_job(root: Path, lines: str) -> Path:
    job = root / "job.pull"
    job.write_text(lines + f"\nwriter.staging.dir={root / 'staging'}\nwriter.output.dir={root / 'output'}\n"
                   f"data.publisher.final.dir={root / 'published'}\nstate.store.dir={root / 'state'}\n"
                   "task.maxretries=0\n")
    return job


def run(job: Path, *extra: str):
    result = run_gpy("run", str(job), "--engine", "local", *extra)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def sequences(root: Path) -> list[tuple[int, int]]:
    rows = []
    for path in sorted((root / "published").rglob("*.parquet")):
        table = pq.read_table(path)
        rows += list(zip(table.column("partition").to_pylist(), table.column("sequence").to_pylist()))
    return sorted(rows)


def test_sequential_source_continues_each_work_unit_from_its_actual_high_watermark(tmp_path):
    job = write_job(tmp_path, "job.name=Seq\nsource.class=org.apache.gobblin.test.SequentialTestSource\n"
                              "source.numParallelism=2\nsource.numRecordsPerExtract=5\nsource.sleepTimePerRecordMillis=0\n"
                              "writer.output.format=PARQUET\nextract.namespace=ignored\n")
    run(job)
    assert sequences(tmp_path) == [(0, s) for s in range(1, 6)] + [(1, s) for s in range(6, 11)]
    state = FsDatasetStateStore(str(tmp_path / "state")).get_latest_dataset_state("Seq", "")
    tasks = sorted(state.all_task_states(), key=lambda t: t.get_prop("workUnitIndex"))
    # Gobblin's numbers: expected high = (i+1)·N, actual high = one past the last sequence emitted
    assert [t.workunit.expected_high_watermark(LongWatermark).value for t in tasks] == [5, 10]
    assert [t.actual_high_watermark(LongWatermark).value for t in tasks] == [6, 11]
    assert tasks[0].get_prop("extract.namespace") == "TestDB" and tasks[0].get_prop("extract.table.name") == "TestTable"
    run(job)  # numParallelism no longer matters: each work unit goes on from where it ended
    second = [r for r in sequences(tmp_path) if r not in [(0, s) for s in range(1, 6)] + [(1, s) for s in range(6, 11)]]
    assert second == [(0, s) for s in range(6, 11)] + [(1, s) for s in range(11, 16)]


def test_sequential_source_avro_records_keep_gobblins_test_record_schema(tmp_path):
    job = write_job(tmp_path, "job.name=SeqAvro\nsource.class=gobblin.test.SequentialTestSource\n"
                              "source.inMemoryFormat=AVRO\nsource.numRecordsPerExtract=3\nsource.sleepTimePerRecordMillis=0\n"
                              "writer.builder.class=org.apache.gobblin.writer.AvroDataWriterBuilder\n")
    run(job)
    (path,) = (tmp_path / "published").rglob("*.avro")
    with open(path, "rb") as stream:
        reader = fastavro.reader(stream)
        schema = json.loads(reader.metadata["avro.schema"])
        rows = list(reader)
    assert schema["name"] == "TestRecord" and schema["namespace"] == "org.apache.gobblin.test.avro"
    assert rows[0] == {"partition": 0, "sequence": 1, "payload": "I am an Avro message"} and len(rows) == 3


def test_sequential_source_rejects_a_lower_case_format_as_gobblin_does(tmp_path):
    job = write_job(tmp_path, "job.name=Bad\nsource.class=org.apache.gobblin.test.SequentialTestSource\n"
                              "source.inMemoryFormat=avro\n")
    result = run_gpy("run", str(job), "--engine", "local")
    assert result.returncode == 2 and "source.inMemoryFormat" in result.stderr and "upper case" in result.stderr


def test_pojo_records_print_as_gobblins_test_record(tmp_path):
    job = write_job(tmp_path, "job.name=Pojo\nsource.class=org.apache.gobblin.test.SequentialTestSource\n"
                              "source.numRecordsPerExtract=2\nsource.sleepTimePerRecordMillis=0\n"
                              "converter.classes=org.apache.gobblin.test.AnyToStringConverter\n"
                              "writer.output.format=CSV\nwriter.csv.header=false\n")
    run(job)
    (path,) = (tmp_path / "published").rglob("*.csv")
    assert path.read_text().splitlines() == [
        '"TestRecord(partition=0, sequence=1, payload=I am a POJO message)"',
        '"TestRecord(partition=0, sequence=2, payload=I am a POJO message)"',
    ]


def test_test_source_reads_gobblins_test_files_through_test_converter(tmp_path):
    job = write_job(tmp_path, f"job.name=GobblinTest\nsource.class=org.apache.gobblin.test.TestSource\n"
                              f"converter.classes=org.apache.gobblin.test.TestConverter\nextract.namespace=test1\n"
                              f"writer.output.format=AVRO\nsource.files={TEST_AVRO},{TEST_AVRO}\n"
                              "qualitychecker.task.policies=org.apache.gobblin.policies.count.RowCountPolicy\n"
                              "qualitychecker.task.policy.types=FAIL\n")
    result = run(job)
    files = sorted((tmp_path / "published").rglob("*.avro"))
    assert [f.parts[-3] for f in files] == ["TestTable1", "TestTable2"]  # work units alternate tables
    for path in files:
        with open(path, "rb") as stream:
            reader = fastavro.reader(stream)
            rows = list(reader)
        assert json.loads(reader.metadata["avro.schema"])["name"] == "User"
        assert len(rows) == 1000  # what TestExtractor promises, so RowCountPolicy passes
        assert rows[:3] == [{"name": "Alyssa", "favorite_number": 256, "favorite_color": "yellow"},
                            {"name": "Ben", "favorite_number": 7, "favorite_color": "red"},
                            {"name": "Charlie", "favorite_number": 68, "favorite_color": "blue"}]
        assert [sum(r["name"] == n for r in rows) for n in ("Alyssa", "Ben", "Charlie")] == [334, 333, 333]
    assert "RowCountPolicy (FAIL): PASSED in 2 task(s)" in result.stdout


def test_test_source_fails_the_task_naming_a_missing_file(tmp_path):
    job = write_job(tmp_path, "job.name=Missing\nsource.class=org.apache.gobblin.test.TestSource\n"
                              f"source.files={tmp_path / 'nope.avro'}\n")
    result = run_gpy("run", str(job), "--engine", "local")
    assert result.returncode == 1 and "nope.avro: no such file" in result.stdout


def test_simple_json_source_and_converter_make_avro_of_json_lines(tmp_path):
    data = tmp_path / "users.json"
    data.write_text('{"name": "Alyssa", "favorite_number": 256, "favorite_color": "yellow"}\n'
                    '{"name": "Ben", "favorite_number": 7, "favorite_color": "red"}\n')
    schema = ('{"namespace":"example.avro", "type":"record", "name":"User", "fields":[{"name":"name", "type":"string"},'
              ' {"name":"favorite_number",  "type":"int"}, {"name":"favorite_color", "type":"string"}]}')
    job = write_job(tmp_path, "job.name=GobblinDemo\nsource.class=org.apache.gobblin.example.simplejson.SimpleJsonSource\n"
                              "converter.classes=org.apache.gobblin.example.simplejson.SimpleJsonConverter\n"
                              f"source.filebased.files.to.pull=file://{data}\nsource.schema={schema}\n"
                              "writer.output.format=AVRO\n")
    run(job)
    (path,) = (tmp_path / "published").rglob("*.avro")
    with open(path, "rb") as stream:
        assert [r["favorite_number"] for r in fastavro.reader(stream)] == [256, 7]
    assert "ExampleNamespace" in str(path) and "ExampleTable" in str(path)


def test_json_text_with_a_field_the_schema_lacks_fails_the_record(tmp_path):
    import pyarrow as pa

    from gobblin_py.sdk.errors import GobblinPyError
    from gobblin_py.sdk.schema_meta import text_schema
    from gobblin_py.sdk.states import WorkUnitState
    from gobblin_py.transforms.converters.json_text import JsonTextToAvroConverter

    converter = JsonTextToAvroConverter()
    state = WorkUnitState()
    converter.init(state)
    schema = text_schema('{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}')
    converter.convert_schema(schema, state)
    good = pa.RecordBatch.from_arrays([pa.array(['{"a": 1}', '{"a": 2}'])], schema=schema)
    assert converter.convert_batch(good, state)[0].column(0).to_pylist() == [1, 2]
    with pytest.raises(GobblinPyError, match="does not fit"):
        converter.convert_batch(pa.RecordBatch.from_arrays([pa.array(['{"a": 1, "b": 2}'])], schema=schema), state)
