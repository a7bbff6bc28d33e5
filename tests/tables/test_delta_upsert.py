"""Upserts into Delta tables (``table.merge.key``): a SQL table pulled incrementally becomes a mirror of the source
table, a column added at the source included; within a run the latest row of a key by the watermark column wins."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.support.cli import run_gpy_here
from tests.tables.delta_reads import commits, duckdb_rows, polars_rows


def sql_job(root: Path, db: Path, table: str, **extra: str) -> Path:
    props = {"job.name": "Mirror", "source.class": "gobblin_py.connectors.sql.QueryBasedSource",
             "source.conn.driver": "sqlite", "source.conn.database": str(db), "source.entities": table,
             "extract.namespace": "shop", "extract.delta.fields": "updated_at", "extract.primary.key.fields": "id",
             "data.publisher.type": "DeltaPublisher", "table.merge.key": "id", "writer.output.format": "PARQUET",
             "data.publisher.final.dir": f"{root}/lake", "state.store.dir": f"{root}/state",
             "task.data.root.dir": f"{root}/work", "task.maxretries": "0", **extra}
    path = root / "mirror.pull"
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return path


def run(path: Path, expect: int = 0):
    result = run_gpy_here("run", str(path), "--engine", "local")
    assert result.returncode == expect, result.stdout + result.stderr
    return result


def execute(db: Path, *statements: str) -> None:
    with sqlite3.connect(db) as conn:
        for statement in statements:
            conn.execute(statement)
    conn.close()


def source_rows(db: Path, table: str) -> list[dict]:
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        rows = [dict(r) for r in conn.execute(f"SELECT * FROM {table} ORDER BY id")]
    conn.close()
    return rows


def test_a_sql_table_pulled_incrementally_becomes_a_mirror_with_the_column_added_at_the_source(tmp_path):
    db = tmp_path / "shop.db"
    execute(db, "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, updated_at TIMESTAMP)",
            *(f"INSERT INTO customers VALUES ({i}, 'c{i}', '2024-03-01 08:0{i}:00')" for i in range(1, 6)))
    path = sql_job(tmp_path, db, "customers")
    run(path)
    execute(db, "ALTER TABLE customers ADD COLUMN tier TEXT",
            "UPDATE customers SET name = 'renamed', tier = 'gold', updated_at = '2024-03-02 09:00:00' "
            "WHERE id IN (2, 4)",
            "INSERT INTO customers VALUES (6, 'c6', '2024-03-02 10:00:00', 'silver')")
    run(path)
    table = tmp_path / "lake" / "shop" / "customers"
    expected = [{k: v for k, v in r.items() if k != "updated_at"} for r in source_rows(db, "customers")]
    for reader in (duckdb_rows, polars_rows):
        rows = sorted(reader(table).drop_columns(["updated_at"]).to_pylist(), key=lambda r: r["id"])
        assert rows == expected, reader.__name__
    log = commits(table)
    assert [c["operation"] for c in log] == ["CREATE TABLE", "MERGE", "MERGE"]
    assert log[2]["operationMetrics"]["num_target_rows_updated"] == 2
    assert log[2]["operationMetrics"]["num_target_rows_inserted"] == 1
    # the files a merge read wait for the next run of the dataset, which removes those of merges committed
    waiting = [p.parent.name for p in (table / "_gpy_merge").rglob("*.parquet")]
    assert waiting == ["2"]
    assert "nothing new to pull" in run(path).stdout
    # a re-read from the start merges the same rows again: the table does not change
    reread = run_gpy_here("state", "startpoint", "set", str(path), "--dataset", "customers", "--oldest")
    assert reread.returncode == 0, reread.stdout + reread.stderr
    run(path)
    assert sorted(duckdb_rows(table).drop_columns(["updated_at"]).to_pylist(), key=lambda r: r["id"]) == expected
    last = commits(table)[-1]
    assert last["operation"] == "MERGE" and last["operationMetrics"]["num_target_rows_updated"] == 6
    assert last["operationMetrics"]["num_target_rows_inserted"] == 0
    assert [p.parent.name for p in (table / "_gpy_merge").rglob("*.parquet")] == ["3"]


def test_within_a_run_the_latest_row_of_a_key_by_the_watermark_column_wins(tmp_path):
    db = tmp_path / "changes.db"
    # several versions of a key, spread over work units (one an hour), their ids out of time order
    versions = [(1, "first", "08:10"), (2, "only", "08:20"), (1, "third", "10:30"), (1, "second", "09:40"),
                (3, "old", "09:00"), (3, "new", "10:00")]
    execute(db, "CREATE TABLE changes (id INTEGER, v TEXT, updated_at TIMESTAMP)",
            *(f"INSERT INTO changes VALUES ({i}, '{v}', '2024-03-01 {t}:00')" for i, v, t in versions))
    path = sql_job(tmp_path, db, "changes", **{"source.querybased.partition.interval": "1"})
    run(path)
    table = tmp_path / "lake" / "shop" / "changes"
    assert len(list((table / "_gpy_merge").rglob("*.parquet"))) >= 3  # the versions came in several files
    assert sorted((r["id"], r["v"]) for r in duckdb_rows(table).to_pylist()) == [(1, "third"), (2, "only"),
                                                                                   (3, "new")]
    execute(db, "INSERT INTO changes VALUES (2, 'later', '2024-03-01 11:00:00')")
    run(path)
    assert sorted((r["id"], r["v"]) for r in polars_rows(table).to_pylist()) == [(1, "third"), (2, "later"),
                                                                                   (3, "new")]


def test_table_merge_order_column_decides_which_row_of_a_key_wins_a_null_losing(tmp_path):
    from tests.support.table_jobs import delta_job as job
    from tests.support.table_jobs import write_csv

    write_csv(tmp_path / "data" / "a.csv", "id,ts,v",
              ["1,5,latest", "1,3,older", "1,,no order", "2,4,first", "2,4,tie written last", "3,,alone"])
    path = job(tmp_path, **{"table.merge.key": "id", "table.merge.order.column": "ts"})
    run(path)
    table = tmp_path / "lake" / "shop" / "orders"
    assert sorted((r["id"], r["v"]) for r in duckdb_rows(table).to_pylist()) == [
        (1, "latest"), (2, "tie written last"), (3, "alone")]
    write_csv(tmp_path / "data" / "b.csv", "id,ts,v", ["1,9,later"])
    refused = run(job(tmp_path, **{"table.merge.key": "id", "table.merge.order.column": "updated"}), expect=2)
    assert "table.merge.order.column=updated: the run's data has no such column" in refused.stdout + refused.stderr
    run(job(tmp_path, **{"table.merge.key": "id", "table.merge.order.column": "ts"}))  # fixed: the rows come
    assert sorted((r["id"], r["v"]) for r in polars_rows(table).to_pylist())[0] == (1, "later")
