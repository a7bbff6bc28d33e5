"""Parquet row groups are sized by parquet.block.size (bytes of Arrow data) and a row cap, not by incoming batches."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gobblin_py.formats.parquet import ParquetDataWriter
from gobblin_py.formats.settings import DEFAULT_PARQUET_BLOCK_SIZE, WriterSettings
from gobblin_py.sdk.settings import SettingsError
from tests.support.writers import build, files_under, task_state, write_all


def batches(count: int, rows: int) -> list[pa.RecordBatch]:
    return [pa.record_batch({"id": pa.array(range(b * rows, (b + 1) * rows), pa.int64()),
                             "name": pa.array([f"name {i % 97}" for i in range(b * rows, (b + 1) * rows)])})
            for b in range(count)]


def groups(path: str) -> list[int]:
    meta = pq.ParquetFile(path).metadata
    return [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]


def test_small_batches_make_one_row_group_not_one_each(tmp_path):
    _, outputs = write_all(task_state(tmp_path), *batches(200, 500))
    assert groups(outputs[0]) == [100_000]
    assert pq.read_table(outputs[0]).column("id").to_pylist() == list(range(100_000))


def test_row_groups_hold_about_the_block_size(tmp_path):
    data = batches(100, 1000)
    per_row = sum(b.nbytes for b in data) / 100_000
    _, outputs = write_all(task_state(tmp_path, parquet__block__size="256KB"), *data)
    sizes = groups(outputs[0])
    assert len(sizes) > 3 and sum(sizes) == 100_000
    assert all(abs(n * per_row - 256 * 1024) <= 1000 * per_row for n in sizes[:-1])  # within one batch of it
    assert sizes[-1] <= sizes[0]
    assert pq.read_table(outputs[0]).column("id").to_pylist() == list(range(100_000))


def test_gobblins_writer_file_block_size_is_read_too_and_per_branch(tmp_path):
    props = {"writer.file.block.size": "1MB"}
    assert WriterSettings.load(props).parquet_block_size == 1 << 20
    props = {"parquet.block.size": "1MB", "parquet.block.size.1": "2MB"}
    assert WriterSettings.load(props, branches=2, branch=0).parquet_block_size == 1 << 20  # shared fallback
    assert WriterSettings.load(props, branches=2, branch=1).parquet_block_size == 2 << 20
    assert WriterSettings.load({}).parquet_block_size == DEFAULT_PARQUET_BLOCK_SIZE
    with pytest.raises(SettingsError, match="parquet.block.size"):
        WriterSettings.load({"parquet.block.size": "lots"})


def test_the_row_cap_splits_one_big_batch_into_equal_groups(tmp_path):
    import fsspec

    fs = fsspec.filesystem("file")
    big = pa.concat_batches(batches(10, 1000))
    writer = ParquetDataWriter(fs, f"{tmp_path}/s/f.parquet", f"{tmp_path}/o/f.parquet", big.schema,
                               row_group_rows=3000)
    writer.write(big)
    writer.write(big.slice(0, 500))
    [output] = writer.commit()
    assert groups(output) == [3000, 3000, 3000, 1500]  # the remainder of the big batch waited for the next one


def test_held_rows_count_in_the_size_and_cleanup_writes_nothing(tmp_path):
    writer = build(task_state(tmp_path), batches(1, 10)[0].schema)
    for batch in batches(20, 1000):
        writer.write(batch)
    assert writer.records_written == 20_000
    assert writer.files[0].size > sum(b.nbytes for b in batches(20, 1000)) // 2  # held, yet counted
    writer.cleanup()
    assert files_under(tmp_path) == []


def test_a_target_file_size_caps_the_row_group(tmp_path):
    _, outputs = write_all(task_state(tmp_path, writer__codec__type="none", writer__target__file__size="100KB"),
                           *batches(50, 1000))
    assert len(outputs) > 2
    assert all(len(groups(p)) >= 1 for p in outputs)
    assert sum(sum(groups(p)) for p in outputs) == 50_000


def test_by_default_a_row_group_holds_32_mb_of_arrow_data(tmp_path):
    """A task holds at most one row group before writing it: 32 MB, not 64, so that a big file costs hardly more
    memory than a small one; the 1,048,576-row cap is not what bounds ordinary rows."""
    wide = [pa.record_batch({f"c{c}": pa.array(range(b * 100_000, (b + 1) * 100_000), pa.int64()) for c in range(6)})
            for b in range(8)]  # 48 bytes a row: 4.8 MB a batch, 38.4 MB in all
    _, outputs = write_all(task_state(tmp_path, writer__codec__type="none"), *wide)
    per_group = (32 << 20) // 48
    assert groups(outputs[0]) == [per_group, 800_000 - per_group]


def _encodings(path: str) -> dict[str, tuple[str, ...]]:
    group = pq.ParquetFile(path).metadata.row_group(0)
    return {group.column(i).path_in_schema: group.column(i).encodings for i in range(group.num_columns)}


def test_an_id_like_column_is_written_plain_and_a_repeating_one_with_a_dictionary(tmp_path):
    _, outputs = write_all(task_state(tmp_path), *batches(20, 5000))
    encodings = _encodings(outputs[0])
    assert "RLE_DICTIONARY" not in encodings["id"] and "RLE_DICTIONARY" in encodings["name"]
    assert pq.read_table(outputs[0]).column("id").to_pylist() == list(range(100_000))


def test_a_nested_schema_keeps_a_dictionary_for_every_column(tmp_path):
    rows = pa.record_batch({"id": pa.array(range(1000), pa.int64()),
                            "tags": pa.array([[f"t{i % 3}"] for i in range(1000)])})
    _, outputs = write_all(task_state(tmp_path), rows)
    assert all("RLE_DICTIONARY" in e for e in _encodings(outputs[0]).values())
