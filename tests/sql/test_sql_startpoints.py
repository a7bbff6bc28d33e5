"""Startpoints, completeness and timestamp replay on the SQL source (SQLite, PostgreSQL, MariaDB)."""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest

from tests.sql.helpers import BASE, LATER, SqlJob, add_orders, create_shop
from tests.support.cli import run_gpy
from tests.support.sql_events import create_events, events_job


def startpoint(job: SqlJob, table: str, *args: str) -> None:
    done = run_gpy("state", "startpoint", "set", str(job.file), "--dataset", table, *args)
    assert done.returncode == 0, done.stderr


def pending(job: SqlJob) -> dict:
    listed = run_gpy("state", "startpoint", "list", str(job.file), "--json")
    return json.loads(listed.stdout)


def test_timestamp_replay_on_an_id_watermarked_table(db, tmp_path):
    create_events(db, 1, 20)
    job = events_job(tmp_path, db)
    assert job.run().returncode == 0
    create_events(db, 21, 10)
    assert job.run().returncode == 0
    assert job.ids("events", "id") == list(range(1, 31))
    complete = json.loads(run_gpy("state", "watermark", str(job.file), "--dataset", "events", "--json").stdout)
    assert complete["watermark_ms"] == int((BASE + dt.timedelta(hours=30)).replace(tzinfo=dt.timezone.utc).timestamp() * 1000)
    # replay from hour 15: the id range holding it is found from the recorded (watermark, event time) pairs
    startpoint(job, "events", "--timestamp", (BASE + dt.timedelta(hours=15)).isoformat() + "Z")
    shown = run_gpy("run", str(job.file), "--engine", "local", "--dry-run")
    [point] = re.findall(r"events: start at 2024-03-01T23:00:00Z \(TIMESTAMP startpoint (\w+)", shown.stdout)
    planned = re.findall(r"^\s+events\s+-\s+(\d+)\s+(\d+)\s+.*\s(\w+)$", shown.stdout, re.MULTILINE)
    assert planned == [("11", "21", point), ("21", "31", point)], shown.stdout  # it starts at the range [11, 21)
    replayed = job.run()
    assert replayed.returncode == 0
    # rows 11..14 were read again (the range [11, 21) holds the time) and dropped: the summary says so
    assert "startpoint TIMESTAMP 2024-03-01T23:00:00Z (id " in replayed.stdout
    assert "4 row(s) before it skipped" in replayed.stdout, replayed.stdout
    assert job.ids("events", "id") == sorted(list(range(1, 31)) + list(range(15, 31)))  # rows before 15h filtered
    assert pending(job) == {}


@pytest.mark.parametrize("db", ["sqlite", "postgresql"], indirect=True)
def test_oldest_upcoming_and_specific(db, tmp_path):
    create_shop(db, orders=20, customers=5)
    job = SqlJob(tmp_path, db)
    assert job.run().returncode == 0
    startpoint(job, "orders", "--oldest")
    assert job.run().returncode == 0
    assert job.ids() == sorted(list(range(1, 21)) * 2)  # read again from the oldest row
    add_orders(db, 21, 5, at=LATER)
    startpoint(job, "orders", "--upcoming")
    skipped = job.run()
    assert skipped.returncode == 0 and "dataset orders: COMMITTED" in skipped.stdout
    assert 21 not in job.ids()  # what existed when the startpoint was used is skipped
    add_orders(db, 26, 2, at=LATER + dt.timedelta(hours=1))
    assert job.run().returncode == 0
    assert [i for i in job.ids() if i > 20] == [26, 27]  # what came after is pulled
    startpoint(job, "customers", "--value", "4")
    assert job.run().returncode == 0
    assert job.ids("customers") == [1, 2, 3, 4, 4, 5, 5]
    assert pending(job) == {}


@pytest.mark.parametrize("db", ["sqlite"], indirect=True)
def test_a_failed_run_keeps_a_sql_startpoint(db, tmp_path):
    create_shop(db, orders=10, customers=3)
    job = SqlJob(tmp_path, db, tables="orders")
    assert job.run().returncode == 0
    startpoint(job, "orders", "--oldest")
    job.set(converter__classes="tests.runtime.sample_plugins.FailOnMarker", test__fail__marker="note 1")
    assert job.run().returncode == 1
    assert list(pending(job)) == ["orders"]  # kept: no commit consumed it
    job.set(converter__classes=None)
    assert job.run().returncode == 0
    assert pending(job) == {} and job.ids() == sorted(list(range(1, 11)) * 2)


def test_a_partitioned_table_refuses_a_startpoint(tmp_path):
    from tests.sql.helpers import SqliteDb

    db = SqliteDb(tmp_path / "shop.db")
    create_shop(db, orders=10, customers=3)
    job = SqlJob(tmp_path / "job", db, tables="orders", source__querybased__partition__column="customer_id")
    assert job.run().returncode == 0
    startpoint(job, "orders", "--oldest")
    refused = job.run()
    assert refused.returncode == 2 and "partition.column" in refused.stderr


@pytest.mark.parametrize("db", ["sqlite"], indirect=True)
def test_a_killed_run_keeps_a_sql_startpoint_until_a_commit_consumes_it(db, tmp_path):
    create_shop(db, orders=10, customers=3)
    job = SqlJob(tmp_path, db, tables="orders")
    assert job.run().returncode == 0
    startpoint(job, "orders", "--oldest")
    [point] = pending(job)["orders"].values()
    for boundary in ("1", "2"):  # SIGKILLed before its commit is logged, then after
        killed = run_gpy("run", str(job.file), "--engine", "local", env={"GPY_TEST_CRASH_AT_BOUNDARY": boundary})
        assert killed.returncode == -9, killed.stderr[-2000:]
        assert [p["id"] for p in pending(job)["orders"].values()] == [point["id"]]
    assert job.run().returncode == 0
    assert pending(job) == {} and job.ids() == sorted(list(range(1, 11)) * 2)  # replayed exactly once
