"""The Iceberg maintenance job's rewrite of small files: partition by partition into files of about the target size,
in one snapshot, the same rows by identity before and after; nothing small, no snapshot; a SIGKILL before or after
its commit leaves the table readable with the same rows, and the rerun finishes and deletes what the killed run
wrote."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from gobblin_py.connectors.iceberg import rewrite
from gobblin_py.io.crash_points import KILL_ENV, PHASE_LOG_ENV
from tests.support.cli import run_gpy_here
from tests.support.maintenance import iceberg_maintenance_job, iceberg_rows, iceberg_table
from tests.tables.iceberg_reads import catalog, referenced_files

NOW = {"table.maintenance.retention.hours": "0", "table.maintenance.enforce.retention": "false"}


def data_files(root: Path) -> set[str]:
    return {str(p) for p in (root / "warehouse").rglob("*.parquet")}


def test_small_files_are_rewritten_into_one_snapshot_and_a_rerun_adds_none(tmp_path):
    _, load = iceberg_table(tmp_path)
    before, files_before = iceberg_rows(load()), referenced_files(load())
    assert len(files_before) == 3 and len(load().snapshots()) == 3
    path = iceberg_maintenance_job(tmp_path, **NOW)

    dry = run_gpy_here("run", str(path), "--dry-run")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert "would rewrite  3 file(s) of the table into 1" in dry.stdout
    assert "3 small file(s) of shop.orders would be rewritten into 1 (dry run)" in dry.stdout
    assert len(load().snapshots()) == 3 and referenced_files(load()) == files_before

    done = run_gpy_here("run", str(path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "rewrote 3 small file(s) of shop.orders into 1" in done.stdout
    table = load()
    current = table.current_snapshot()
    assert current.summary["gpy.maintenance"] == "rewrite" and current.summary.operation.value == "overwrite"
    assert current.summary["deleted-data-files"] == "3" and current.summary["added-data-files"] == "1"
    assert iceberg_rows(table) == before  # the same rows, each once
    (new,) = referenced_files(table)
    assert Path(new).name.startswith(rewrite.PREFIX) and Path(new).parent == Path(next(iter(files_before))).parent
    # the older snapshots expired in the same run, their files orphans it deleted
    assert [s.snapshot_id for s in table.snapshots()] == [current.snapshot_id]
    assert data_files(tmp_path) == {new}

    again = run_gpy_here("run", str(path))
    assert again.returncode == 0, again.stdout + again.stderr
    assert "0 small file(s) of shop.orders rewritten: none to compact" in again.stdout
    assert load().current_snapshot().snapshot_id == current.snapshot_id  # no empty snapshot


def _partitioned(tmp_path: Path):
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import LongType, NestedField, StringType

    schema = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "country", StringType(),
                                                                                  required=False))
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="country"))
    (tmp_path / "state").mkdir()
    tables = catalog(tmp_path / "state", tmp_path / "warehouse")
    tables.create_namespace("shop")
    table = tables.create_table("shop.orders", schema=schema, partition_spec=spec)
    for n in range(3):
        table.append(pa.table({"id": pa.array([n * 10 + i for i in range(4)], pa.int64()),
                               "country": ["FR", "DE", "FR", "DE"]}))
    return table


def _rows(table) -> list[tuple]:
    return sorted((r["id"], r["country"]) for r in table.scan().to_arrow().to_pylist())


def test_each_partitions_small_files_are_packed_into_files_of_at_most_the_target(tmp_path):
    table = _partitioned(tmp_path)
    before = _rows(table)
    sizes = sorted(t.file.file_size_in_bytes for t in table.scan().plan_files())
    assert len(sizes) == 6  # three appends, two partitions each

    found = rewrite.plan(table, target_size=10**9)
    assert sorted((b.partition, len(b.tasks)) for b in found.bins) == [("country=DE", 3), ("country=FR", 3)]
    # a target that holds two files but not three: a bin of two and a lone file (left as it is) per partition
    assert sorted(len(b.tasks) for b in rewrite.plan(table, target_size=sizes[-1] * 2 + 1).bins) == [2, 2]
    assert rewrite.plan(table, target_size=sizes[0]).bins == []  # nothing small

    snapshots = len(table.snapshots())
    rewrite.rewrite(table, found, "shop.orders")
    assert len(table.snapshots()) == snapshots + 1 and _rows(table) == before
    tasks = list(table.scan().plan_files())
    assert len(tasks) == 2
    for task in tasks:  # each new file holds one partition's rows, and says which
        rows = table.scan(row_filter=f"country == '{task.file.partition[0]}'").to_arrow()
        assert set(rows.column("country").to_pylist()) == {task.file.partition[0]} and rows.num_rows == 6
    assert rewrite.plan(table, target_size=10**9).bins == []


@pytest.mark.parametrize("kill, committed", [("table.rewrite.commit:1:0", False),
                                             ("table.rewrite.commit:1:600", True)])
def test_a_killed_rewrite_leaves_the_same_rows_and_the_rerun_finishes_and_deletes_its_files(tmp_path, kill,
                                                                                            committed):
    _, load = iceberg_table(tmp_path, runs=2)
    before, snapshots = iceberg_rows(load()), len(load().snapshots())
    path = iceberg_maintenance_job(tmp_path, **NOW)
    log = tmp_path / "phases.log"
    killed = subprocess.run([sys.executable, "-m", "gobblin_py.cli", "run", str(path)], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120,
                            env={**os.environ, KILL_ENV: kill, PHASE_LOG_ENV: str(log)})
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    assert f"kill {kill.rsplit(':', 1)[0].replace(':', ' ')} {'end' if committed else 'mid'}" in log.read_text()
    table = load()
    assert iceberg_rows(table) == before and len(table.snapshots()) == snapshots + committed
    written = {f for f in data_files(tmp_path) if Path(f).name.startswith(rewrite.PREFIX)}
    assert bool(written & referenced_files(table)) == committed

    rerun = run_gpy_here("run", str(path))
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    table = load()
    assert iceberg_rows(table) == before and len(table.snapshots()) == 1
    assert data_files(tmp_path) == referenced_files(table) and len(referenced_files(table)) == 1


def _delete_first_row(table, victim: str, folder: Path) -> None:
    """A merge-on-read delete of ``victim``'s first row, as Spark or Flink write one: a position-delete file
    bounded to ``victim`` in a delete manifest (pyiceberg writes no delete files: this builds one by hand)."""
    import pyarrow.parquet as pq
    from pyiceberg.manifest import (
        DataFile,
        DataFileContent,
        FileFormat,
        ManifestContent,
        ManifestEntry,
        ManifestEntryStatus,
        ManifestWriterV2,
    )
    from pyiceberg.table.snapshots import Operation
    from pyiceberg.table.update.snapshot import _FastAppendFiles

    path = folder / "position-deletes.parquet"
    pq.write_table(pa.table({"file_path": [victim], "pos": pa.array([0], pa.int64())}), path)
    bound = {2147483546: victim.encode()}  # the file_path column's id: the delete applies to victim only

    class DeleteManifest(ManifestWriterV2):
        def content(self):
            return ManifestContent.DELETES

    class AddDeletes(_FastAppendFiles):
        def _manifests(self):
            with DeleteManifest(self.spec(0), self.schema(), self.new_manifest_output(), self._snapshot_id,
                                self._compression) as writer:
                writer.add(ManifestEntry.from_args(
                    status=ManifestEntryStatus.ADDED, snapshot_id=self._snapshot_id, data_file=DataFile.from_args(
                        content=DataFileContent.POSITION_DELETES, file_path=str(path), file_format=FileFormat.PARQUET,
                        partition={}, record_count=1, file_size_in_bytes=path.stat().st_size, spec_id=0,
                        lower_bounds=bound, upper_bounds=bound)))
            return [writer.to_manifest_file(), *self._existing_manifests()]

    with table.transaction() as transaction:
        AddDeletes(operation=Operation.OVERWRITE, transaction=transaction, io=table.io).commit()


def test_files_a_merge_on_read_delete_applies_to_are_left_with_their_deletes_and_the_others_rewritten(tmp_path):
    _, load = iceberg_table(tmp_path)
    table = load()
    victim = min(t.file.file_path for t in table.scan().plan_files())
    _delete_first_row(table, victim, Path(victim.removeprefix("file://")).parent)
    before = iceberg_rows(table)
    assert len(before) == 14  # 15 rows, one deleted

    found = rewrite.plan(table, target_size=10**9)
    assert found.with_deletes == 1 and [len(b.tasks) for b in found.bins] == [2]
    rewrite.rewrite(table, found, "shop.orders")
    assert iceberg_rows(table) == before
    tasks = list(table.scan().plan_files())
    assert sorted((t.file.file_path == victim, len(t.delete_files)) for t in tasks) == [(False, 0), (True, 1)]
    assert rewrite.plan(table, target_size=10**9).bins == []  # the file with deletes stays as it is
