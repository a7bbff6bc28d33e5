"""``iceberg.snapshots.keep``: each run's commit expires the table's snapshots beyond the newest N, so the metadata
every commit reads and rewrites stays small; every row stays, and a commit replayed after its own snapshot was
expired finds its files in the table and adds nothing twice."""

from __future__ import annotations

from tests.support.cli import run_gpy
from tests.support.table_jobs import iceberg_job as job
from tests.support.table_jobs import run, write_csv
from tests.tables.iceberg_reads import catalog, referenced_files

AFTER_THE_SNAPSHOT = "5"  # one file: before the log, logged, its move, the check of it, the table's snapshot


def ids(tmp_path) -> list[int]:
    table = catalog(tmp_path / "state", tmp_path / "warehouse").load_table("shop.orders")
    return sorted(table.scan().to_arrow().column("id").to_pylist())


def test_snapshots_beyond_the_newest_n_are_expired_and_every_row_stays(tmp_path):
    path = job(tmp_path, **{"iceberg.snapshots.keep": "2"})
    runs = []
    for n in range(1, 5):
        write_csv(tmp_path / "data" / f"{n}.csv", "id", [str(n)])
        run(path)
        table = catalog(tmp_path / "state", tmp_path / "warehouse").load_table("shop.orders")
        runs.append(table.current_snapshot().summary["gpy.run"])
    assert [s.summary["gpy.run"] for s in table.snapshots()] == runs[-2:]
    assert len(table.metadata.snapshot_log) == 2
    assert ids(tmp_path) == [1, 2, 3, 4]
    assert {str(p) for p in (tmp_path / "warehouse").rglob("*.parquet")} == referenced_files(table)


def test_a_commit_replayed_after_its_snapshot_was_expired_adds_nothing_twice(tmp_path):
    write_csv(tmp_path / "data" / "a.csv", "id", ["1"])
    path = job(tmp_path, **{"iceberg.snapshots.keep": "1"})
    run(path)
    write_csv(tmp_path / "data" / "b.csv", "id", ["2"])
    killed = run_gpy("run", str(path), "--engine", "local", env={"GPY_TEST_CRASH_AT_BOUNDARY": AFTER_THE_SNAPSHOT})
    assert killed.returncode == -9, killed.stderr[-2000:]
    # before the replay, another job's commit to the same table expires every older snapshot, the killed run's too
    other = tmp_path / "other"
    write_csv(other / "data" / "c.csv", "id", ["100"])
    other_job = job(other, **{"job.name": "Other", "iceberg.table": "shop.orders", "iceberg.snapshots.keep": "1",
                              "data.publisher.final.dir": f"{tmp_path}/warehouse",
                              "iceberg.catalog.uri": f"sqlite:///{tmp_path}/state/iceberg_catalog.db",
                              "iceberg.catalog.type": "sql"})
    run(other_job)
    table = catalog(tmp_path / "state", tmp_path / "warehouse").load_table("shop.orders")
    assert [s.summary["gpy.job"] for s in table.snapshots()] == ["Other"]
    replayed = run(path)  # finishes the killed run's commit first: its files are in the table already
    assert ids(tmp_path) == [1, 2, 100]
    assert "iceberg_commit_found" in replayed.stdout + replayed.stderr


def test_a_commit_replayed_after_maintenance_compacted_the_table_and_expired_its_snapshot_adds_nothing(tmp_path):
    write_csv(tmp_path / "data" / "a.csv", "id", ["1"])
    path = job(tmp_path)
    run(path)
    write_csv(tmp_path / "data" / "b.csv", "id", ["2"])
    killed = run_gpy("run", str(path), "--engine", "local", env={"GPY_TEST_CRASH_AT_BOUNDARY": AFTER_THE_SNAPSHOT})
    assert killed.returncode == -9, killed.stderr[-2000:]
    # the table's maintenance, by another engine: its rows rewritten into one file, the older snapshots expired
    table = catalog(tmp_path / "state", tmp_path / "warehouse").load_table("shop.orders")
    table.overwrite(table.scan().to_arrow())
    table = table.refresh()
    older = [s.snapshot_id for s in table.snapshots() if s.snapshot_id != table.current_snapshot().snapshot_id]
    table.maintenance.expire_snapshots().by_ids(older).commit()
    assert len(table.refresh().snapshots()) == 1 and ids(tmp_path) == [1, 2]
    run(path)  # finishes the killed run's commit first: it is in the table already
    assert ids(tmp_path) == [1, 2]
