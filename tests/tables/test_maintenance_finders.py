"""Which tables the table maintenance jobs maintain: a forked job's tables (one per branch, through the ``.N`` table
keys its publisher reads), given the job's own keys; and the tables a retention job's table dataset finder names
(``DatasetCleanerJob`` with ``gobblin.retention.dataset.finder.class=IcebergTableDatasetFinder`` or
``DeltaTableDatasetFinder``)."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli import run_gpy_here
from tests.support.table_jobs import delta_job
from tests.support.table_jobs import iceberg_job
from tests.support.table_jobs import run, write_csv
from tests.support.maintenance import published_table, rows
from tests.tables.delta_reads import commits, referenced_files
from tests.tables.iceberg_reads import catalog
from tests.tables.iceberg_reads import referenced_files as iceberg_files

NOW = {"table.maintenance.retention.hours": "0", "table.maintenance.enforce.retention": "false"}


def _as_maintenance(ingestion: Path, **extra: str) -> Path:
    """The ingestion job's file with the keys that make it a maintenance job."""
    path = ingestion.with_name("maintain.pull")
    path.write_text(ingestion.read_text() + "".join(f"{k}={v}\n" for k, v in extra.items()))
    return path


def _ingest_twice(root: Path, make_job, **keys: str) -> Path:
    path = make_job(root, **{"fork.branches": "2", **keys})
    for n in range(2):
        write_csv(root / "data" / f"{n}.csv", "id,name", [f"{n * 10 + i},r{n}-{i}" for i in range(3)])
        run(path)
    return path


def test_a_forked_jobs_iceberg_tables_are_each_maintained_with_the_jobs_keys(tmp_path):
    path = _ingest_twice(tmp_path, iceberg_job, **{"iceberg.table.0": "shop.left", "iceberg.table.1": "shop.right"})
    tables = catalog(tmp_path / "state", tmp_path / "warehouse")
    before = {name: sorted(tables.load_table(name).scan().to_arrow().to_pylist(), key=str)
              for name in ("shop.left", "shop.right")}
    assert all(len(iceberg_files(tables.load_table(name))) == 2 for name in before)

    done = run_gpy_here("run", str(_as_maintenance(path, **{"job.class": "IcebergMaintenanceJob", **NOW})))
    assert done.returncode == 0, done.stdout + done.stderr
    for name in before:
        table = tables.load_table(name)
        assert f"rewrote 2 small file(s) of {name} into 1" in done.stdout
        assert sorted(table.scan().to_arrow().to_pylist(), key=str) == before[name]
        assert len(iceberg_files(table)) == 1 and len(table.snapshots()) == 1


def test_a_forked_jobs_delta_tables_are_each_maintained_with_the_jobs_keys(tmp_path):
    lake = tmp_path / "lake"
    path = _ingest_twice(tmp_path, delta_job, **{"delta.table.uri.0": f"{lake}/left",
                                                 "delta.table.uri.1": f"{lake}/right"})
    dry = run_gpy_here("run", str(_as_maintenance(path, **{"job.class": "DeltaMaintenanceJob", **NOW})),
                       "--dry-run")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    for side in ("left", "right"):
        assert f"2 small file(s) of {lake / side} would be compacted" in dry.stdout


def test_the_retention_job_maintains_the_tables_its_table_finder_names(tmp_path):
    table = published_table(tmp_path)
    before = rows(table)
    cleaner = tmp_path / "table-retention.pull"
    cleaner.write_text("".join(f"{k}={v}\n" for k, v in {
        "job.name": "TableRetention", "gobblin.retention.dataset.finder.class": "DeltaTableDatasetFinder",
        "delta.table.uri": str(table), **NOW}.items()))
    assert run_gpy_here("validate", str(cleaner)).returncode == 0

    simulated = run_gpy_here("run", str(_as_maintenance(cleaner, **{"gobblin.retention.simulate": "true"})))
    assert simulated.returncode == 0, simulated.stdout + simulated.stderr
    assert "3 small file(s)" in simulated.stdout and len(commits(table)) == 3

    done = run_gpy_here("run", str(cleaner))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "compacted 3 file(s)" in done.stdout and "3 unreferenced file(s) older than 0 h deleted" in done.stdout
    assert rows(table) == before and len(referenced_files(table)) == 1

    wrong = _as_maintenance(cleaner, **{"table.maintenance.target.file.size": "5"})
    refused = run_gpy_here("run", str(wrong))
    assert refused.returncode == 2 and "table.maintenance.target.file.size" in refused.stdout + refused.stderr
