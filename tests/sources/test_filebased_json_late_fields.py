"""A JSON-lines field that first appears after the first block (the block size the reader fixes its fields from):
with the default policy the task fails naming the file, the field, the line and the keys; with
``source.filebased.schema.change=allow`` every field of every line is published, exactly once."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from gobblin_py.sdk.errors import UsageError
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
source.filebased.json.block.size=64KB
"""
LINES = 6000
LATE = 4000  # 0-based: well after the first 64 KB block


def lines(folder: Path, name: str = "orders.jsonl", late: dict | None = None, at: int = LATE) -> Path:
    records = [{"id": i, "name": f"n{i}"} for i in range(LINES)]
    if late is not None:
        records[at] = late
    path = folder / "data" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return path


def run(folder: Path, extra: str = ""):
    (folder / "job.pull").write_text(JOB + extra)
    return run_gpy("run", "job.pull", "--engine", "local", cwd=folder)


def test_a_field_first_seen_after_the_first_block_fails_naming_file_field_line_and_keys(tmp_path):
    path = lines(tmp_path, late={"id": LATE, "name": "c", "coupon": "X1"})
    result = run(tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"{path}: line {LATE + 1} has field 'coupon'" in result.stderr
    assert "source.filebased.schema.change=allow" in result.stderr
    assert "source.filebased.json.block.size" in result.stderr
    assert not list((tmp_path / "published").rglob("*.parquet"))


def test_with_allow_a_late_field_is_published_with_every_line_once(tmp_path):
    lines(tmp_path, late={"id": LATE, "name": "c", "coupon": "X1", "extra": {"n": 1}})
    result = run(tmp_path, "source.filebased.schema.change=allow\n")
    assert result.returncode == 0, result.stdout + result.stderr
    table = pq.read_table(next((tmp_path / "published").rglob("*.parquet")))
    assert sorted(table.column("id").to_pylist()) == list(range(LINES))
    assert [c for c in table.column("coupon").to_pylist() if c is not None] == ["X1"]
    assert [e for e in table.column("extra").to_pylist() if e is not None] == [{"n": 1}]
    assert table.num_rows == LINES


def test_with_allow_fields_first_seen_in_several_later_blocks_are_all_published(tmp_path):
    folder = tmp_path / "data"
    records = [{"id": i, "pad": "x" * 20} for i in range(LINES)]  # about 1,800 lines a block
    records[3000]["a"] = 1
    records[5000]["b"] = "x"
    folder.mkdir()
    (folder / "f.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    rows = read_all(folder, **{"source.filebased.json.block.size": "64KB", "source.filebased.schema.change": "allow"})
    assert sorted(r["id"] for r in rows) == list(range(LINES))
    assert [r["a"] for r in rows if r["a"] is not None] == [1]
    assert [r["b"] for r in rows if r["b"] is not None] == ["x"]


def test_a_late_type_change_names_the_line_counted_from_the_start_of_the_file(tmp_path):
    folder = tmp_path / "data"
    path = lines(tmp_path, late={"id": "oops", "name": "c"})
    with pytest.raises(UsageError) as err:
        read_all(folder, **{"source.filebased.json.block.size": "64KB"})
    assert str(path) in str(err.value) and "'id'" in str(err.value)
    assert f"line {LATE + 1}" in str(err.value)


def test_with_allow_a_late_field_inside_an_object_fails_naming_it_and_the_key(tmp_path):
    folder = tmp_path / "data"
    path = lines(tmp_path, name="nested.jsonl")
    records = [{"id": i, "meta": {"a": i}} for i in range(LINES)]
    records[LATE]["meta"]["b"] = "x"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    with pytest.raises(UsageError) as err:
        read_all(folder, **{"source.filebased.json.block.size": "64KB", "source.filebased.schema.change": "allow"})
    assert f"{path}: line {LATE + 1} has field 'meta.b'" in str(err.value)
    assert "source.filebased.json.block.size" in str(err.value)


def test_a_field_null_in_the_first_block_and_typed_later_names_the_block_size_key(tmp_path):
    folder = tmp_path / "data"
    path = lines(tmp_path, name="nulls.jsonl")
    records = [{"id": i, "note": None, "pad": "x" * 20} for i in range(LINES)]
    records[LATE]["note"] = 7
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    with pytest.raises(UsageError) as err:
        read_all(folder, **{"source.filebased.json.block.size": "64KB"})
    message = str(err.value)
    assert f"line {LATE + 1} holds 7" in message and "'note'" in message
    assert "source.filebased.json.block.size" in message
