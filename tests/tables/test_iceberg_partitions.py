"""The partition spec of an Iceberg table gpy makes, and a job whose partitioning differs from its table's: refused
before anything moves (exit 2), naming the table, both specs and the keys."""

from __future__ import annotations

from tests.support.table_jobs import iceberg_job as job
from tests.support.table_jobs import run, write_csv
from tests.tables.iceberg_reads import catalog, referenced_files

BY_COUNTRY = {"writer.partitioner.class": "ColumnValueWriterPartitioner", "writer.partition.columns": "country"}
BY_DAY = {"converter.classes": "TypeCastConverter", "converter.cast.fields": "id:int64,ts:timestamp[us, UTC]",
          "writer.partitioner.class": "TimeBasedWriterPartitioner", "writer.partition.columns": "ts",
          "writer.partition.granularity": "DAY", "writer.partition.timezone": "UTC"}


def spec(tmp_path) -> list[tuple[str, str]]:
    table = catalog(tmp_path / "state", tmp_path / "warehouse").load_table("shop.orders")
    return [(table.schema().find_column_name(f.source_id), str(f.transform)) for f in table.spec().fields]


def test_the_spec_is_on_the_partition_column_wherever_it_is_in_the_schema(tmp_path):
    write_csv(tmp_path / "data" / "a.csv", "id,country,v", ["1,FR,a", "2,DE,b"])
    run(job(tmp_path, **BY_COUNTRY))
    assert spec(tmp_path) == [("country", "identity")]
    table = catalog(tmp_path / "state", tmp_path / "warehouse").load_table("shop.orders")
    assert table.scan(row_filter="country == 'DE'").to_arrow().column("id").to_pylist() == [2]


def test_a_day_spec_is_on_the_time_column_wherever_it_is_in_the_schema(tmp_path):
    write_csv(tmp_path / "data" / "a.csv", "id,ts,v", ["1,2024-01-01 10:00:00,a"])
    path = job(tmp_path, **BY_DAY)
    run(path)
    write_csv(tmp_path / "data" / "b.csv", "id,ts,v", ["2,2024-01-02 10:00:00,b"])
    run(path)  # the table the first run made is the one the job asks for
    assert spec(tmp_path) == [("ts", "day")]
    table = catalog(tmp_path / "state", tmp_path / "warehouse").load_table("shop.orders")
    assert sorted(table.scan().to_arrow().column("id").to_pylist()) == [1, 2]
    assert {str(p) for p in (tmp_path / "warehouse").rglob("*.parquet")} == referenced_files(table)


def test_an_unpartitioned_job_into_a_partitioned_table_is_refused_before_its_tasks(tmp_path):
    jsonl = {"source.filebased.file.pattern": "*.jsonl"}
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "a.jsonl").write_text('{"id": 1, "country": "FR"}\n')
    run(job(tmp_path, **BY_COUNTRY, **jsonl))
    # a null country: pyiceberg would file the unpartitioned file under FR, where "country IS NULL" misses it
    (tmp_path / "data" / "b.jsonl").write_text('{"id": 2, "country": "FR"}\n{"id": 3, "country": null}\n')
    refused = run(job(tmp_path, **jsonl), expect=2)
    assert ("table shop.orders is partitioned by identity(country), and the job's files by nothing "
            "(writer.partitioner.class is not set)") in refused.stderr
    assert "task_finished" not in refused.stderr  # found before any task ran
    run(job(tmp_path, **BY_COUNTRY, **jsonl))  # the partitioner back: the watermark was kept, the rows published
    table = catalog(tmp_path / "state", tmp_path / "warehouse").load_table("shop.orders")
    assert sorted(table.scan().to_arrow().column("id").to_pylist()) == [1, 2, 3]
    assert table.scan(row_filter="country IS NULL").to_arrow().column("id").to_pylist() == [3]


def test_a_job_whose_time_zone_changed_is_refused_before_its_tasks(tmp_path):
    write_csv(tmp_path / "data" / "a.csv", "id,ts", ["1,2024-01-01 10:00:00"])
    run(job(tmp_path, **BY_DAY))
    write_csv(tmp_path / "data" / "b.csv", "id,ts", ["2,2024-01-02 20:00:00", "3,2024-01-03 02:00:00"])
    refused = run(job(tmp_path, **{**BY_DAY, "writer.partition.timezone": "America/Los_Angeles"}), expect=2)
    assert "table shop.orders is partitioned by day(ts), and the job's files by nothing, since " \
           "writer.partition.timezone=America/Los_Angeles: Iceberg's transforms are in UTC" in refused.stderr
    assert "task_finished" not in refused.stderr
    run(job(tmp_path, **BY_DAY))
    table = catalog(tmp_path / "state", tmp_path / "warehouse").load_table("shop.orders")
    assert sorted(table.scan().to_arrow().column("id").to_pylist()) == [1, 2, 3]


def test_the_plan_refuses_another_partitioning_before_anything_moves(tmp_path, monkeypatch):
    from gobblin_py.connectors.iceberg.publisher import IcebergPublisher

    write_csv(tmp_path / "data" / "a.csv", "id,country", ["1,FR"])
    run(job(tmp_path, **BY_COUNTRY))
    monkeypatch.setattr(IcebergPublisher, "preflight", lambda self, units: None)  # the table made meanwhile
    write_csv(tmp_path / "data" / "b.csv", "id,country", ["2,DE"])
    refused = run(job(tmp_path), expect=2)
    assert "table shop.orders is partitioned by identity(country), and the job's files by nothing" in refused.stdout
    table = catalog(tmp_path / "state", tmp_path / "warehouse").load_table("shop.orders")
    assert {str(p) for p in (tmp_path / "warehouse").rglob("*.parquet")} == referenced_files(table)
    run(job(tmp_path, **BY_COUNTRY))
    assert sorted(table.refresh().scan().to_arrow().column("id").to_pylist()) == [1, 2]


def test_hours_of_a_date_column_leave_a_new_table_unpartitioned(tmp_path):
    by_hour = {**BY_DAY, "converter.cast.fields": "d:date32", "writer.partition.columns": "d",
               "writer.partition.granularity": "HOUR"}
    write_csv(tmp_path / "data" / "a.csv", "id,d", ["1,2024-01-01"])
    assert "column d is a date, which has no hours" in run(job(tmp_path, **by_hour)).stderr
    write_csv(tmp_path / "data" / "b.csv", "id,d", ["2,2024-01-02"])
    run(job(tmp_path, **by_hour))
    assert spec(tmp_path) == []
    table = catalog(tmp_path / "state", tmp_path / "warehouse").load_table("shop.orders")
    assert sorted(table.scan().to_arrow().column("id").to_pylist()) == [1, 2]
