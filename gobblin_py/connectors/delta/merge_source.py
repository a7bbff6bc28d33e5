"""The source of an upsert: the run's files, one row per key, streamed as Arrow batches.

A run may hold several rows of one key (a row updated twice between runs, read twice by an incremental pull):
the latest wins, by the watermark column (``extract.delta.fields``: the SQL source's delta column, or the
``COALESCE`` of several), and among rows of the same watermark (or without one) the one written last (files in
their tasks' order, rows in their file's). Which rows win is found from the key and watermark columns alone, read
from every file once; the rows themselves are then read file by file, batch by batch, each batch cast to the
table's schema (a column the file lacks as nulls) and filtered to its winners, so the run's data is never held
in memory as a whole. A null in a key column fails the dataset: such a row could never be matched again.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from gobblin_py.io import fs as fsutil
from gobblin_py.sdk.errors import UsageError

BATCH_ROWS = 65_536
_FILE, _ROW, _ORDER, _HAS_ORDER = "__gpy_file", "__gpy_row", "__gpy_order", "__gpy_has_order"


def merge_source(files: Sequence[str], target: pa.Schema, keys: Sequence[str], order: Sequence[str],
                 where: str) -> pa.RecordBatchReader:
    """A reader of the rows of ``files`` (in this order) that win their key, in the ``target`` schema."""
    winners = _winners(files, keys, order, where)

    def batches() -> Iterator[pa.RecordBatch]:
        for index, path in enumerate(files):
            offset = 0
            for batch in _batches(path):
                conformed = _conform(batch, target, path)
                if winners is not None:
                    conformed = conformed.filter(winners[index].slice(offset, batch.num_rows))
                offset += batch.num_rows
                if conformed.num_rows:
                    yield conformed

    return pa.RecordBatchReader.from_batches(target, batches())


def _batches(path: str) -> Iterator[pa.RecordBatch]:
    import pyarrow.parquet as pq

    fs, local = fsutil.open_fs(path)
    with fs.open(local, "rb") as stream:
        yield from pq.ParquetFile(stream).iter_batches(batch_size=BATCH_ROWS)


def _read_columns(path: str, columns: list[str]) -> pa.Table:
    import pyarrow.parquet as pq

    fs, local = fsutil.open_fs(path)
    with fs.open(local, "rb") as stream:
        parquet = pq.ParquetFile(stream)
        present = [c for c in columns if c in parquet.schema_arrow.names]
        table = parquet.read(columns=present)
    for name in columns:
        if name not in present:
            table = table.append_column(name, pa.nulls(table.num_rows))
    return table


def _winners(files: Sequence[str], keys: Sequence[str], order: Sequence[str], where: str) -> list[pa.Array] | None:
    """Per file, a mask of the rows that win their key; None when no key repeats (every row wins)."""
    import numpy as np

    parts = []
    for index, path in enumerate(files):
        part = _read_columns(path, [*keys, *order])
        for key in keys:
            nulls = part.column(key).null_count
            if nulls:
                raise UsageError(f"{where}: {path}: column {key} of table.merge.key is null in {nulls} row(s); a "
                                 "row without a key cannot be merged (filter such rows out, or choose other key "
                                 "columns)")
        columns = {k: _plain(part.column(k)) for k in keys}
        if order:  # a row without a watermark loses to one with (sorted first)
            columns[_ORDER] = _order_of([_plain(part.column(c)) for c in order])
            columns[_HAS_ORDER] = pc.is_valid(columns[_ORDER])
        columns[_FILE] = pa.array(np.full(part.num_rows, index, np.int32))
        columns[_ROW] = pa.array(np.arange(part.num_rows, dtype=np.int64))
        parts.append(pa.table(columns))
    rows = pa.concat_tables(parts, promote_options="permissive") if parts else pa.table({})
    if rows.num_rows == 0 or rows.group_by(list(keys)).aggregate([]).num_rows == rows.num_rows:
        return None
    sort = [(k, "ascending") for k in keys] + ([(_HAS_ORDER, "ascending"), (_ORDER, "ascending")] if order else []) \
        + [(_FILE, "ascending"), (_ROW, "ascending")]
    ordered = rows.sort_by(sort)
    last = None  # a row is the last of its key when the next row's key differs
    for key in keys:
        column = ordered.column(key).combine_chunks()
        differs = pc.fill_null(pc.not_equal(column.slice(0, len(column) - 1), column.slice(1)), True)
        last = differs if last is None else pc.or_(last, differs)
    assert last is not None
    won = ordered.filter(pa.concat_arrays([last, pa.array([True])]))
    masks = []
    for index, part in enumerate(parts):
        rows_won = won.filter(pc.equal(won.column(_FILE), index)).column(_ROW)
        masks.append(pc.is_in(part.column(_ROW), value_set=rows_won.combine_chunks()).combine_chunks())
    return masks


def _plain(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """A column comparable and sortable: a dictionary as its values."""
    if pa.types.is_dictionary(column.type):
        return column.cast(column.type.value_type)
    return column


def _order_of(columns: list[pa.ChunkedArray]) -> pa.ChunkedArray:
    """The watermark of each row: the first non-null of the watermark columns (as the SQL source's COALESCE)."""
    if len(columns) == 1 or any(c.type != columns[0].type for c in columns):
        return columns[0]
    return pc.coalesce(*columns)


def _conform(batch: pa.RecordBatch, target: pa.Schema, path: str) -> pa.RecordBatch:
    """``batch`` in ``target``'s columns and types: a column it lacks as nulls."""
    arrays = []
    for field in target:
        if field.name not in batch.schema.names:
            arrays.append(pa.nulls(batch.num_rows, field.type))
            continue
        column = batch.column(field.name)
        try:
            arrays.append(column if column.type == field.type else column.cast(field.type))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise UsageError(f"{path}: column {field.name} ({column.type}) does not read as the table's "
                             f"{field.type}: {exc}") from None
    return pa.RecordBatch.from_arrays(arrays, schema=target)
