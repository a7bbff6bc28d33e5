"""The Spark engines' deduplication (a shuffle by key hash across executors) keeps exactly the records the
one-machine deduplication keeps, whatever the types, the files and the parts (a job on the Spark engine:
tests/compaction/test_compaction_jobs.py)."""

from __future__ import annotations

import json
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gobblin_py.connectors.compaction.cluster import compact_on_cluster, parts_for
from gobblin_py.connectors.compaction.dedup import DedupSpec, dedup_table
from gobblin_py.connectors.compaction.finder import InputFile
from gobblin_py.connectors.compaction.inputs import dataset_schema, read_files
from gobblin_py.io import fs as fsutil

NESTED = pa.schema([("id", pa.int64()), ("version", pa.int64()),
                    ("who", pa.struct([("name", pa.string()), ("tags", pa.list_(pa.string()))])),
                    ("attrs", pa.map_(pa.string(), pa.int32()))])


def _rows(start: int, count: int, shift: int = 0) -> pa.Table:
    ids_ = list(range(start, start + count))
    return pa.table({
        "id": [i % 50 for i in ids_],
        "version": [(i * 7 + shift) % 5 if i % 3 else None for i in ids_],
        "who": [{"name": f"n{i % 4}", "tags": [f"t{i % 2}"] * (i % 3)} for i in ids_],
        "attrs": [[("a", i % 3)] for i in ids_],
    }, schema=NESTED)


def _files(tmp_path: Path, tables: list[pa.Table]) -> list[InputFile]:
    files = []
    for n, table in enumerate(tables):
        path = tmp_path / "in" / f"f{n:02d}.parquet"
        path.parent.mkdir(exist_ok=True)
        pq.write_table(table, path, row_group_size=37)  # several batches per file
        files.append(InputFile(str(path), path.stat().st_size, 1_700_000_000_000 + n))
    return files


def _read(folder: Path) -> list[pa.Table]:
    return [pq.read_table(p) for p in sorted(folder.glob("part-r-*.parquet"))]


def _sorted(table: pa.Table) -> list[dict]:
    return sorted(table.to_pylist(), key=lambda r: json.dumps(r, sort_keys=True, default=str))


@pytest.mark.parametrize("spec", [DedupSpec(("id",), ("version",)), DedupSpec(("id", "who.name")),
                                  DedupSpec(("id", "version", "who.name"))], ids=["latest", "first", "all"])
def test_the_shuffle_keeps_what_one_machine_keeps(tmp_path, spark, spec):
    files = _files(tmp_path, [_rows(0, 120), _rows(100, 90, shift=1), _rows(40, 60, shift=2)])
    fs = fsutil.open_fs(files[0].path)[0]
    schema = dataset_schema(fs, files, "parquet")
    expected = dedup_table(pa.Table.from_batches(list(read_files(fs, files, "parquet", schema)), schema), spec)
    out = tmp_path / "out"
    (out / "stale").mkdir(parents=True)  # a crashed attempt's leftovers: the folder is made afresh
    read, records, size, paths = compact_on_cluster(spark, files, "parquet", schema, spec, str(out), "1700000000000",
                                                     1 << 20, {}, "test")
    assert read == 270 and records == expected.num_rows and size > 0
    written = _read(out)
    assert len(written) == len(paths) >= 1 and not (out / "stale").exists()
    assert sorted(p.rsplit("/", 1)[1] for p in paths) == sorted(p.name for p in out.iterdir())  # nothing else
    assert _sorted(pa.concat_tables(written)) == _sorted(expected)  # the same survivors, types intact
    assert all(t.schema.equals(schema, check_metadata=False) for t in written)


def test_parts_cover_the_cluster_and_bound_each_executors_memory():
    assert parts_for(10, 1 << 20, 2) == 2                 # at least one part per core
    assert parts_for(10, 1 << 20, 3) == 4                 # a power of two (the hash is masked)
    assert parts_for(100 << 20, 8 << 20, 2) == 16         # about partition.bytes of input each


def test_avro_records_keep_their_schema_through_the_shuffle(tmp_path, spark):
    avro = {"type": "record", "name": "E", "namespace": "x", "doc": "events", "fields": [
        {"name": "id", "type": "long", "doc": "PrimaryKey"}, {"name": "v", "type": ["null", "string"]}]}
    path = tmp_path / "in.avro"
    with open(path, "wb") as out:
        fastavro.writer(out, fastavro.parse_schema(avro), [{"id": i % 10, "v": f"v{i}"} for i in range(40)])
    files = [InputFile(str(path), path.stat().st_size, 1)]
    fs = fsutil.open_fs(str(path))[0]
    schema = dataset_schema(fs, files, "avro")
    folder = tmp_path / "out"
    _, records, _, paths = compact_on_cluster(spark, files, "avro", schema, DedupSpec(("id",)), str(folder), "1", 1 << 20,
                                              {}, "test")
    assert records == 10
    kept = []
    for p in paths:
        with open(p, "rb") as stream:
            reader = fastavro.reader(stream)
            assert reader.writer_schema["doc"] == "events"  # the dataset's own Avro schema, not Spark's
            kept += list(reader)
    assert sorted((r["id"], r["v"]) for r in kept) == [(i, f"v{i}") for i in range(10)]  # the first read of each

