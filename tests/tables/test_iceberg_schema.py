"""A run's columns against an Iceberg table another engine changed: a name the table's renamed or dropped column
had, or one equal to another but for case, is refused before anything moves (exit 2, watermark kept), and no row
already in the table changes."""

from __future__ import annotations

import pytest

from tests.support.table_jobs import iceberg_job as job
from tests.support.table_jobs import run, write_csv
from tests.tables.iceberg_reads import catalog, referenced_files


def rows(tmp_path) -> list[dict]:
    table = catalog(tmp_path / "state", tmp_path / "warehouse").load_table("shop.orders")
    return sorted(table.scan().to_arrow().to_pylist(), key=lambda r: r["id"])


def test_a_column_another_engine_renamed_is_refused_and_the_table_keeps_its_values(tmp_path):
    write_csv(tmp_path / "data" / "a.csv", "id,name", ["1,a"])
    run(job(tmp_path))
    table = catalog(tmp_path / "state", tmp_path / "warehouse").load_table("shop.orders")
    with table.update_schema() as update:
        update.rename_column("name", "customer_name")
    write_csv(tmp_path / "data" / "b.csv", "id,name", ["2,b"])  # the source still sends name
    refused = run(job(tmp_path), expect=2)
    assert "column name of the run's data is the table's column customer_name, renamed from name" in refused.stdout
    assert rows(tmp_path) == [{"id": 1, "customer_name": "a"}]
    # the fix the message names: the same rows are published (the watermark was kept), every value where it was
    run(job(tmp_path, **{"converter.classes": "FieldProjectionConverter",
                         "converter.projection.fields": "id,name:customer_name"}))
    assert rows(tmp_path) == [{"id": 1, "customer_name": "a"}, {"id": 2, "customer_name": "b"}]


def test_a_column_another_engine_dropped_is_refused_and_its_values_stay_gone(tmp_path):
    write_csv(tmp_path / "data" / "a.csv", "id,secret", ["1,s1"])
    run(job(tmp_path))
    table = catalog(tmp_path / "state", tmp_path / "warehouse").load_table("shop.orders")
    with table.update_schema() as update:
        update.delete_column("secret")
    write_csv(tmp_path / "data" / "b.csv", "id,secret", ["2,s2"])
    refused = run(job(tmp_path), expect=2)
    assert "column secret of the run's data was dropped from the table" in refused.stdout
    assert rows(tmp_path) == [{"id": 1}]
    table = catalog(tmp_path / "state", tmp_path / "warehouse").load_table("shop.orders")
    assert {str(p) for p in (tmp_path / "warehouse").rglob("*.parquet")} == referenced_files(table)


@pytest.mark.parametrize("header, says", [
    ("id,name", "column name of the run's data differs from the table's column Name only by case"),
    ("id,Name,name", "the run's data has columns Name and name, equal but for case"),
])
def test_a_column_equal_to_another_but_for_case_is_refused(tmp_path, header, says):
    write_csv(tmp_path / "data" / "a.csv", "id,Name", ["1,a"])
    run(job(tmp_path))
    write_csv(tmp_path / "data" / "b.csv", header, ["2,b" + (",c" if header.count(",") == 2 else "")])
    assert says in run(job(tmp_path), expect=2).stdout
    assert rows(tmp_path) == [{"id": 1, "Name": "a"}]


def test_a_first_run_refused_for_its_own_columns_leaves_no_table(tmp_path):
    write_csv(tmp_path / "data" / "a.csv", "id,Name,name", ["1,a,b"])
    assert "the run's data has columns Name and name, equal but for case" in run(job(tmp_path), expect=2).stdout
    assert not catalog(tmp_path / "state", tmp_path / "warehouse").table_exists("shop.orders")


def cast(fields: str) -> dict[str, str]:
    return {"converter.classes": "TypeCastConverter", "converter.cast.fields": fields}


def test_a_time_zone_other_than_utc_is_refused_before_anything_moves_and_the_cast_publishes_it(tmp_path):
    write_csv(tmp_path / "data" / "a.csv", "id,x", ["1,2024-01-01 10:00:00"])
    run(job(tmp_path, **cast("id:int64,x:timestamp[us, UTC]")))
    write_csv(tmp_path / "data" / "b.csv", "id,x", ["2,2024-01-02 10:00:00"])
    refused = run(job(tmp_path, **cast("id:int64,x:timestamp[us, America/New_York]")), expect=2)
    assert "column x holds timestamps in time zone America/New_York" in refused.stdout
    assert "converter.cast.fields=x:timestamp[us, UTC]" in refused.stdout
    table = catalog(tmp_path / "state", tmp_path / "warehouse").load_table("shop.orders")
    assert {str(p) for p in (tmp_path / "warehouse").rglob("*.parquet")} == referenced_files(table)
    run(job(tmp_path, **cast("id:int64,x:timestamp[us, UTC]")))  # the watermark was kept: the row is published
    assert [r["id"] for r in rows(tmp_path)] == [1, 2]


def test_unsigned_integers_are_refused_naming_the_casts_and_no_table_is_made(tmp_path):
    write_csv(tmp_path / "data" / "a.csv", "id,a,b,c", ["1,255,4294967295,9223372036854775807"])
    refused = run(job(tmp_path, **cast("a:uint8,b:uint32,c:uint64")), expect=2)
    assert "column a is uint8, and an Iceberg table's integers are signed" in refused.stdout
    assert "converter.cast.fields=a:int32,b:int64,c:int64" in refused.stdout
    assert not catalog(tmp_path / "state", tmp_path / "warehouse").table_exists("shop.orders")
    run(job(tmp_path, **cast("a:int32,b:int64,c:int64")))
    assert rows(tmp_path) == [{"id": 1, "a": 255, "b": 4294967295, "c": 9223372036854775807}]
