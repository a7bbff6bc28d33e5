"""IcebergPublisher end to end: gpy jobs publish into Iceberg tables of the embedded catalog, one snapshot per
dataset per run, new columns added by the commit that brings them, read back by pyiceberg and by DuckDB."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.support.cli import run_gpy_here
from tests.support.table_jobs import iceberg_job as job
from tests.support.table_jobs import run, write_csv
from tests.tables.iceberg_reads import catalog, duckdb_rows, referenced_files


def test_runs_append_one_snapshot_each_and_a_new_column_arrives_with_its_data(tmp_path):
    write_csv(tmp_path / "data" / "a.csv", "id,name,amount", ["1,a,1.5", "2,b,2.5"])
    path = job(tmp_path)
    run(path)
    write_csv(tmp_path / "data" / "b.csv", "id,name,amount,country", ["3,c,3.5,FR", "4,d,4.5,DE"])
    run(path)
    assert "nothing new to pull" in run(path).stdout

    table = catalog(tmp_path / "state", tmp_path / "warehouse").load_table("shop.orders")
    assert [f.name for f in table.schema().fields] == ["id", "name", "amount", "country"]
    runs = [s.summary for s in table.snapshots()]
    assert len(runs) == 2 and all(s["gpy.job"] == "Orders" and s["gpy.dataset"] == "" for s in runs)
    assert len({s["gpy.run"] for s in runs}) == 2 and all(json.loads(s["gpy.watermark"]) for s in runs)
    rows = sorted(table.scan().to_arrow().to_pylist(), key=lambda r: r["id"])
    assert rows == [{"id": 1, "name": "a", "amount": 1.5, "country": None},
                    {"id": 2, "name": "b", "amount": 2.5, "country": None},
                    {"id": 3, "name": "c", "amount": 3.5, "country": "FR"},
                    {"id": 4, "name": "d", "amount": 4.5, "country": "DE"}]
    by_duckdb = duckdb_rows(table.metadata_location, "id, country").sort_by("id").to_pylist()
    assert by_duckdb == [{"id": i, "country": c} for i, c in [(1, None), (2, None), (3, "FR"), (4, "DE")]]
    # every file in the table's data folder is in the table, nothing else is there
    on_disk = {str(p) for p in (tmp_path / "warehouse").rglob("*.parquet")}
    assert on_disk == referenced_files(table) and len(on_disk) == 2


def test_an_incompatible_type_fails_the_dataset_naming_the_column_and_keeps_the_watermark(tmp_path):
    write_csv(tmp_path / "data" / "a.csv", "id,amount", ["1,1.5"])
    path = job(tmp_path)
    run(path)
    write_csv(tmp_path / "data" / "b.csv", "id,amount", ["x2,2.5"])  # id now a string
    failed = run(path, expect=2)
    assert "column id is int64 in the table and string in the run's data" in failed.stderr
    table = catalog(tmp_path / "state", tmp_path / "warehouse").load_table("shop.orders")
    assert len(table.snapshots()) == 1 and table.scan().to_arrow().num_rows == 1
    write_csv(tmp_path / "data" / "b.csv", "id,amount", ["2,2.5"])  # fixed at the source: the next run takes it
    run(path)
    assert sorted(table.refresh().scan().to_arrow().column("id").to_pylist()) == [1, 2]


def test_schema_evolution_fail_refuses_a_new_column(tmp_path):
    write_csv(tmp_path / "data" / "a.csv", "id", ["1"])
    path = job(tmp_path, **{"table.schema.evolution": "fail"})
    run(path)
    write_csv(tmp_path / "data" / "b.csv", "id,extra", ["2,x"])
    assert "new column extra" in run(path, expect=2).stderr


@pytest.mark.parametrize("keys, says", [
    ({"iceberg.table": "orders"}, "iceberg.table"),
    ({"iceberg.table": "shop.or ders"}, "iceberg.table"),
    ({"writer.output.format": "AVRO"}, "writer.output.format"),
])
def test_bad_table_settings_are_refused_before_any_work(tmp_path, keys, says):
    write_csv(tmp_path / "data" / "a.csv", "id", ["1"])
    result = run(job(tmp_path, **keys), expect=2)
    assert says in result.stderr and not (tmp_path / "warehouse").exists()


def test_nanosecond_timestamps_are_refused_before_anything_moves_and_a_cast_publishes_them(tmp_path):
    cast = {"converter.classes": "TypeCastConverter", "converter.cast.fields": "at:timestamp[us, UTC]"}
    for n, table in ((1, "new"), (2, "existing")):
        write_csv(tmp_path / "data" / f"{n}.csv", "id,at", [f"{n},2024-01-0{n} 00:00:00.000Z"])  # read as ns
        refused = run(job(tmp_path), expect=2)
        assert "column at holds timestamps in nanoseconds" in refused.stdout, table
        assert "converter.cast.fields=at:timestamp[us, UTC]" in refused.stdout, table
        run(job(tmp_path, **cast))  # the watermark was kept: the same file is published
    table = catalog(tmp_path / "state", tmp_path / "warehouse").load_table("shop.orders")
    rows = table.scan().to_arrow()
    assert sorted(rows.column("id").to_pylist()) == [1, 2] and str(rows.schema.field("at").type) == "timestamp[us, tz=UTC]"
    # nothing was moved by the refused runs: every file in the table's folder is in the table
    assert {str(p) for p in (tmp_path / "warehouse").rglob("*.parquet")} == referenced_files(table)


def test_the_writer_partitioner_becomes_the_partition_spec(tmp_path):
    write_csv(tmp_path / "data" / "a.csv", "id,country", ["1,FR", "2,DE", "3,FR"])
    partitioned = {"writer.partitioner.class": "ColumnValueWriterPartitioner", "writer.partition.columns": "country"}
    run(job(tmp_path, **partitioned))
    table = catalog(tmp_path / "state", tmp_path / "warehouse").load_table("shop.orders")
    assert [(f.name, str(f.transform)) for f in table.spec().fields] == [("country", "identity")]
    assert sorted(table.scan(row_filter="country == 'FR'").to_arrow().column("id").to_pylist()) == [1, 3]
    # a job whose partitioner asks for another spec is refused: the table is not changed under its readers
    write_csv(tmp_path / "data" / "b.csv", "id,country", ["4,IT"])
    other = {"writer.partitioner.class": "ColumnValueWriterPartitioner", "writer.partition.columns": "id"}
    refused = run(job(tmp_path, **other), expect=2)
    assert "is partitioned by identity(country), and the job's files by identity(id)" in refused.stderr
    assert "task_finished" not in refused.stderr  # found before any task ran


def test_an_incremental_sql_table_with_a_column_added_between_runs(tmp_path):
    db = tmp_path / "shop.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, amount REAL)")
        conn.executemany("INSERT INTO orders VALUES (?, ?)", [(i, i * 1.5) for i in range(1, 6)])
    props = {"job.name": "ShopSql", "source.class": "SqliteSource", "source.conn.url": f"jdbc:sqlite:{db}",
             "source.querybased.schema": "main", "source.entity": "orders", "extract.table.name": "orders",
             "extract.namespace": "shop", "extract.delta.fields": "id", "extract.table.type": "append_only",
             "writer.output.format": "PARQUET", "data.publisher.type": "IcebergPublisher",
             "data.publisher.final.dir": f"{tmp_path}/warehouse", "state.store.dir": f"{tmp_path}/state",
             "task.data.root.dir": f"{tmp_path}/work"}
    path = tmp_path / "sql.pull"
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    run(path)
    with sqlite3.connect(db) as conn:
        conn.execute("ALTER TABLE orders ADD COLUMN note TEXT")
        conn.executemany("INSERT INTO orders VALUES (?, ?, ?)", [(i, i * 1.5, f"n{i}") for i in range(6, 9)])
    run(path)
    run(path)
    table = catalog(tmp_path / "state", tmp_path / "warehouse").load_table("shop.orders")
    rows = duckdb_rows(table.metadata_location, "id, note").sort_by("id").to_pylist()
    assert [r["id"] for r in rows] == list(range(1, 9))  # each row once
    assert [r["note"] for r in rows] == [None] * 5 + ["n6", "n7", "n8"]
    assert len(table.snapshots()) == 2


def test_datasets_committing_at_once_make_their_namespace_and_tables_once(tmp_path):
    for region in ("eu", "us", "apac"):
        write_csv(tmp_path / "data" / region / "a.csv", "id", [f"{n}" for n in range(3)])
    run(job(tmp_path, **{"source.filebased.dataset.urn.level": "subdirectory", "extract.table.name": None,
                         "job.commit.parallelCommits": "3"}))
    tables = catalog(tmp_path / "state", tmp_path / "warehouse")
    assert sorted(t[-1] for t in tables.list_tables("shop")) == ["apac", "eu", "us"]


def test_the_summary_and_the_history_name_the_table_and_its_snapshot(tmp_path):
    write_csv(tmp_path / "data" / "a.csv", "id", ["1"])
    path = job(tmp_path)
    shown = run(path).stdout
    snapshot = catalog(tmp_path / "state", tmp_path / "warehouse").load_table("shop.orders").current_snapshot()
    assert "published iceberg://gpy/shop.orders" in shown
    assert f"committed iceberg://gpy/shop.orders snapshot {snapshot.snapshot_id}" in shown
    run_id = json.loads(run_gpy_here("history", str(path), "--json").stdout)["runs"][0]["run_id"]
    [dataset] = json.loads(run_gpy_here("history", str(path), run_id, "--json").stdout)["datasets"]
    assert dataset["commits"] == [f"iceberg://gpy/shop.orders snapshot {snapshot.snapshot_id}"]
    # the state names the table; the snapshot of the run is the one whose summary carries the run's job id
    assert "published iceberg://gpy/shop.orders" in run_gpy_here("state", "show", str(path)).stdout
    assert snapshot.summary["gpy.run"] == run_id


def _sql_job(tmp_path: Path, db: Path, **extra: str) -> Path:
    props = {"job.name": "Mirror", "source.class": "SqliteSource", "source.conn.url": f"jdbc:sqlite:{db}",
             "source.querybased.schema": "main", "source.entity": "customers", "extract.table.name": "customers",
             "extract.namespace": "crm", "extract.delta.fields": "updated_at", "extract.table.type": "append_only",
             "source.querybased.watermark.type": "timestamp",
             "writer.output.format": "PARQUET", "data.publisher.type": "IcebergPublisher", "table.merge.key": "id",
             "data.publisher.final.dir": f"{tmp_path}/warehouse", "state.store.dir": f"{tmp_path}/state",
             "task.data.root.dir": f"{tmp_path}/work", **extra}
    path = tmp_path / "mirror.pull"
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return path


def test_a_merge_key_makes_the_table_a_mirror_of_an_incremental_sql_table(tmp_path):
    db = tmp_path / "crm.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, updated_at TEXT)")
        conn.executemany("INSERT INTO customers VALUES (?, ?, ?)",
                         [(i, f"c{i}", f"2026-01-01 00:00:0{i}") for i in range(1, 6)])
    path = _sql_job(tmp_path, db)
    run(path)
    with sqlite3.connect(db) as conn:  # two rows change, two arrive
        conn.executemany("UPDATE customers SET name = ?, updated_at = ? WHERE id = ?",
                         [("c2 renamed", "2026-01-02 00:00:00", 2), ("c4 renamed", "2026-01-02 00:00:01", 4)])
        conn.executemany("INSERT INTO customers VALUES (?, ?, ?)",
                         [(6, "c6", "2026-01-02 00:00:02"), (7, "c7", "2026-01-02 00:00:03")])
    run(path)
    run(path)  # nothing new: nothing changes
    table = catalog(tmp_path / "state", tmp_path / "warehouse").load_table("crm.customers")
    rows = duckdb_rows(table.metadata_location, "id, name").sort_by("id").to_pylist()
    with sqlite3.connect(db) as conn:
        source = [{"id": i, "name": n} for i, n in conn.execute("SELECT id, name FROM customers ORDER BY id")]
    assert rows == source
    assert len(table.snapshots()) == 2
    # no file is left in the data folder that the table does not hold
    assert {str(p) for p in (tmp_path / "warehouse").rglob("*.parquet")} >= referenced_files(table)


def test_within_a_run_the_latest_row_of_a_key_wins(tmp_path):
    write_csv(tmp_path / "data" / "a.csv", "id,name,seq", ["1,first,1", "2,only,1", "1,third,3"])
    write_csv(tmp_path / "data" / "b.csv", "id,name,seq", ["1,second,2"])
    path = job(tmp_path, **{"table.merge.key": "id", "table.merge.order.column": "seq"})
    run(path)
    table = catalog(tmp_path / "state", tmp_path / "warehouse").load_table("shop.orders")
    rows = sorted(table.scan().to_arrow().select(["id", "name"]).to_pylist(), key=lambda r: r["id"])
    assert rows == [{"id": 1, "name": "third"}, {"id": 2, "name": "only"}]
    # the run's files holding a beaten row were replaced, and are deleted by the next merge (a replay of the first
    # run's commit checks them where its moves put them): every file left is then in the table
    write_csv(tmp_path / "data" / "c.csv", "id,name,seq", ["3,new,1"])
    run(path)
    table = table.refresh()
    assert {str(p) for p in (tmp_path / "warehouse").rglob("*.parquet")} == referenced_files(table)


@pytest.mark.parametrize("boundary", ["4", "5"])  # killed before the merge's snapshot, and right after it
def test_a_merge_killed_around_its_snapshot_is_finished_once(tmp_path, boundary):
    from tests.support.cli import run_gpy

    db = tmp_path / "crm.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, updated_at TEXT)")
        conn.executemany("INSERT INTO customers VALUES (?, ?, ?)", [(i, f"c{i}", f"2026-01-01 0{i}:00:00")
                                                                    for i in range(1, 4)])
    path = _sql_job(tmp_path, db)
    run(path)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE customers SET name = 'c1 renamed', updated_at = '2026-01-02 00:00:00' WHERE id = 1")
    killed = run_gpy("run", str(path), "--engine", "local", env={"GPY_TEST_CRASH_AT_BOUNDARY": boundary})
    assert killed.returncode == -9, killed.stderr[-2000:]
    run(path)
    table = catalog(tmp_path / "state", tmp_path / "warehouse").load_table("crm.customers")
    rows = table.scan().to_arrow().select(["id", "name"]).sort_by("id").to_pylist()
    assert rows == [{"id": 1, "name": "c1 renamed"}, {"id": 2, "name": "c2"}, {"id": 3, "name": "c3"}]
    assert len(table.snapshots()) == 2


def test_a_catalog_that_cannot_be_reached_fails_the_dataset_and_the_next_run_completes(tmp_path):
    from tests.support.net import free_port

    write_csv(tmp_path / "data" / "a.csv", "id", ["1", "2"])
    down = {"iceberg.catalog.type": "rest", "iceberg.catalog.uri": f"http://127.0.0.1:{free_port()}"}
    failed = run(job(tmp_path, **down), expect=1)
    assert f"Iceberg catalog rest at http://127.0.0.1:" in failed.stdout and "cannot open it" in failed.stdout
    assert not (tmp_path / "warehouse").exists()  # nothing was moved, the watermark is where it was
    run(job(tmp_path))  # the catalog back (here: the embedded one): the same rows are published, once
    table = catalog(tmp_path / "state", tmp_path / "warehouse").load_table("shop.orders")
    assert sorted(table.scan().to_arrow().column("id").to_pylist()) == [1, 2]


def test_a_commit_beaten_by_another_writer_is_tried_again_on_the_table_as_it_then_is(tmp_path, monkeypatch):
    from gobblin_py.connectors.iceberg import step as steps

    write_csv(tmp_path / "data" / "a.csv", "id", ["1"])
    path = job(tmp_path)
    run(path)
    table = catalog(tmp_path / "state", tmp_path / "warehouse").load_table("shop.orders")
    loads = []
    real = steps.IcebergCommitStep._table

    def stale_first(self):  # the first load is taken before another writer commits: its commit must fail
        loaded = real(self)
        if not loads:
            import pyarrow as pa

            table.refresh().append(pa.table({"id": pa.array([100], pa.int64())}))
        loads.append(loaded)
        return loaded

    monkeypatch.setattr(steps.IcebergCommitStep, "_table", stale_first)
    write_csv(tmp_path / "data" / "b.csv", "id", ["2"])
    run(path)
    assert len(loads) >= 1 and len(table.refresh().snapshots()) == 3
    assert sorted(table.scan().to_arrow().column("id").to_pylist()) == [1, 2, 100]


def test_tasks_on_spark_executors_publish_into_the_table(tmp_path, spark):
    from click.testing import CliRunner

    from gobblin_py.cli import main

    for n in range(3):
        write_csv(tmp_path / "data" / f"f{n}.csv", "id", [str(n * 10 + i) for i in range(10)])
    result = CliRunner().invoke(main, ["run", str(job(tmp_path)), "--engine", "spark", "--master", "local[2]"])
    assert result.exit_code == 0, result.output
    table = catalog(tmp_path / "state", tmp_path / "warehouse").load_table("shop.orders")
    assert sorted(table.scan().to_arrow().column("id").to_pylist()) == list(range(30))
    assert len(table.snapshots()) == 1  # three tasks, one dataset: one snapshot
