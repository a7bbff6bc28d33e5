"""Upsert into an Iceberg table (``table.merge.key``): which of a run's rows of one key wins, rows without a key,
and a merge killed right after its snapshot."""

from __future__ import annotations

from tests.support.table_jobs import iceberg_job as job
from tests.support.table_jobs import run, write_csv
from tests.tables.iceberg_reads import catalog, referenced_files

UPSERT = {"table.merge.key": "id", "table.merge.order.column": "ts"}


def table_rows(tmp_path) -> list[dict]:
    table = catalog(tmp_path / "state", tmp_path / "warehouse").load_table("shop.orders")
    return table.scan().to_arrow().select(["id", "v"]).sort_by("id").to_pylist()


def test_a_row_without_an_order_value_loses_and_a_tie_goes_to_the_last_written(tmp_path):
    write_csv(tmp_path / "data" / "a.csv", "id,ts,v", ["1,5,ts5", "1,,null after", "2,,null before", "2,3,ts3",
                                                       "3,,first", "3,,second", "4,7,x", "4,7,y"])
    run(job(tmp_path, **UPSERT))
    assert table_rows(tmp_path) == [{"id": 1, "v": "ts5"}, {"id": 2, "v": "ts3"}, {"id": 3, "v": "second"},
                                    {"id": 4, "v": "y"}]


def test_a_row_without_a_key_is_refused_before_anything_moves_and_the_fixed_source_is_taken(tmp_path):
    path = job(tmp_path, **{"table.merge.key": "id", "source.filebased.file.pattern": "*.jsonl"})
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "a.jsonl").write_text('{"id": 1, "v": "a"}\n')
    run(path)
    (tmp_path / "data" / "b.jsonl").write_text('{"id": null, "v": "no key"}\n{"id": 2, "v": "b"}\n')
    refused = run(path, expect=2)
    assert "column id of table.merge.key is null in 1 row(s)" in refused.stdout
    table = catalog(tmp_path / "state", tmp_path / "warehouse").load_table("shop.orders")
    assert {str(p) for p in (tmp_path / "warehouse").rglob("*.parquet")} == referenced_files(table)
    (tmp_path / "data" / "b.jsonl").write_text('{"id": 2, "v": "b"}\n')  # fixed at the source
    run(path)
    assert table_rows(tmp_path) == [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}]


def test_a_merge_killed_right_after_its_snapshot_is_finished_by_the_next_run(tmp_path):
    from tests.support.cli import run_gpy

    write_csv(tmp_path / "data" / "a.csv", "id,ts,v", ["1,1,old", "2,1,b"])
    write_csv(tmp_path / "data" / "b.csv", "id,ts,v", ["1,2,new", "3,1,c"])  # a.csv's file loses a row: rewritten
    path = job(tmp_path, **UPSERT)
    # before the log, logged, two moves, the check of them, the table's snapshot
    killed = run_gpy("run", str(path), "--engine", "local", env={"GPY_TEST_CRASH_AT_BOUNDARY": "6"})
    assert killed.returncode == -9, killed.stderr[-2000:]
    run(path)  # finishes the killed run's commit: its files are all still where its moves put them
    assert table_rows(tmp_path) == [{"id": 1, "v": "new"}, {"id": 2, "v": "b"}, {"id": 3, "v": "c"}]
    write_csv(tmp_path / "data" / "c.csv", "id,ts,v", ["4,1,d"])
    run(path)  # the next merge removes the file the first one rewrote
    assert [r["id"] for r in table_rows(tmp_path)] == [1, 2, 3, 4]
    table = catalog(tmp_path / "state", tmp_path / "warehouse").load_table("shop.orders")
    assert {str(p) for p in (tmp_path / "warehouse").rglob("*.parquet")} == referenced_files(table)


def test_an_upsert_keeping_its_newest_snapshots_only(tmp_path):
    path = job(tmp_path, **UPSERT, **{"iceberg.snapshots.keep": "1"})
    for n, row in enumerate(["1,1,a", "1,2,b", "2,1,c"]):
        write_csv(tmp_path / "data" / f"{n}.csv", "id,ts,v", [row])
        run(path)
    table = catalog(tmp_path / "state", tmp_path / "warehouse").load_table("shop.orders")
    assert len(table.snapshots()) == 1
    assert table_rows(tmp_path) == [{"id": 1, "v": "b"}, {"id": 2, "v": "c"}]


def test_an_order_column_the_data_lacks_is_refused_before_anything_moves(tmp_path):
    write_csv(tmp_path / "data" / "a.csv", "id,v", ["1,a"])
    refused = run(job(tmp_path, **{"table.merge.key": "id", "table.merge.order.column": "seq"}), expect=2)
    assert "table.merge.order.column: no column seq in the run's data" in refused.stdout
    assert not list((tmp_path / "warehouse").rglob("*.parquet"))
