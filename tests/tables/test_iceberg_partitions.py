"""The partition spec of an Iceberg table gpy makes, and a job whose partitioning differs from its table's: refused
before anything moves (exit 2), naming the table, both specs and the keys."""

from __future__ import annotations

from tests.tables.iceberg_reads import catalog, referenced_files
from tests.tables.test_iceberg_publisher import job, run, write_csv

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
