"""A JSON-lines field that first appears after the first block (the block size the reader fixes its fields from):
the task fails naming the file, the field, the line and the keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gobblin_py.errors import UsageError
from tests.conftest import run_gpy
from tests.sources.test_filebased_schema import read_all

JOB = """job.name=Orders
source.class=gobblin_py.sources.filebased.FileBasedSource
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




def test_a_late_type_change_names_the_line_counted_from_the_start_of_the_file(tmp_path):
    folder = tmp_path / "data"
    path = lines(tmp_path, late={"id": "oops", "name": "c"})
    with pytest.raises(UsageError) as err:
        read_all(folder, **{"source.filebased.json.block.size": "64KB"})
    assert str(path) in str(err.value) and "'id'" in str(err.value)
    assert f"line {LATE + 1}" in str(err.value)

