"""The upsert of :mod:`.merge` as one pyiceberg overwrite snapshot: rewritten files out and in, the run's files in."""

from __future__ import annotations

import itertools
import json
import posixpath
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from gobblin_py.connectors.iceberg.catalog import data_url
from gobblin_py.connectors.iceberg.merge import MergeSpec, candidate_filter, merge_prefix, run_keys, without_keys
from gobblin_py.io import fs as fsutil
from gobblin_py.sdk.logs import get_logger

log = get_logger(__name__)


def _open(url: str) -> tuple[Any, str]:
    return fsutil.open_fs(url.removeprefix("file://") if url.startswith("file:///") else url)


def _remove_leftovers(table: Any, run: str) -> None:
    """Delete the files an unfinished merge of ``run`` wrote (in no snapshot: its commit never happened)."""
    fs, folder = _open(data_url(table))
    prefix = merge_prefix(run)
    try:
        names = fs.ls(folder, detail=False)
    except FileNotFoundError:
        return
    for path in names:
        if posixpath.basename(str(path)).startswith(prefix):
            fs.rm_file(path)


def merge(transaction: Any, table: Any, files: Sequence[str], spec: MergeSpec, run: str,
          summary: Mapping[str, str], where: str) -> list[str]:
    """Within ``transaction``: the table's rows of the run's keys rewritten away, the run's files added (those
    holding a row that a later one of its key beats rewritten without it); the run's files so replaced."""
    from pyiceberg.expressions import AlwaysTrue
    from pyiceberg.io.pyarrow import ArrowScan, parquet_file_to_data_file
    from pyiceberg.table import TableProperties

    io = table.io
    _remove_leftovers(table, run)
    if transaction.table_metadata.name_mapping() is None:  # the run's files carry no field ids: read by name
        mapping = transaction.table_metadata.schema().name_mapping.model_dump_json()
        transaction.set_properties(**{TableProperties.DEFAULT_NAME_MAPPING: mapping})
    keys, losers = run_keys(io, files, spec, where)
    metadata = transaction.table_metadata
    counter = itertools.count()
    folder = data_url(table)

    def write(rows: pa.Table) -> str:
        path = f"{folder}/{merge_prefix(run)}{next(counter):05d}.parquet"
        with io.new_output(path).create(overwrite=True) as stream:
            pq.write_table(rows, stream)
        return path

    added = list(files)
    superseded: list[str] = []
    for n, rows in losers.items():
        with io.new_input(files[n]).open() as stream:
            data = pq.read_table(stream)
        kept = data.filter(pc.invert(pc.is_in(pa.array(range(data.num_rows), pa.int64()), rows)))
        superseded.append(files[n])
        added[n] = write(kept) if kept.num_rows else ""
    rewritten = replaced = 0
    with transaction.update_snapshot(snapshot_properties=dict(summary)).overwrite() as overwrite:
        for task in table.scan(row_filter=candidate_filter(keys, spec)).plan_files():
            data = ArrowScan(table_metadata=metadata, io=io, projected_schema=metadata.schema(),
                             row_filter=AlwaysTrue()).to_table(tasks=[task])
            kept = without_keys(data, keys, spec)
            if kept.num_rows == data.num_rows:
                continue
            overwrite.delete_data_file(task.file)
            replaced += data.num_rows - kept.num_rows
            rewritten += 1
            if kept.num_rows:
                overwrite.append_data_file(parquet_file_to_data_file(io, metadata, write(kept)))
        for path in added:
            if path:
                overwrite.append_data_file(parquet_file_to_data_file(io, metadata, path))
    log.info("iceberg_merged", table=where, keys=list(spec.keys), run_keys=keys.num_rows, rows_replaced=replaced,
             files_rewritten=rewritten, run_rows_superseded=sum(len(r) for r in losers.values()))
    return superseded


def rewritten_earlier(table: Any, prop: str, run: str) -> list[str]:
    """The files of an earlier run that its merge rewrote (its own files holding a row a later one beat), as its
    commit recorded them in the table property ``prop``; none when ``run`` recorded them. They stay where the
    run's moves put them until then: a replay of that run's commit checks them there."""
    value = table.properties.get(prop)
    if not value:
        return []
    recorded = json.loads(value)
    if recorded.get("run") == run:
        return []
    base = data_url(table)
    return [name if "://" in name else f"{base}/{name}" for name in recorded.get("files", [])]


def record_rewritten(transaction: Any, table: Any, prop: str, run: str, paths: Sequence[str]) -> None:
    """Within ``transaction``: ``prop`` names the files of ``run`` its merge rewrote (for the next merge to delete),
    or is removed when there are none."""
    base = data_url(table) + "/"
    names = [path.removeprefix(base) for path in paths]
    if names:
        transaction.set_properties(**{prop: json.dumps({"run": run, "files": names}, separators=(",", ":"))})
    elif prop in table.properties:
        transaction.remove_properties(prop)


def remove_files(table: Any, paths: Sequence[str]) -> None:
    """Delete files no snapshot of the table holds (a finished run's files that its merge rewrote)."""
    for path in paths:
        fs, local = _open(path)
        try:
            fs.rm_file(local)
        except FileNotFoundError:
            pass
