"""Table maintenance jobs on the tables gpy publishes: ``DeltaMaintenanceJob`` compacts a table's small files
into one commit and vacuums the files no version in the retention references; ``IcebergMaintenanceJob`` rewrites
small files (more in test_iceberg_rewrite.py) and expires snapshots past the retention. The rows are the same rows, by identity, before and after, and a SIGKILL mid-run
leaves the table readable and the rerun finishes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from gobblin_py.io.crash_points import KILL_ENV, PHASE_LOG_ENV
from tests.support.cli import run_gpy_here
from tests.support.table_jobs import delta_job as job
from tests.support.table_jobs import run, write_csv
from tests.support.maintenance import iceberg_maintenance_job, iceberg_rows, iceberg_table, published_table, rows
from tests.tables.delta_reads import commits, referenced_files
from tests.tables.iceberg_reads import referenced_files as referenced_iceberg_files

JOB_CLASS = "DeltaMaintenanceJob"


def maintenance_job(root: Path, **extra: str) -> Path:
    props = {"job.name": "Maintain", "job.class": JOB_CLASS, "delta.table.uri": f"{root}/lake/shop/orders", **extra}
    path = root / "maintain.pull"
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return path


def data_files(table: Path) -> set[str]:
    return {str(p) for p in table.rglob("*.parquet") if "_delta_log" not in p.parts}


def test_optimize_compacts_small_files_in_one_commit_and_vacuum_deletes_only_unreferenced_ones(tmp_path):
    table = published_table(tmp_path)
    before, files_before = rows(table), data_files(table)
    assert len(before) == 15 and len(files_before) == 3
    path = maintenance_job(tmp_path, **{"table.maintenance.retention.hours": "0",
                                        "table.maintenance.enforce.retention": "false"})

    dry = run_gpy_here("run", str(path), "--dry-run")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert "3 small file(s)" in dry.stdout and "would compact  3 file(s) of the table" in dry.stdout
    assert data_files(table) == files_before and len(commits(table)) == 3  # nothing changed

    done = run_gpy_here("run", str(path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "compacted 3 file(s)" in done.stdout and "3 unreferenced file(s) older than 0 h deleted" in done.stdout
    # one commit rewrites the files; vacuum logs its start and end
    assert [c["operation"] for c in commits(table)][3:] == ["OPTIMIZE", "VACUUM START", "VACUUM END"]
    assert rows(table) == before  # the same rows, each once
    assert data_files(table) == referenced_files(table) and len(data_files(table)) == 1
    assert not data_files(table) & files_before

    # the ingestion job goes on appending to the maintained table
    write_csv(tmp_path / "data" / "9.csv", "id,name", ["90,r9"])
    run(job(tmp_path))
    assert rows(table) == sorted([*before, (90, "r9")])
    again = run_gpy_here("run", str(path))
    assert again.returncode == 0 and "compacted 2 file(s)" in again.stdout


def test_default_retention_keeps_the_files_older_versions_read(tmp_path):
    table = published_table(tmp_path)
    files_before = data_files(table)
    result = run_gpy_here("run", str(maintenance_job(tmp_path)))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 unreferenced file(s) older than 168 h deleted" in result.stdout
    assert files_before < data_files(table) and len(referenced_files(table)) == 1  # replaced files kept for a week


def test_the_table_defaults_to_the_publishers_place_without_delta_table_uri(tmp_path):
    table = published_table(tmp_path, runs=2)
    path = tmp_path / "maintain.pull"
    path.write_text(f"job.name=Maintain\njob.class={JOB_CLASS}\ndata.publisher.final.dir={tmp_path}/lake\n"
                    "extract.namespace=shop\nextract.table.name=orders\n")
    dry = run_gpy_here("run", str(path), "--dry-run")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert f"2 small file(s) of {table} would be compacted" in dry.stdout


@pytest.mark.parametrize("extra, key", [
    ({"table.maintenance.target.file.size": "100"}, "table.maintenance.target.file.size"),
    ({"table.maintenance.retention.hours": "-1"}, "table.maintenance.retention.hours"),
    ({"table.maintenance.enforce.retention": "maybe"}, "table.maintenance.enforce.retention"),
])
def test_bad_values_are_refused_naming_the_key(tmp_path, extra, key):
    result = run_gpy_here("run", str(maintenance_job(tmp_path, **extra)))
    assert result.returncode == 2 and key in result.stdout + result.stderr


def test_a_retention_below_the_tables_minimum_is_refused_unless_said_explicitly(tmp_path):
    table = published_table(tmp_path, runs=2)
    files_before, before = data_files(table), rows(table)
    result = run_gpy_here("run", str(maintenance_job(tmp_path, **{"table.maintenance.retention.hours": "1"})))
    assert result.returncode == 2 and "table.maintenance.retention.hours=1" in result.stdout + result.stderr
    assert data_files(table) == files_before and rows(table) == before and len(commits(table)) == 2  # untouched


# as the optimize starts (before its commit); as it returns (delta-rs holds the interpreter meanwhile, so the kill
# lands after its commit, before the vacuum); inside the vacuum
@pytest.mark.parametrize("kill", ["table.optimize:1:0", "table.optimize:1:0.05", "table.vacuum:1:0"])
def test_a_killed_maintenance_run_leaves_the_table_whole_and_the_rerun_finishes(tmp_path, kill):
    table = published_table(tmp_path)
    before = rows(table)
    path = maintenance_job(tmp_path, **{"table.maintenance.retention.hours": "0",
                                        "table.maintenance.enforce.retention": "false"})
    log = tmp_path / "phases.log"
    killed = subprocess.run([sys.executable, "-m", "gobblin_py.cli", "run", str(path)], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120,
                            env={**os.environ, KILL_ENV: kill, PHASE_LOG_ENV: str(log)})
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    assert f"kill {kill.rsplit(':', 1)[0].replace(':', ' ')}" in log.read_text()
    assert rows(table) == before  # the old version or the new one: the same rows either way
    rerun = run_gpy_here("run", str(path))
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert rows(table) == before
    assert data_files(table) == referenced_files(table) and len(data_files(table)) == 1


def test_iceberg_snapshots_past_the_retention_expire_and_the_current_one_and_the_replay_properties_stay(tmp_path):
    ingest, load = iceberg_table(tmp_path)
    table = load()
    before, current = iceberg_rows(table), table.current_snapshot().snapshot_id
    commit_properties = {k: v for k, v in table.properties.items() if k.startswith("gpy.commit.")}
    assert len(before) == 15 and len(table.snapshots()) == 3 and commit_properties
    refused = run_gpy_here("run", str(iceberg_maintenance_job(tmp_path, **{"table.maintenance.retention.hours": "1"})))
    assert refused.returncode == 2 and "table.maintenance.retention.hours=1" in refused.stdout + refused.stderr
    assert len(load().snapshots()) == 3
    path = iceberg_maintenance_job(tmp_path, **{"table.maintenance.retention.hours": "0",
                                                "table.maintenance.enforce.retention": "false"})
    # a crashed writer's file, never committed
    stray = Path(referenced_iceberg_files(table).pop()).parent / "00000-0-crashed-writer.parquet"
    stray.write_bytes(b"PAR1")
    manifest_lists = {s.manifest_list.removeprefix("file://") for s in table.snapshots()}

    dry = run_gpy_here("run", str(path), "--dry-run")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert "2 snapshot(s) of shop.orders older than 0 h would be expired" in dry.stdout
    assert f"would delete  {stray}" in dry.stdout
    assert len(load().snapshots()) == 3 and stray.exists()

    old_files = referenced_iceberg_files(table)
    done = run_gpy_here("run", str(path))
    assert done.returncode == 0, done.stdout + done.stderr
    table = load()
    # the small files rewritten into one snapshot, the only one kept
    assert len(table.snapshots()) == 1 and table.current_snapshot().snapshot_id != current
    assert table.current_snapshot().summary["gpy.maintenance"] == "rewrite"
    assert iceberg_rows(table) == before
    assert commit_properties.items() <= table.properties.items()
    # the stray file, the expired snapshots' manifest lists and files are gone; every file the table reads is there
    assert not stray.exists() and "\n10 file(s) no snapshot references" in done.stdout  # 3 data, 3 manifests, 3 lists
    assert not any(Path(p).exists() for p in manifest_lists | old_files)
    assert all(Path(p).exists() for p in referenced_iceberg_files(table))
    assert "nothing new to pull" in run(ingest).stdout  # the runs' commits are still found
    write_csv(tmp_path / "data" / "9.csv", "id,name", ["90,r9"])
    run(ingest)
    assert iceberg_rows(load()) == sorted([*before, (90, "r9")])

    kept = run_gpy_here("run", str(iceberg_maintenance_job(tmp_path)))  # the default week keeps both, and the
    assert kept.returncode == 0 and "0 snapshot(s)" in kept.stdout and len(load().snapshots()) == 3  # rewrite's


def test_a_killed_iceberg_expiry_leaves_the_table_whole_and_the_rerun_finishes(tmp_path):
    _, load = iceberg_table(tmp_path, runs=2)
    before = iceberg_rows(load())
    path = iceberg_maintenance_job(tmp_path, **{"table.maintenance.retention.hours": "0",
                                                "table.maintenance.enforce.retention": "false"})
    killed = subprocess.run([sys.executable, "-m", "gobblin_py.cli", "run", str(path)], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120,
                            env={**os.environ, KILL_ENV: "table.expire:1:0.05"})
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    assert iceberg_rows(load()) == before
    rerun = run_gpy_here("run", str(path))
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert iceberg_rows(load()) == before and len(load().snapshots()) == 1


def test_iceberg_orphan_removal_keeps_the_statistics_files_the_metadata_references(tmp_path):
    """Puffin statistics (and partition statistics) files are referenced by the table's metadata, not by its
    manifests: they are no orphans (Iceberg's remove_orphan_files keeps them too)."""
    import time

    from pyiceberg.table.statistics import PartitionStatisticsFile, StatisticsFile
    from pyiceberg.table.update import SetPartitionStatisticsUpdate

    from gobblin_py.connectors.iceberg.orphans import Orphans

    _, load = iceberg_table(tmp_path, runs=1)
    table = load()
    snapshot = table.current_snapshot().snapshot_id
    folder = Path(table.metadata_location.removeprefix("file://")).parent
    stats, partition_stats = folder / f"{snapshot}-stats.puffin", folder / f"{snapshot}-partition-stats.parquet"
    for path in (stats, partition_stats):
        path.write_bytes(b"PFA1")
    with table.transaction() as transaction:
        with transaction.update_statistics() as update:
            update.set_statistics(StatisticsFile(snapshot_id=snapshot, statistics_path=f"file://{stats}",
                                                 file_size_in_bytes=4, file_footer_size_in_bytes=4, blob_metadata=[]))
        transaction._apply((SetPartitionStatisticsUpdate(partition_statistics=PartitionStatisticsFile(
            snapshot_id=snapshot, statistics_path=f"file://{partition_stats}", file_size_in_bytes=4)),))
    stray = folder / "crashed-writer.parquet"
    stray.write_bytes(b"PAR1")
    found = Orphans(load(), time.time() + 3600).names()  # every unreferenced file old enough
    assert str(stray) in found and str(stats) not in found and str(partition_stats) not in found, found
