"""The query-based source end to end through ``gpy run``, on SQLite and on a real PostgreSQL server.

Every run is the real CLI in a subprocess (``--engine local``); published Parquet files are compared with
``SELECT count(*)`` and with the rows themselves, and watermarks are read back with ``gpy state show``.
"""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from tests.sql.helpers import (
    LATER,
    SqlJob,
    add_customers,
    add_orders,
    count,
    create_shop,
    frontier,
    order_time,
    update_orders,
)



def db_rows(db, columns: str = "id, note, updated_at") -> list[tuple]:
    rows = db.query(f"SELECT {columns} FROM orders ORDER BY id")
    return [tuple(_norm(v) for v in row) for row in rows]


def _norm(value):
    if isinstance(value, str) and len(value) >= 19 and value[4] == "-" and value[10] in " T":
        return dt.datetime.fromisoformat(value)
    return value


def published_rows(job: SqlJob, columns=("id", "note", "updated_at")) -> list[tuple]:
    table = job.published("orders").select(list(columns))
    return sorted(tuple(r[c] for c in columns) for r in table.to_pylist())


def test_first_full_load_then_inserts_and_updates(db, tmp_path):
    create_shop(db, orders=120, customers=15)
    job = SqlJob(tmp_path, db, source__querybased__partition__interval="0.5")  # 30-minute ranges: 4 work units
    first = job.run()
    assert first.returncode == 0, first.output
    assert job.ids("orders") == list(range(1, 121)) and len(job.ids("orders")) == count(db, "orders")
    assert job.ids("customers") == list(range(1, 16)) and len(job.ids("customers")) == count(db, "customers")
    assert published_rows(job) == db_rows(db)
    orders = job.published("orders")
    assert orders.schema.field("amount").type == pa.decimal128(10, 2)
    assert orders.schema.field("paid").type == pa.bool_()
    assert orders.schema.field("payload").type == pa.binary()
    assert orders.schema.field("day").type == pa.date32()
    assert orders.schema.field("updated_at").type == pa.timestamp("us")
    state = job.state(cli=True)
    assert len(state["orders"]["tasks"]) == 4
    ranges = sorted((t["low_watermark"]["value"], t["expected_high_watermark"]["value"]) for t in state["orders"]["tasks"])
    assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))  # adjacent, never overlapping
    top = max(state["orders"]["tasks"], key=lambda t: t["expected_high_watermark"]["value"])
    # the exclusive high bound is the max row + 1 µs, rendered readably
    assert top["actual_high_watermark"]["time"] == (order_time(120) + dt.timedelta(microseconds=1)).isoformat()
    assert state["customers"]["tasks"][0]["actual_high_watermark"] == {"value": 16}

    again = job.run()
    assert again.returncode == 0 and "nothing new to pull" in again.stdout

    add_orders(db, 121, 10, at=LATER)
    update_orders(db, [3, 50], LATER + dt.timedelta(hours=1))
    add_customers(db, 16, 2)
    third = job.run()
    assert third.returncode == 0, third.output
    assert "dataset orders: COMMITTED  tasks" in third.stdout and "records extracted 12" in third.stdout
    ids = job.ids("orders")
    assert len(ids) == 132 and sorted(set(ids)) == list(range(1, 131)) == [r[0] for r in db_rows(db)]
    assert sorted(i for i in set(ids) if ids.count(i) > 1) == [3, 50]  # updated rows come again
    latest = {}
    for row in sorted(published_rows(job), key=lambda r: r[2]):
        latest[row[0]] = row
    assert sorted(latest.values()) == db_rows(db)  # newest version of every row = the table
    assert job.ids("customers") == list(range(1, 18))


def test_rows_arriving_during_a_run_are_neither_lost_nor_duplicated(db, tmp_path):
    create_shop(db, orders=120, customers=15)
    arrive = LATER
    statements = [
        f"INSERT INTO orders (id, customer_id, note, updated_at) VALUES ({1000 + i}, 1, 'arrived', "
        f"{db.sql_literal_ts(arrive + dt.timedelta(seconds=i))})" for i in range(5)
    ] + [f"UPDATE orders SET note = 'changed', updated_at = {db.sql_literal_ts(arrive + dt.timedelta(minutes=1))} WHERE id = 7"]
    once = tmp_path / "once"
    once.mkdir()
    # one task at a time, oldest range first: row 7 is read (first batch of the first range) before it changes
    job = SqlJob(tmp_path / "job", db, tables="orders", source__querybased__partition__interval="0.5",
                 source__querybased__fetch__size="10", taskexecutor__threadpool__size="1",
                 converter__classes="tests.sql.plugins.InsertRowsDuringRun",
                 test__insert__sql=";".join(statements), test__once__dir=str(once), **{
                     k.replace(".", "__"): v for k, v in db.plugin_props().items()})
    first = job.run()
    assert first.returncode == 0, first.output
    assert (once / "inserted").exists()  # the rows did arrive while the run was extracting
    assert job.ids() == list(range(1, 121))  # the run took what existed when it was planned
    job.set(converter__classes=None)
    second = job.run()
    assert second.returncode == 0, second.output
    ids = job.ids()
    assert sorted(set(ids)) == list(range(1, 121)) + list(range(1000, 1005))
    assert len(ids) == len(set(ids)) + 1  # only the updated row comes twice (old and new version)
    assert sorted(r[1] for r in published_rows(job) if r[0] == 7) == ["changed", "note 7"]
    assert len(set(ids)) == count(db, "orders")
    third = job.run()
    assert third.returncode == 0 and "nothing new to pull" in third.stdout


@pytest.mark.parametrize("mode", ["urn_state", "empty_workunit"])
def test_a_skipped_dataset_keeps_its_watermark(db, tmp_path, mode):
    create_shop(db, orders=40, customers=10)
    job = SqlJob(tmp_path, db, source__querybased__skipped__dataset__mode=mode)
    assert job.run().returncode == 0
    first_state = job.state()
    first_customers = first_state["customers"]
    add_orders(db, 41, 5, at=LATER)
    add_customers(db, 11, 3)

    job.set(source__querybased__blacklist="cust.*")
    second = job.run()
    assert second.returncode == 0, second.output
    assert job.ids("orders") == list(range(1, 46))
    assert job.ids("customers") == list(range(1, 11))
    customers = job.state()["customers"]
    if mode == "urn_state":
        assert "dataset customers" not in second.stdout
        assert customers["job_id"] == first_customers["job_id"]  # the URN's last state, untouched
    else:
        assert "dataset customers: COMMITTED" in second.stdout and "records extracted 0" in second.stdout
        assert customers["job_id"] != first_customers["job_id"]
        [task] = customers["tasks"]
        assert task["low_watermark"] == task["expected_high_watermark"] == task["actual_high_watermark"] == {"value": 11}
    assert frontier(customers) == 11

    job.set(source__querybased__blacklist=None)
    third = job.run()
    assert third.returncode == 0, third.output
    assert job.ids("customers") == list(range(1, 14)) and count(db, "customers") == 13
    assert job.ids("orders") == list(range(1, 46))


@pytest.mark.parametrize("policy", ["full", "successful"])
def test_a_table_failing_mid_way(db, tmp_path, policy):
    create_shop(db, orders=120, customers=15)
    db.execute("UPDATE orders SET note = 'CORRUPT' WHERE id = 75")
    job = SqlJob(tmp_path, db, job__commit__policy=policy, source__querybased__partition__interval="0.5",
                 source__querybased__fetch__size="10", converter__classes="tests.sql.plugins.FailOnNote")
    first = job.run()
    if policy == "full":
        assert first.returncode == 1, first.output
        assert "dataset orders: FAILED" in first.stdout and "nothing published, state kept" in first.stdout
        assert job.ids("orders") == []  # not even the ranges that were read
        assert "orders" not in job.state() and not list(job.state_dir.rglob("orders*"))
    else:
        assert first.returncode == 3, first.output
        ids = job.ids("orders")
        assert 75 not in ids and len(ids) == len(set(ids)) == 90  # three of the four ranges
        tasks = job.state()["orders"]["tasks"]
        failed = [t for t in tasks if t["working_state"] == "FAILED"]
        assert len(failed) == 1 and failed[0]["actual_high_watermark"] == failed[0]["low_watermark"]
        failed_range = (failed[0]["low_watermark"], failed[0]["expected_high_watermark"])
        assert failed[0]["records_extracted"] > 0  # it failed mid-way, after some batches
        assert all(t["actual_high_watermark"] == t["expected_high_watermark"] for t in tasks if t not in failed)
    assert job.ids("customers") == list(range(1, 16))  # the other table is committed either way

    db.execute("UPDATE orders SET note = 'repaired' WHERE id = 75")  # fixed upstream, delta unchanged
    add_orders(db, 121, 5, at=LATER)
    second = job.run()
    assert second.returncode == 0, second.output
    ids = job.ids("orders")
    assert ids == list(range(1, 126)) and len(ids) == count(db, "orders")  # each row exactly once
    assert job.ids("customers") == list(range(1, 16))
    if policy == "successful":
        tasks = job.state()["orders"]["tasks"]
        # the failed range was retried as it was, next to the new rows' ranges
        assert [t for t in tasks if (t["low_watermark"], t["expected_high_watermark"]) == failed_range]
        assert all(t["working_state"] == "COMMITTED" for t in tasks)
    assert job.run().stdout.count("nothing new to pull") == 1


def test_snapshot_only_pulls_the_whole_table_each_run(db, tmp_path):
    create_shop(db, orders=30, customers=5)
    job = SqlJob(tmp_path, db, tables="customers", extract__table__type="snapshot_only",
                 **{"source.querybased.entity.customers.extract.delta.fields".replace(".", "__"): ""})
    assert job.run().returncode == 0
    add_customers(db, 6, 2)
    db.execute("UPDATE customers SET name = 'renamed' WHERE customer_id = 1")
    second = job.run()
    assert second.returncode == 0, second.output
    assert all(r.name.endswith("_full") for r in (job.final / "shop" / "customers").iterdir())
    files = sorted((job.final / "shop" / "customers").rglob("*.parquet"), key=lambda p: p.name)  # by job time
    assert len(files) == 2
    import pyarrow.parquet as pq

    assert pq.read_table(files[0]).num_rows == 5
    latest = pq.read_table(files[-1]).sort_by("customer_id")
    assert latest.num_rows == count(db, "customers") == 7
    assert latest.column("name")[0].as_py() == "renamed"


def test_snapshot_append_takes_everything_first_then_appends(db, tmp_path):
    create_shop(db, orders=30, customers=5)
    db.execute("UPDATE orders SET updated_at = NULL WHERE id IN (4, 5)")  # never updated: no delta value
    job = SqlJob(tmp_path, db, tables="orders", extract__table__type="snapshot_append",
                 source__querybased__partition__interval="0.25")
    first = job.run()
    assert first.returncode == 0, first.output
    assert job.ids() == list(range(1, 31))  # NULL-delta rows included in the snapshot
    assert any(p.name.endswith("_full") for p in (job.final / "shop" / "orders").iterdir())
    add_orders(db, 31, 3, at=LATER)
    second = job.run()
    assert second.returncode == 0, second.output
    assert job.ids() == list(range(1, 34))
    assert sum(p.name.endswith("_append") for p in (job.final / "shop" / "orders").iterdir()) == 1


def test_append_only_warns_about_rows_without_a_delta_value(sqlite_db, tmp_path):
    create_shop(sqlite_db, orders=10, customers=2)
    sqlite_db.execute("UPDATE orders SET updated_at = NULL WHERE id = 4")
    job = SqlJob(tmp_path, sqlite_db, tables="orders")
    result = job.run()
    assert result.returncode == 0
    assert "sql_null_delta_rows" in result.stderr and job.ids() == [1, 2, 3, 5, 6, 7, 8, 9, 10]


def test_partitioned_table_keeps_one_watermark_per_partition(db, tmp_path):
    t = db.types
    db.execute(f"CREATE TABLE events (shard {t['int']}, seq {t['int']}, body {t['text']}, PRIMARY KEY (shard, seq))")
    db.executemany("INSERT INTO events VALUES (?, ?, ?)", [(s, q, f"{s}/{q}") for s in (1, 2) for q in range(1, 21)])
    job = SqlJob(tmp_path, db, tables="events", extract__delta__fields="seq", extract__primary__key__fields="shard,seq",
                 source__querybased__partition__column="shard", source__max__number__of__partitions="1")
    assert job.run().returncode == 0
    [task] = job.state()["events"]["tasks"]
    assert task["actual_high_watermark"] == {"values": [21, 21]}  # a MultiLongWatermark: shard 1, shard 2
    # shard 2 moves on, shard 3 appears (its sequence is far behind the others': its own watermark)
    db.executemany("INSERT INTO events VALUES (?, ?, ?)", [(2, q, f"2/{q}") for q in range(21, 24)] + [(3, 1, "3/1")])
    second = job.run()
    assert second.returncode == 0, second.output
    assert "records extracted 4" in second.stdout
    [task] = job.state()["events"]["tasks"]
    assert task["low_watermark"] == {"values": [21, 21, 1]}
    assert task["actual_high_watermark"] == {"values": [21, 24, 2]}
    bodies = sorted(job.published("events").column("body").to_pylist())
    assert len(bodies) == len(set(bodies)) == count(db, "events") == 44
    assert job.run().returncode == 0


def test_custom_watermark_class_by_dotted_path(sqlite_db, tmp_path):
    create_shop(sqlite_db, orders=5, customers=20)
    job = SqlJob(tmp_path, sqlite_db, tables="customers",
                 source__querybased__watermark__class="tests.sql.plugins.HexWatermark")
    assert job.run().returncode == 0
    [task] = job.state()["customers"]["tasks"]
    assert task["actual_high_watermark"] == {"hex": "0x15"}
    add_customers(sqlite_db, 21, 2)
    second = job.run()
    assert second.returncode == 0 and "records extracted 2" in second.stdout
    assert job.state()["customers"]["tasks"][0]["actual_high_watermark"] == {"hex": "0x17"}
    assert job.ids("customers") == list(range(1, 23))


def test_date_and_hour_watermark_types_with_start_and_end_values(sqlite_db, tmp_path):
    t = sqlite_db.types
    sqlite_db.execute(f"CREATE TABLE visits (id {t['id']} PRIMARY KEY, day {t['date']}, at {t['ts']})")
    start = dt.datetime(2024, 3, 1, 6, 30)
    sqlite_db.executemany("INSERT INTO visits VALUES (?, ?, ?)",
                          [(i, (start + dt.timedelta(hours=5 * i)).date(), start + dt.timedelta(hours=5 * i)) for i in range(40)])
    # by day, from March 3rd up to March 5th inclusive
    by_day = SqlJob(tmp_path / "day", sqlite_db, tables="visits", extract__delta__fields="day",
                    source__querybased__start__value="20240303", source__querybased__end__value="20240305")
    assert by_day.run().returncode == 0
    days = sorted({r["day"] for r in by_day.published("visits").to_pylist()})
    assert days == [dt.date(2024, 3, 3), dt.date(2024, 3, 4), dt.date(2024, 3, 5)]
    [task] = by_day.state()["visits"]["tasks"]
    assert (task["low_watermark"]["time"], task["actual_high_watermark"]["time"]) == ("2024-03-03T00:00:00", "2024-03-06T00:00:00")
    by_day.set(source__querybased__end__value=None)
    assert by_day.run().returncode == 0  # the end lifted: the rest, from March 6th
    assert by_day.ids("visits", "id") == [i for i in range(40) if (start + dt.timedelta(hours=5 * i)).date() >= dt.date(2024, 3, 3)]

    # by hour, 24-hour ranges aligned to whole hours
    by_hour = SqlJob(tmp_path / "hour", sqlite_db, tables="visits", extract__delta__fields="at",
                     source__querybased__watermark__type="hour", source__querybased__partition__interval="24")
    assert by_hour.run().returncode == 0
    assert by_hour.ids("visits", "id") == list(range(40))
    tasks = by_hour.state()["visits"]["tasks"]
    assert all(t["low_watermark"]["time"].endswith(":00:00") for t in tasks)
    assert min(t["low_watermark"]["time"] for t in tasks) == "2024-03-01T06:00:00"
    assert max(t["expected_high_watermark"]["time"] for t in tasks) == "2024-03-09T10:00:00"  # last visit 09:30
