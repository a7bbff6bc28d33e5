"""Avro files as a source: the file source reads them, and Gobblin's AvroFileSource pulls each file once."""

from __future__ import annotations

import json
from pathlib import Path

import fastavro
import pytest

from gobblin_py.store import FsDatasetStateStore
from tests.support.cli import run_gpy_here

SCHEMA = {
    "type": "record", "name": "User", "namespace": "example.avro", "doc": "a user",
    "fields": [
        {"name": "name", "type": "string", "doc": "the name"},
        {"name": "favorite_number", "type": ["null", "int"], "default": None},
        {"name": "color", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "BLUE"]}},
        {"name": "tags", "type": {"type": "map", "values": "long"}},
    ],
}


def write_users(path: Path, first: int, count: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [{"name": f"u{i}", "favorite_number": i if i % 3 else None, "color": "RED" if i % 2 else "BLUE",
             "tags": {"k": i}} for i in range(first, first + count)]
    with open(path, "wb") as out:
        fastavro.writer(out, SCHEMA, rows, codec="null")


def job_file(root: Path, source_class: str, extra: str = "") -> Path:
    job = root / "users.pull"
    job.write_text(
        f"job.name=Users\nsource.class={source_class}\nsource.filebased.data.directory={root / 'data'}\n"
        f"extract.table.type=SNAPSHOT_ONLY\nextract.namespace=example\nextract.table.name=users\n"
        f"writer.builder.class=org.apache.gobblin.writer.AvroDataWriterBuilder\nwriter.codec.type=null\n"
        f"writer.staging.dir={root / 'staging'}\nwriter.output.dir={root / 'output'}\n"
        f"data.publisher.final.dir={root / 'published'}\nstate.store.dir={root / 'state'}\ntask.maxretries=0\n{extra}"
    )
    return job


def published(root: Path) -> tuple[list[dict], list[dict]]:
    rows, schemas = [], []
    for path in sorted((root / "published").rglob("*.avro")):
        with open(path, "rb") as stream:
            reader = fastavro.reader(stream)
            schemas.append(json.loads(reader.metadata["avro.schema"]))
            rows.extend(reader)
    return rows, schemas


def test_avro_file_source_pulls_each_file_once_and_keeps_the_avro_schema(tmp_path):
    write_users(tmp_path / "data" / "a.avro", 0, 10)
    write_users(tmp_path / "data" / "sub" / "b.data", 10, 5)  # any name: every file is Avro
    job = job_file(tmp_path, "org.apache.gobblin.source.extractor.hadoop.AvroFileSource",
                   "source.max.number.of.partitions=4\n")
    first = run_gpy_here("run", str(job), "--engine", "local")
    assert first.returncode == 0, first.stdout + first.stderr
    rows, schemas = published(tmp_path)
    assert sorted(r["name"] for r in rows) == sorted(f"u{i}" for i in range(15))
    assert {r["color"] for r in rows} == {"RED", "BLUE"} and rows[0]["tags"] == {"k": int(rows[0]["name"][1:])}
    # the file's schema is written back as is: enum, docs, namespace
    assert schemas[0]["name"] == "User" and schemas[0]["namespace"] == "example.avro"
    assert schemas[0]["fields"][2]["type"]["type"] == "enum" and schemas[0]["fields"][0]["doc"] == "the name"

    state = FsDatasetStateStore(str(tmp_path / "state")).get_latest_dataset_state("Users", "")
    snapshot = state.all_task_states()[0].get_prop("source.filebased.fs.snapshot").split(",")
    assert f"file:{tmp_path / 'data' / 'a.avro'}" in snapshot  # Gobblin's entries: qualified paths, no mtime
    write_users(tmp_path / "data" / "a.avro", 100, 1)  # rewritten under the same name: not pulled again
    write_users(tmp_path / "data" / "c.avro", 20, 2)
    second = run_gpy_here("run", str(job), "--engine", "local")
    assert second.returncode == 0, second.stdout + second.stderr
    rows, _ = published(tmp_path)
    assert sorted(r["name"] for r in rows) == sorted(f"u{i}" for i in [*range(15), 20, 21])


def test_avro_file_source_needs_the_table_type(tmp_path):
    write_users(tmp_path / "data" / "a.avro", 0, 1)
    job = job_file(tmp_path, "org.apache.gobblin.source.extractor.hadoop.AvroFileSource")
    job.write_text(job.read_text().replace("extract.table.type=SNAPSHOT_ONLY\n", ""))
    result = run_gpy_here("run", str(job), "--engine", "local")
    assert result.returncode == 2 and "extract.table.type" in result.stderr


def test_the_file_source_reads_avro_by_extension(tmp_path):
    write_users(tmp_path / "data" / "a.avro", 0, 7)
    job = job_file(tmp_path, "gobblin_py.connectors.files.filebased.FileBasedSource", "writer.output.format=PARQUET\n")
    job.write_text(job.read_text().replace("writer.codec.type=null", "writer.codec.type=snappy"))
    result = run_gpy_here("run", str(job), "--engine", "local")
    assert result.returncode == 0, result.stdout + result.stderr
    import pyarrow.parquet as pq

    table = pq.read_table(next((tmp_path / "published").rglob("*.parquet")))
    assert table.num_rows == 7 and table.column("favorite_number").to_pylist()[:3] == [None, 1, 2]
    tags = table.schema.field("tags").type
    assert tags.key_type == "string" and tags.item_type == "int64"


@pytest.mark.parametrize("bad", [b"", b"not avro at all"])
def test_a_bad_avro_file_fails_its_task_naming_the_file(tmp_path, bad):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "x.avro").write_bytes(bad)
    job = job_file(tmp_path, "org.apache.gobblin.source.extractor.hadoop.AvroFileSource")
    result = run_gpy_here("run", str(job), "--engine", "local")
    assert result.returncode == 1 and "x.avro" in result.stdout + result.stderr


def test_an_avro_file_whose_header_names_no_schema_fails_its_task_naming_the_file(tmp_path):
    write_users(tmp_path / "data" / "x.avro", 0, 3)
    data = (tmp_path / "data" / "x.avro").read_bytes()
    (tmp_path / "data" / "x.avro").write_bytes(data.replace(b"avro.schema", b"avro.schemX", 1))
    job = job_file(tmp_path, "org.apache.gobblin.source.extractor.hadoop.AvroFileSource")
    result = run_gpy_here("run", str(job), "--engine", "local")
    output = result.stdout + result.stderr
    assert result.returncode == 1 and "x.avro: not a readable Avro file" in output, output
