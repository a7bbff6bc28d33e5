"""DeltaPublisher end to end: gpy jobs publish into Delta tables, one version per dataset per run carrying the
run's app transaction, new columns before the data that brings them, read back by DuckDB, Polars and delta-rs."""

from __future__ import annotations

import json

from gobblin_py.connectors.delta.table import app_id, state_store_of
from gobblin_py.connectors.tables.publisher import RunIdentity
from tests.support.table_jobs import delta_job as job
from tests.support.table_jobs import run, write_csv
from tests.tables.delta_reads import commits, duckdb_rows, polars_rows, referenced_files


def test_runs_append_one_version_each_and_a_new_column_arrives_before_its_data(tmp_path):
    write_csv(tmp_path / "data" / "a.csv", "id,name,amount", ["1,a,1.5", "2,b,2.5"])
    path = job(tmp_path)
    run(path)
    write_csv(tmp_path / "data" / "b.csv", "id,name,amount,country", ["3,c,3.5,FR", "4,d,4.5,DE"])
    run(path)
    assert "nothing new to pull" in run(path).stdout

    table = tmp_path / "lake" / "shop" / "orders"
    log = commits(table)
    assert [c["operation"] for c in log] == ["CREATE TABLE", "ADD COLUMN", "WRITE"]
    assert all(c["gpy.job"] == "Orders" and c["gpy.dataset"] == "" for c in log)
    assert log[1]["gpy.run"] == log[2]["gpy.run"] != log[0]["gpy.run"] and json.loads(log[2]["gpy.watermark"])
    expected = [{"id": 1, "name": "a", "amount": 1.5, "country": None},
                {"id": 2, "name": "b", "amount": 2.5, "country": None},
                {"id": 3, "name": "c", "amount": 3.5, "country": "FR"},
                {"id": 4, "name": "d", "amount": 4.5, "country": "DE"}]
    assert sorted(duckdb_rows(table).to_pylist(), key=lambda r: r["id"]) == expected
    assert sorted(polars_rows(table).to_pylist(), key=lambda r: r["id"]) == expected
    on_disk = {str(p) for p in table.rglob("*.parquet") if "_delta_log" not in p.parts}
    assert on_disk == referenced_files(table) and len(on_disk) == 2
    from deltalake import DeltaTable

    # a checkpoint every 10 versions keeps opening a table of many runs fast
    assert DeltaTable(str(table)).metadata().configuration == {"delta.checkpointInterval": "10"}


def test_a_column_value_partitioner_partitions_the_table_and_another_partitioning_is_refused(tmp_path):
    write_csv(tmp_path / "data" / "a.csv", "id,region", ["1,eu", "2,us", "3,eu", "4,apac"])
    partitioned = {"writer.partitioner.class": "ColumnValueWriterPartitioner", "writer.partition.columns": "region",
                   "writer.include.partition.in.file.names": "true"}
    path = job(tmp_path, **partitioned)
    run(path)
    table = tmp_path / "lake" / "shop" / "orders"
    from deltalake import DeltaTable

    delta = DeltaTable(str(table))
    assert delta.metadata().partition_columns == ["region"]
    assert sorted(p["region"] for p in delta.partitions()) == ["apac", "eu", "us"]
    assert {p.parent.name for p in table.rglob("*.parquet")} == {"region=eu", "region=us", "region=apac"}
    expected = [(1, "eu"), (2, "us"), (3, "eu"), (4, "apac")]
    assert sorted(duckdb_rows(table, "id, region").to_pylist(), key=lambda r: r["id"]) == [
        {"id": i, "region": r} for i, r in expected]
    assert duckdb_rows(table, "count(*) AS n").to_pylist() == [{"n": 4}]
    assert sorted(tuple(r.values()) for r in polars_rows(table).select(["id", "region"]).to_pylist()) == \
        sorted(expected, key=lambda r: r[0])
    # the same table with another partitioning (none): refused before any task runs, naming the table
    write_csv(tmp_path / "data" / "b.csv", "id,region", ["5,eu"])
    refused = run(job(tmp_path), expect=2)
    assert f"Delta table {table} is partitioned by ['region']" in refused.stdout + refused.stderr
    assert len(commits(table)) == 1


def test_an_incompatible_type_fails_the_dataset_naming_the_column_and_keeps_the_watermark(tmp_path):
    write_csv(tmp_path / "data" / "a.csv", "id,amount", ["1,1.5"])
    path = job(tmp_path)
    run(path)
    write_csv(tmp_path / "data" / "b.csv", "id,amount", ["x2,2.5"])  # id now a string
    failed = run(path, expect=2)
    assert "column id is int64 in the table and string in the run's data" in failed.stderr
    table = tmp_path / "lake" / "shop" / "orders"
    assert len(commits(table)) == 1 and len(list(table.glob("*.parquet"))) == 1
    write_csv(tmp_path / "data" / "b.csv", "id,amount", ["2,2.5"])  # fixed at the source: the next run takes it
    run(path)
    assert sorted(duckdb_rows(table, "id").column("id").to_pylist()) == [1, 2]


def test_schema_evolution_fail_refuses_a_new_column(tmp_path):
    write_csv(tmp_path / "data" / "a.csv", "id", ["1"])
    path = job(tmp_path, **{"table.schema.evolution": "fail"})
    run(path)
    write_csv(tmp_path / "data" / "b.csv", "id,extra", ["2,x"])
    failed = run(path, expect=2)
    assert "new column extra" in failed.stderr and "table.schema.evolution=fail" in failed.stderr
    assert len(commits(tmp_path / "lake" / "shop" / "orders")) == 1


def test_a_table_uri_delta_rs_cannot_open_is_refused_before_the_run_naming_the_key(tmp_path):
    write_csv(tmp_path / "data" / "a.csv", "id", ["1"])
    refused = run(job(tmp_path, **{"delta.table.uri": "ftp://host/orders"}), expect=2)
    assert "delta.table.uri" in refused.stderr + refused.stdout
    assert "'ftp://host/orders' is not a table delta-rs can open" in refused.stderr + refused.stdout
    assert not (tmp_path / "state").exists() or not list((tmp_path / "state").rglob("*.jst"))


def test_another_writer_between_the_plan_and_the_commit_is_merged_with_not_overwritten(tmp_path, monkeypatch):
    write_csv(tmp_path / "data" / "a.csv", "id,name", ["1,a"])
    path = job(tmp_path)
    run(path)
    table = tmp_path / "lake" / "shop" / "orders"
    write_csv(tmp_path / "data" / "b.csv", "id,name", ["2,b"])
    import pyarrow as pa
    from deltalake import write_deltalake

    from gobblin_py.connectors.delta.step import DeltaAppendStep

    def other_writer(step, fresh=False):  # another engine appends, and adds a column, once this run has planned
        write_deltalake(str(table), pa.table({"id": [100], "name": ["other"], "note": ["x"]}), mode="append",
                        schema_mode="merge")
        return original(step, fresh)

    original = DeltaAppendStep.execute
    monkeypatch.setattr(DeltaAppendStep, "execute", other_writer)
    run(path)
    rows = sorted(duckdb_rows(table, "id, name, note").to_pylist(), key=lambda r: r["id"])
    assert rows == [{"id": 1, "name": "a", "note": None}, {"id": 2, "name": "b", "note": None},
                    {"id": 100, "name": "other", "note": "x"}]
    assert [c["operation"] for c in commits(table)] == ["CREATE TABLE", "WRITE", "WRITE"]


def test_datasets_committing_at_once_into_one_table_each_add_their_rows_once(tmp_path):
    for region, ids in (("eu", [1, 2]), ("us", [3]), ("apac", [4, 5])):
        write_csv(tmp_path / "data" / region / "a.csv", "id,region", [f"{i},{region}" for i in ids])
    path = job(tmp_path, **{"source.filebased.dataset.urn.level": "subdirectory", "job.commit.parallelCommits": "3",
                            "delta.table.uri": f"{tmp_path}/lake/all"})
    run(path)
    table = tmp_path / "lake" / "all"
    assert sorted(duckdb_rows(table, "id").column("id").to_pylist()) == [1, 2, 3, 4, 5]
    log = commits(table)  # the first commit made the table, the others found it made and appended to it
    assert sorted(c["gpy.dataset"] for c in log) == ["apac", "eu", "us"]
    assert [c["operation"] for c in log] == ["CREATE TABLE", "WRITE", "WRITE"], log  # never made twice
    from deltalake import DeltaTable

    store = state_store_of({"state.store.dir": f"{tmp_path}/state"})
    assert all(DeltaTable(str(table)).transaction_version(app_id(RunIdentity("Orders", "", d, ""), 1, 0, store)) == 1
               for d in ("eu", "us", "apac"))


def test_a_column_differing_from_the_tables_only_by_case_is_refused_before_anything_moves(tmp_path):
    write_csv(tmp_path / "data" / "a.csv", "id,Name", ["1,a"])
    path = job(tmp_path)
    run(path)
    write_csv(tmp_path / "data" / "b.csv", "id,name", ["2,b"])
    refused = run(path, expect=2)
    assert "the run's column name differs from the table's column Name only by case" in refused.stdout
    table = tmp_path / "lake" / "shop" / "orders"
    assert len(commits(table)) == 1 and len(list(table.glob("*.parquet"))) == 1
    write_csv(tmp_path / "data" / "b.csv", "id,Name", ["2,b"])  # renamed back at the source: the next run takes it
    run(path)
    assert sorted(duckdb_rows(table).to_pylist(), key=lambda r: r["id"]) == [{"id": 1, "Name": "a"},
                                                                             {"id": 2, "Name": "b"}]


def test_unsigned_columns_are_read_as_the_table_says_and_uint64_is_refused_before_anything_moves(tmp_path):
    write_csv(tmp_path / "data" / "a.csv", "id,a,b,c", ["1,255,4294967295,9223372036854775807"])
    cast = {"converter.classes": "gobblin_py.transforms.converters.cast.TypeCastConverter"}
    refused = run(job(tmp_path, **cast, **{"converter.cast.fields": "a:uint8,b:uint32,c:uint64"}), expect=2)
    assert "column c is uint64" in refused.stdout and "converter.cast.fields=c:int64" in refused.stdout
    table = tmp_path / "lake" / "shop" / "orders"
    assert not table.exists()
    run(job(tmp_path, **cast, **{"converter.cast.fields": "a:uint8,b:uint32,c:int64"}))  # the rows come, once
    expected = [{"id": 1, "a": 255, "b": 4294967295, "c": 9223372036854775807}]
    assert duckdb_rows(table).to_pylist() == polars_rows(table).to_pylist() == expected


def test_two_jobs_of_one_name_publishing_into_one_table_each_commit_their_rows(tmp_path, monkeypatch):
    """Two job files named alike (a backfill copy: its own data and state store) into one table: the one whose
    commit failed after its files moved is finished by its next run, though the other committed meanwhile."""
    from gobblin_py.connectors.delta.step import DeltaAppendStep
    from gobblin_py.sdk.errors import TransientError

    lake = {"delta.table.uri": f"{tmp_path}/lake/orders"}
    write_csv(tmp_path / "a" / "data" / "a.csv", "id,v", ["1,A1"])
    first = job(tmp_path / "a", **lake)
    run(first)
    write_csv(tmp_path / "a" / "data" / "b.csv", "id,v", ["2,A2"])
    original = DeltaAppendStep.execute

    def store_down(step, fresh=False):
        raise TransientError("the store is down")

    monkeypatch.setattr(DeltaAppendStep, "execute", store_down)
    run(first, expect=1)  # its files moved, its commit logged, not made
    monkeypatch.setattr(DeltaAppendStep, "execute", original)
    write_csv(tmp_path / "b" / "data" / "a.csv", "id,v", ["100,B1"])
    run(job(tmp_path / "b", **lake))
    run(first)  # finishes its logged commit: the other job's version is not its own
    assert sorted(duckdb_rows(tmp_path / "lake" / "orders", "id").column("id").to_pylist()) == [1, 2, 100]
