"""Fork branches publishing into one Iceberg table: each branch's files in a snapshot of its own, each found again
by its own summary on replay."""

from __future__ import annotations

import pytest

from tests.support.cli import run_gpy
from tests.support.table_jobs import iceberg_job as job
from tests.support.table_jobs import run, write_csv
from tests.tables.iceberg_reads import catalog, referenced_files

AFTER_THE_FIRST_SNAPSHOT = "6"  # before the log, logged, two moves, the check of them, branch 0's snapshot


@pytest.mark.parametrize("names", [{}, {"writer.file.name.0": "a.parquet", "writer.file.name.1": "b.parquet"}])
def test_two_branches_into_one_table_each_commit_their_rows(tmp_path, names):
    write_csv(tmp_path / "data" / "a.csv", "id", ["1", "2"])
    run(job(tmp_path, **{"fork.branches": "2", **names}))
    table = catalog(tmp_path / "state", tmp_path / "warehouse").load_table("shop.orders")
    assert sorted(table.scan().to_arrow().column("id").to_pylist()) == [1, 1, 2, 2]  # each branch's copy
    assert sorted(s.summary["gpy.branch"] for s in table.snapshots()) == ["0", "1"]
    assert {str(p) for p in (tmp_path / "warehouse").rglob("*.parquet")} == referenced_files(table)


def test_two_branches_killed_between_their_snapshots_are_finished_once(tmp_path):
    write_csv(tmp_path / "data" / "a.csv", "id", ["1", "2"])
    path = job(tmp_path, **{"fork.branches": "2"})
    killed = run_gpy("run", str(path), "--engine", "local",
                     env={"GPY_TEST_CRASH_AT_BOUNDARY": AFTER_THE_FIRST_SNAPSHOT})
    assert killed.returncode == -9, killed.stderr[-2000:]
    table = catalog(tmp_path / "state", tmp_path / "warehouse").load_table("shop.orders")
    assert [s.summary["gpy.branch"] for s in table.snapshots()] == ["0"]
    run(path)
    assert sorted(table.refresh().scan().to_arrow().column("id").to_pylist()) == [1, 1, 2, 2]
    assert len(table.snapshots()) == 2


def test_two_branches_upserting_into_one_table_keep_each_others_files(tmp_path):
    write_csv(tmp_path / "data" / "a.csv", "id,name", ["1,a", "1,b", "2,c"])  # branch 0 rewrites its file
    run(job(tmp_path, **{"fork.branches": "2", "table.merge.key.0": "id", "table.merge.key.1": "name"}))
    table = catalog(tmp_path / "state", tmp_path / "warehouse").load_table("shop.orders")
    # branch 1's rows replace branch 0's of the same names
    assert table.scan().to_arrow().select(["id", "name"]).sort_by([("id", "ascending"), ("name", "ascending")]).to_pylist() == [
        {"id": 1, "name": "a"}, {"id": 1, "name": "b"}, {"id": 2, "name": "c"}]
    assert {str(p) for p in (tmp_path / "warehouse").rglob("*.parquet")} >= referenced_files(table)


def test_an_unsuffixed_merge_key_is_every_branchs_own(tmp_path):
    write_csv(tmp_path / "data" / "a.csv", "id,name", ["1,a", "2,b"])
    path = job(tmp_path, **{"fork.branches": "2", "table.merge.key": "id", "iceberg.table.0": "shop.left",
                            "iceberg.table.1": "shop.right"})
    run(path)
    write_csv(tmp_path / "data" / "b.csv", "id,name", ["1,A"])  # an update of id 1: replaced in both tables
    run(path)
    tables = catalog(tmp_path / "state", tmp_path / "warehouse")
    for name in ("shop.left", "shop.right"):
        rows = tables.load_table(name).scan().to_arrow().sort_by("id").to_pylist()
        assert rows == [{"id": 1, "name": "A"}, {"id": 2, "name": "b"}], (name, rows)
