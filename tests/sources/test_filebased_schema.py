"""The files of one dataset are published with one schema: a file that does not fit it fails, naming the file,
the column, the types and the record, and nothing of the dataset is published; across runs likewise."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gobblin_py.sdk.errors import DataError, UsageError
from tests.support.cli import run_gpy
from tests.support.filebased import read_all

JOB = """job.name=Orders
source.class=gobblin_py.connectors.files.filebased.FileBasedSource
source.filebased.data.directory=data
extract.namespace=shop
extract.table.name=orders
writer.output.format=PARQUET
task.data.root.dir=work
data.publisher.final.dir=published
state.store.dir=state
task.maxretries=0
"""


def write(folder: Path, name: str, content: bytes | str, mtime: int) -> None:
    path = folder / "data" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    os.utime(path, (mtime, mtime))


def run(folder: Path, extra: str = ""):
    (folder / "job.pull").write_text(JOB + extra)
    return run_gpy("run", "job.pull", "--engine", "local", cwd=folder)


def published(folder: Path) -> list[pa.Schema]:
    return [pq.read_schema(p) for p in sorted((folder / "published").rglob("*.parquet"))]


def test_text_in_a_double_column_of_the_second_file_fails_naming_file_column_types_and_record(tmp_path):
    write(tmp_path, "p1.csv", "id,name,amount\n1,x,1.5\n2,y,2.5\n", 1_000)
    write(tmp_path, "p2.csv", "id,name,amount\n3,z,3.5\n4,w,abc\n", 2_000)
    result = run(tmp_path)
    assert result.returncode == 65, result.stdout + result.stderr  # a data error: not retried
    assert "p2.csv line 3: column 'amount' is double in this dataset" in result.stderr
    assert "p1.csv" in result.stderr and "but string in this file: record 2 holds 'abc'" in result.stderr
    assert published(tmp_path) == []


def test_text_past_the_first_block_of_a_files_double_column_fails_naming_the_record_and_the_block_key(tmp_path):
    # the first file of a first run: its column types are learnt from its first block, which has only numbers
    rows = "".join(f"{i},{i}.5\n" for i in range(20_000)) + "20000,unknown\n"
    write(tmp_path, "p1.csv", "id,amount\n" + rows, 1_000)
    result = run(tmp_path, "source.filebased.csv.block.size=65536\n")
    assert result.returncode == 65, result.stdout + result.stderr
    assert ("p1.csv line 20002: column 'amount' is double in the first source.filebased.csv.block.size=65536 bytes of the "
            "file, that its type is learnt from, but record 20001 holds 'unknown'") in result.stderr
    assert "in this dataset" not in result.stderr and published(tmp_path) == []
    # a block that reaches that record reads the column as text
    assert run(tmp_path).returncode == 0
    assert published(tmp_path)[0].field("amount").type == pa.string()


def test_bad_utf8_in_a_text_column_fails_naming_file_column_and_record(tmp_path):
    write(tmp_path, "p1.csv", b"id,name,amount\n1,ok,1.5\n2,bad\xff\xfename,2.5\n", 1_000)
    result = run(tmp_path)
    assert result.returncode == 65, result.stdout + result.stderr
    assert "p1.csv line 3: column 'name' holds bytes that are not UTF-8 text (record 2 holds 'bad\\xff\\xfename')" \
        in result.stderr
    assert published(tmp_path) == []


def test_bad_utf8_in_a_later_file_fails_too(tmp_path):
    write(tmp_path, "p1.csv", "id,name\n1,ok\n", 1_000)
    write(tmp_path, "p2.csv", b"id,name\n2,\xc3\x28\n", 2_000)
    result = run(tmp_path)
    assert result.returncode == 65, result.stdout + result.stderr
    assert "p2.csv line 2: column 'name' holds bytes that are not UTF-8 text (record 1" in result.stderr
    assert published(tmp_path) == []


def test_a_change_from_the_previous_run_fails_unless_the_job_allows_it(tmp_path):
    write(tmp_path, "p1.csv", "id,amount\n1,1.5\n", 1_000)
    assert run(tmp_path).returncode == 0
    write(tmp_path, "p2.csv", "id,amount\n2,unknown\n", 2_000)
    refused = run(tmp_path)
    assert refused.returncode == 65
    assert ("p2.csv line 2: column 'amount' is double in this dataset (its schema learnt from the dataset's previous run) "
            "but string in this file: record 1 holds 'unknown'") in refused.stderr
    assert len(published(tmp_path)) == 1
    allowed = run(tmp_path, "source.filebased.schema.change=allow\n")
    assert allowed.returncode == 0, allowed.stderr
    assert "schema_changed" in allowed.stderr and "changed from double to string" in allowed.stderr
    assert sorted(str(s.field("amount").type) for s in published(tmp_path)) == ["double", "string"]


def test_files_whose_types_cast_are_published_with_the_dataset_schema(tmp_path):
    write(tmp_path, "p1.csv", "id,amount,note\n1,1.5,\n", 1_000)
    write(tmp_path, "p2.csv", "id,amount,note\n2,3,hello\n", 2_000)  # amount reads as an integer
    result = run(tmp_path)
    assert result.returncode == 0, result.stderr
    assert [str(s.field("amount").type) for s in published(tmp_path)] == ["double", "double"]
    write(tmp_path, "p3.csv", "note,id,amount\nagain,3,4\n", 3_000)  # other column order, note typed last run
    assert run(tmp_path).returncode == 0
    schemas = published(tmp_path)
    assert schemas[-1].names == ["id", "amount", "note"]
    assert str(schemas[-1].field("amount").type) == "double" and str(schemas[-1].field("note").type) == "string"


def test_a_new_or_missing_column_fails_naming_it(tmp_path):
    write(tmp_path, "p1.csv", "id,amount\n1,1.5\n", 1_000)
    write(tmp_path, "p2.csv", "id,amount,extra\n2,2.5,x\n", 2_000)
    write(tmp_path, "p3.csv", "id\n3\n", 3_000)
    with pytest.raises(UsageError, match=r"p2.csv: its columns differ .*column 'extra' is new"):
        read_all(tmp_path / "data", **{"source.filebased.file.pattern": "p[12].csv"})
    with pytest.raises(UsageError, match=r"p3.csv: its columns differ .*column 'amount' is missing"):
        read_all(tmp_path / "data", **{"source.filebased.file.pattern": "p[13].csv"})


def test_json_lines_files_share_one_schema(tmp_path):
    write(tmp_path, "p1.jsonl", json.dumps({"id": 1, "amount": 1.5}) + "\n", 1_000)
    write(tmp_path, "p2.jsonl", json.dumps({"id": 2, "amount": "abc"}) + "\n", 2_000)
    with pytest.raises(UsageError, match=r"p2.jsonl: column 'amount' is double in this dataset .* but a string"):
        read_all(tmp_path / "data")


def test_parquet_files_are_cast_to_the_dataset_schema_or_fail_naming_the_record(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    pq.write_table(pa.table({"id": [1], "amount": [1.5]}), folder / "p1.parquet")
    pq.write_table(pa.table({"id": pa.array([2, 3], pa.int32()), "amount": ["2.5", "3"]}), folder / "p2.parquet")
    rows = read_all(folder)
    assert rows == [{"id": 1, "amount": 1.5}, {"id": 2, "amount": 2.5}, {"id": 3, "amount": 3.0}]
    pq.write_table(pa.table({"id": [4, 5], "amount": ["4", "many"]}), folder / "p2.parquet")
    with pytest.raises(DataError, match=r"p2.parquet record 2: column 'amount' is double .* but string in this file: "
                                         r"record 2 holds 'many'"):
        read_all(folder)
