"""Target-file-size rolling: files close at the target, the next gets writer id k + 1, every row survives."""

from __future__ import annotations

import json
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest

from gobblin_py.connectors.files.builder import numbered_name
from gobblin_py.connectors.files.rolling import WriterIds
from gobblin_py.formats.base import parse_size
from gobblin_py.sdk.errors import UsageError
from tests.support.writers import build, files_under, task_state, write_all

TARGET = 64 * 1024


def batches(count: int = 20, rows: int = 1000) -> list[pa.RecordBatch]:
    out = []
    for b in range(count):
        ids = list(range(b * rows, (b + 1) * rows))
        out.append(pa.record_batch({"id": pa.array(ids, pa.int64()),
                                    "text": pa.array([f"row {i} " + "x" * (i % 37) for i in ids])}))
    return out


def read_ids(fmt: str, path: str) -> list[int]:
    if fmt == "PARQUET":
        return pq.read_table(path).column("id").to_pylist()
    if fmt == "ORC":
        return orc.read_table(path).column("id").to_pylist()
    if fmt == "AVRO":
        with open(path, "rb") as f:
            return [r["id"] for r in fastavro.reader(f)]
    if fmt == "JSON":
        return [json.loads(line)["id"] for line in Path(path).read_text().splitlines()]
    return pcsv.read_csv(path).column("id").to_pylist()


@pytest.mark.parametrize("fmt", ["PARQUET", "AVRO", "ORC", "JSON", "CSV"])
def test_files_roll_at_the_target_size_and_keep_every_row(tmp_path, fmt):
    data = batches()
    writer, outputs = write_all(task_state(tmp_path, writer__output__format=fmt, writer__codec__type="none",
                                           writer__target__file__size="64KB"), *data)
    ext = fmt.lower()
    assert len(outputs) >= 3
    assert [Path(p).name for p in outputs] == [f"part.task_7_{k}.{ext}" for k in range(len(outputs))]
    sizes = [Path(p).stat().st_size for p in outputs]
    assert all(size >= TARGET for size in sizes[:-1])       # a file closes once it reaches the target …
    assert all(size < TARGET * 1.6 for size in sizes)       # … and big batches are split so it does not run far past
    ids = [i for p in outputs for i in read_ids(fmt, p)]
    assert ids == list(range(20_000))                       # every row, in order, once
    assert writer.records_written == 20_000 and writer.bytes_written == sum(sizes)
    assert files_under(tmp_path / "staging") == []


def test_one_big_batch_is_split_across_files(tmp_path):
    big = pa.concat_batches(batches(10))
    _, outputs = write_all(task_state(tmp_path, writer__codec__type="none", writer__target__file__size="32k"), big)
    assert len(outputs) > 3
    assert [i for p in outputs for i in read_ids("PARQUET", p)] == list(range(10_000))


def test_no_target_means_one_file(tmp_path):
    _, outputs = write_all(task_state(tmp_path), *batches(5))
    assert [Path(p).name for p in outputs] == ["part.task_7_0.parquet"]


def test_rolled_files_stay_staged_until_commit_and_cleanup_removes_them(tmp_path):
    writer = build(task_state(tmp_path, writer__codec__type="none", writer__target__file__size="16KB"),
                   batches(1)[0].schema)
    for batch in batches(5):
        writer.write(batch)
    staged = files_under(tmp_path / "staging")
    assert len(staged) > 2 and files_under(tmp_path / "output") == []
    writer.cleanup()  # the task failed: nothing of it may remain
    assert files_under(tmp_path) == []


def test_rolling_with_an_explicit_file_name(tmp_path):
    _, outputs = write_all(task_state(tmp_path, writer__output__format="CSV", writer__file__name="orders.csv",
                                      writer__target__file__size="32KB"), *batches(5))
    assert [Path(p).name for p in outputs][:3] == ["orders.csv", "orders_1.csv", "orders_2.csv"]


def test_writer_ids():
    ids = WriterIds("task_3_0")
    assert [ids.next() for _ in range(3)] == ["task_3_0", "task_3_1", "task_3_2"]
    ids = WriterIds("custom")
    assert [ids.next() for _ in range(2)] == ["custom", "custom_1"]


def test_numbered_names():
    assert numbered_name("data.csv.gz", 0, "csv.gz") == "data.csv.gz"
    assert numbered_name("data.csv.gz", 2, "csv.gz") == "data_2.csv.gz"
    assert numbered_name("data", 1, "avro") == "data_1"


@pytest.mark.parametrize("text,size", [("134217728", 134217728), ("128MB", 128 << 20), ("128m", 128 << 20),
                                       ("1.5GiB", int(1.5 * (1 << 30))), ("64 kb", 64 << 10), ("", None), ("0", None)])
def test_sizes(text, size):
    assert parse_size("writer.target.file.size", text) == size


def test_a_bad_size_is_refused(tmp_path):
    with pytest.raises(UsageError, match="key 'writer.target.file.size': 'lots': not a size"):
        build(task_state(tmp_path, writer__target__file__size="lots"))
