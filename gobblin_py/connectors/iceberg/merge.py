"""Upsert into an Iceberg table (``table.merge.key``): a run's rows replace the table's rows of the same key.

In one snapshot: every data file of the table that holds a key of the run is rewritten without those rows
(copy-on-write, a file at a time: memory holds one file), and the run's files are added. Within a run, the row
with the latest ``table.merge.order.column`` value wins for its key (the last one written where there is none, or
on a tie); when a run holds a key twice, the run's files that hold a losing row are rewritten without it. Files the
merge writes are named ``merge-<run id>-<n>.parquet`` in the table's data folder: a merge replayed after a crash
removes those an unfinished attempt left before it writes its own, so none is left unreferenced.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from gobblin_py.io import fs as fsutil
from gobblin_py.sdk.errors import UsageError

ROW = "__gpy_row"
HAS_ORDER = "__gpy_has_order"  # 1 where the row has an order value
FILE = "__gpy_file"


@dataclass(frozen=True)
class MergeSpec:
    """The key columns of a merge, and the column whose latest value wins within a run (None: the last row)."""

    keys: tuple[str, ...]
    order: str | None = None


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def merge_prefix(run: str) -> str:
    """The name prefix of the files a run's merge writes."""
    return f"merge-{_safe(run)}-"


def check_keys(sources: Sequence[str], spec: MergeSpec, where: str) -> None:
    """UsageError naming the file and the column when a row of the run's files (``sources``, before they move)
    has no key: such a row can never be matched."""
    for source in sources:
        fs, local = fsutil.open_fs(source)
        with fs.open(local, "rb") as stream:
            parquet = pq.ParquetFile(stream)
            for key in spec.keys:
                nulls = _nulls(parquet, key)
                if nulls:
                    raise UsageError(f"{where}: {source}: column {key} of table.merge.key is null in {nulls} row(s); "
                                     "a row without a key cannot be merged (filter such rows out, or choose other key "
                                     "columns); nothing was moved and the watermark is kept")


def _nulls(parquet: pq.ParquetFile, column: str) -> int:
    """How many rows of ``parquet`` have no value in top-level ``column``: its footer's null counts, or else the
    column read (every row when the file lacks it)."""
    metadata = parquet.metadata
    names = [metadata.schema.column(i).path for i in range(metadata.num_columns)]
    if column not in names:
        return metadata.num_rows
    index = names.index(column)
    stats = [metadata.row_group(g).column(index).statistics for g in range(metadata.num_row_groups)]
    if all(s is not None and s.has_null_count for s in stats):
        return sum(s.null_count for s in stats)
    return parquet.read(columns=[column]).column(0).null_count


def run_keys(io: Any, files: Sequence[str], spec: MergeSpec, where: str) -> tuple[pa.Table, dict[int, pa.Array]]:
    """The run's winning key of each row, and per file the rows that lose to a later one of the same key."""
    parts = []
    for n, path in enumerate(files):
        with io.new_input(path).open() as stream:
            parquet = pq.ParquetFile(stream)
            # a file written before the source gained the order column has none: its rows lose (read as null)
            columns = [c for c in (*spec.keys, *([spec.order] if spec.order else []))
                       if c in parquet.schema_arrow.names]
            found = parquet.read(columns=columns)
        found = found.append_column(FILE, pa.array([n] * found.num_rows, pa.int32()))
        parts.append(found.append_column(ROW, pa.array(range(found.num_rows), pa.int64())))
    rows = pa.concat_tables(parts, promote_options="permissive")
    for key in spec.keys:
        if rows.column(key).null_count:
            raise UsageError(f"{where}: a row of the run has no value in merge key column {key}")
    sort = [(FILE, "ascending"), (ROW, "ascending")]
    if spec.order:  # a row without an order value loses to every row with one (as Delta's merge has it)
        rows = rows.append_column(HAS_ORDER, pc.cast(pc.is_valid(rows.column(spec.order)), pa.int8()))
        sort = [(HAS_ORDER, "ascending"), (spec.order, "ascending"), *sort]
    ordered = rows.take(pc.sort_indices(rows, sort_keys=sort))
    # the last row of each key in that order wins
    position = pa.array(range(ordered.num_rows), pa.int64())
    latest = ordered.append_column("__pos", position).group_by(list(spec.keys)).aggregate([("__pos", "max")])
    keep = pc.is_in(position, latest.column("__pos_max"))
    losers = ordered.filter(pc.invert(keep))
    lost: dict[int, pa.Array] = {}
    for n in set(losers.column(FILE).to_pylist()):
        lost[n] = losers.filter(pc.equal(losers.column(FILE), n)).column(ROW).combine_chunks()
    return latest.select(list(spec.keys)), lost


def without_keys(data: pa.Table, keys: pa.Table, spec: MergeSpec) -> pa.Table:
    """``data``'s rows whose key is not among ``keys``."""
    if data.num_rows == 0:
        return data
    if len(spec.keys) == 1:
        key = spec.keys[0]
        return data.filter(pc.invert(pc.is_in(data.column(key), keys.column(key).cast(data.column(key).type))))
    marked = keys.append_column("__hit", pa.array([True] * keys.num_rows))
    numbered = data.append_column("__n", pa.array(range(data.num_rows), pa.int64()))
    joined = numbered.join(marked, list(spec.keys), join_type="left outer")
    drop = joined.filter(pc.is_valid(joined.column("__hit"))).column("__n")
    return data.filter(pc.invert(pc.is_in(pa.array(range(data.num_rows), pa.int64()), drop)))


def candidate_filter(keys: pa.Table, spec: MergeSpec) -> Any:
    """A row filter that holds every table row of the run's keys (more where the key has several columns): it
    lets the scan skip files whose statistics rule them out."""
    from pyiceberg.expressions import AlwaysFalse, And, BooleanExpression, In

    if keys.num_rows == 0:
        return AlwaysFalse()
    found: BooleanExpression | None = None
    for column in spec.keys:
        part = In(column, pc.unique(keys.column(column)).to_pylist())  # type: ignore[call-arg, arg-type]
        found = part if found is None else And(found, part)
    return found
