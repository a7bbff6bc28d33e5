"""Rewriting an Iceberg table's small data files into files of about ``table.maintenance.target.file.size``, in
one snapshot: gpy's own rewrite, as pyiceberg 0.12 has no rewrite action (Iceberg's ``rewrite_data_files``).

The data files of the current snapshot smaller than the target are packed, partition by partition, into bins of
at most the target (smallest first, as Delta's ``OPTIMIZE`` packs them); a bin of one file is left as it is. Each
bin's files are read through pyiceberg's scan (the table's schema, however old a file's) one at a time and
written into one new Parquet file beside them; the snapshot that removes the old files and adds the new ones is
one ``overwrite`` commit (pyiceberg cannot write a ``replace`` snapshot, Iceberg's name for a rewrite) whose
summary says ``gpy.maintenance=rewrite``. Nothing small, no commit: a rerun on a compacted table adds no snapshot.

Left as they are: files of an earlier partition spec (a new file is written in the current one), and every data
file a merge-on-read delete file applies to (by pyiceberg's scan planning): its rows are only right with its
deletes, which stay with it; the other files are rewritten, and no existing delete applies to a new file (a
position delete names its file; an equality delete only files older than itself).

A kill before the commit leaves the table as it was, the files written so far referenced by nothing: the table's
orphan-file removal deletes them once they are older than the retention. A kill after it leaves the new snapshot;
the old files stay for readers of the older snapshots until those expire.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from gobblin_py.io.crash_points import phase
from gobblin_py.sdk.errors import GobblinPyError

PREFIX = "gpy-rewrite-"
SUMMARY = {"gpy.maintenance": "rewrite"}
ROW_GROUP_BYTES = 64 * 1024 * 1024  # rows gathered in memory before they are written as one row group


@dataclass
class Bin:
    """Small files of one partition rewritten into one file."""

    partition: str  # as messages name it: ``day=2024-01-01``, ``""`` unpartitioned
    tasks: list[Any] = field(default_factory=list)  # pyiceberg FileScanTasks
    size: int = 0

    def add(self, task: Any) -> None:
        self.tasks.append(task)
        self.size += task.file.file_size_in_bytes


@dataclass
class Plan:
    """What a rewrite would do: the bins, and the small files left as they are, with why."""

    bins: list[Bin]
    with_deletes: int = 0  # small files a delete file applies to
    old_spec: int = 0  # small files of an earlier partition spec

    @property
    def files(self) -> int:
        return sum(len(b.tasks) for b in self.bins)


def plan(table: Any, target_size: int) -> Plan:
    """The bins of ``table``'s current snapshot's files below ``target_size`` (see the module)."""
    if table.current_snapshot() is None:
        return Plan([])
    spec = table.spec()
    schema = table.schema()
    by_partition: dict[str, list[Any]] = defaultdict(list)
    found = Plan([])
    for task in table.scan().plan_files():
        data = task.file
        if data.file_size_in_bytes >= target_size:
            continue
        if task.delete_files:
            found.with_deletes += 1
        elif data.spec_id != spec.spec_id:
            found.old_spec += 1
        else:
            by_partition["" if spec.is_unpartitioned() else spec.partition_to_path(data.partition, schema)].append(task)
    for partition, tasks in sorted(by_partition.items()):
        current = Bin(partition)
        for task in sorted(tasks, key=lambda t: (t.file.file_size_in_bytes, t.file.file_path)):
            if current.tasks and current.size + task.file.file_size_in_bytes > target_size:
                found.bins.append(current)
                current = Bin(partition)
            current.add(task)
        found.bins.append(current)
    found.bins = [b for b in found.bins if len(b.tasks) > 1]
    return found


def _write(table: Any, tasks: Iterable[Any], path: str) -> None:
    """The rows of ``tasks``' files, read as the table's current schema, into one Parquet file at ``path`` that
    carries the schema's field ids (a reader needs no name mapping to read it)."""
    from pyiceberg.expressions import AlwaysTrue
    from pyiceberg.io.pyarrow import ArrowScan, schema_to_pyarrow

    metadata = table.metadata
    scan = ArrowScan(table_metadata=metadata, io=table.io, projected_schema=metadata.schema(),
                     row_filter=AlwaysTrue())
    writer: pq.ParquetWriter | None = None
    schema = schema_to_pyarrow(metadata.schema(), include_field_ids=True)
    pending: list[pa.Table] = []
    with table.io.new_output(path).create(overwrite=True) as stream:
        try:
            for task in tasks:
                rows = scan.to_table(tasks=[task])
                if writer is None:
                    writer = pq.ParquetWriter(stream, schema, compression="zstd")
                pending.append(rows.cast(schema))
                if sum(t.nbytes for t in pending) >= ROW_GROUP_BYTES:
                    writer.write_table(pa.concat_tables(pending))
                    pending = []
            if writer is not None and pending:
                writer.write_table(pa.concat_tables(pending))
        finally:
            if writer is not None:
                writer.close()


def _folder(path: str) -> str:
    return path.rsplit("/", 1)[0]


def rewrite(table: Any, found: Plan, where: str) -> int:
    """Carry out ``found`` on ``table``: each bin written into a new file beside its files, then one snapshot that
    swaps them. Returns the new snapshot's id. A commit that fails deletes the files it wrote."""
    from pyiceberg.io.pyarrow import parquet_file_to_data_file

    run = uuid.uuid4().hex[:12]
    written: list[str] = []
    try:
        with phase("table.rewrite.write"):
            for n, bin_ in enumerate(found.bins):
                path = f"{_folder(bin_.tasks[0].file.file_path)}/{PREFIX}{run}-{n:05d}.parquet"
                written.append(path)
                _write(table, bin_.tasks, path)
        with phase("table.rewrite.commit"), table.transaction() as transaction:
            metadata = transaction.table_metadata
            with transaction.update_snapshot(snapshot_properties=dict(SUMMARY)).overwrite() as overwrite:
                for bin_ in found.bins:
                    for task in bin_.tasks:
                        overwrite.delete_data_file(task.file)
                for path in written:
                    overwrite.append_data_file(parquet_file_to_data_file(table.io, metadata, path))
    except Exception as exc:
        for path in written:
            try:
                table.io.delete(path)
            except Exception:  # noqa: BLE001,S110 - what is left is an orphan the orphan removal deletes
                pass
        from pyiceberg.exceptions import CommitFailedException, ValidationException

        if isinstance(exc, (CommitFailedException, ValidationException)):
            raise GobblinPyError(f"table {where}: the rewrite of its small files lost to another writer's commit "
                                 f"({exc}); nothing was changed, run the maintenance again") from None
        raise
    snapshot = table.current_snapshot()
    return int(snapshot.snapshot_id)
