"""A TIMESTAMP startpoint on an SQL table replays what was read; it never skips or drops a row not read yet.

``set`` asks the database for the table's newest event time (``MAX`` of its event column) and refuses a time
after it; a table whose rows carry no event time (an id delta column, no ``source.event.time.column``) refuses a
time at all. A run whose time lies past every row read goes on from the table's watermark; a replay reads the
rows past the watermark whole, whatever their event times.
"""

from __future__ import annotations

import datetime as dt

import pytest

from gobblin_py.store.startpoints import Startpoint, StartpointKind, StartpointStore
from tests.sql.helpers import BASE, LATER, SqlJob, add_orders, create_shop
from tests.support.cli import run_gpy_here
from tests.support.sql_events import create_events, events_job


def set_startpoint(job: SqlJob, table: str, *args: str):
    return run_gpy_here("state", "startpoint", "set", str(job.file), "--dataset", table, *args)


def iso(at: dt.datetime) -> str:
    return at.isoformat() + "Z"


def hour(n: float) -> dt.datetime:
    return BASE + dt.timedelta(hours=n)


@pytest.mark.parametrize("db", ["sqlite", "postgresql"], indirect=True)
def test_a_time_after_the_tables_rows_is_refused_and_a_forced_one_skips_no_row(db, tmp_path):
    create_shop(db, orders=10, customers=1)  # order i updated at BASE + i minutes
    job = SqlJob(tmp_path, db, tables="orders")
    assert job.run().returncode == 0
    add_orders(db, 11, 1, at=LATER)  # after the watermark, not read yet
    late = LATER + dt.timedelta(days=1)
    refused = set_startpoint(job, "orders", "--timestamp", iso(late))
    assert refused.returncode == 2, refused.stdout
    assert "after the latest data of dataset 'orders' (2024-03-01T11:00:00Z, its newest record's time)" in refused.stderr
    assert set_startpoint(job, "orders", "--timestamp", iso(late), "--force").returncode == 0
    ran = job.run()
    assert ran.returncode == 0, ran.stderr
    assert '"startpoint_nothing_to_replay"' in ran.stderr
    assert job.ids() == list(range(1, 12))  # order 11 read: the watermark did not jump to the time
    add_orders(db, 12, 1, at=LATER + dt.timedelta(hours=1))  # before the time, after the watermark
    assert job.run().returncode == 0
    assert job.ids() == list(range(1, 13))


@pytest.mark.parametrize("db", ["sqlite"], indirect=True)
def test_a_time_between_the_watermark_and_the_newest_row_reads_every_row_past_the_watermark(db, tmp_path):
    create_shop(db, orders=10, customers=1)
    job = SqlJob(tmp_path, db, tables="orders")
    assert job.run().returncode == 0
    add_orders(db, 11, 1, at=BASE + dt.timedelta(minutes=30))  # before the time
    add_orders(db, 12, 1, at=LATER)  # after it
    assert set_startpoint(job, "orders", "--timestamp", iso(BASE + dt.timedelta(hours=1))).returncode == 0
    assert job.run().returncode == 0
    assert job.ids() == list(range(1, 13))  # order 11 was not read before: it is not skipped


@pytest.mark.parametrize("db", ["sqlite"], indirect=True)
def test_a_table_whose_rows_carry_no_event_time_refuses_a_time(db, tmp_path):
    create_events(db, 1, 5)
    job = SqlJob(tmp_path, db, tables="events", extract__delta__fields="id", extract__primary__key__fields="id")
    assert job.run().returncode == 0
    refused = set_startpoint(job, "events", "--timestamp", iso(hour(2)))
    assert refused.returncode == 2 and "table events: its rows carry no event time" in refused.stderr
    assert "--value" in refused.stderr and "source.event.time.column" in refused.stderr
    job.set(source__querybased__watermark__type="simple")  # known without asking the database
    assert set_startpoint(job, "events", "--timestamp", iso(hour(2))).returncode == 2
    # one stored without these checks stops the run before any work, naming the table
    job.set(source__querybased__watermark__type=None)
    point = Startpoint(StartpointKind.TIMESTAMP, str(int(hour(2).replace(tzinfo=dt.timezone.utc).timestamp() * 1000)))
    StartpointStore.for_job(job.props).set("Shop", "events", "", point)
    stopped = job.run()
    assert stopped.returncode == 2 and "table events: its rows carry no event time" in stopped.stderr
    assert job.ids("events", "id") == [1, 2, 3, 4, 5]


@pytest.mark.parametrize("db", ["sqlite"], indirect=True)
def test_a_replay_by_event_time_never_drops_a_row_not_read_yet(db, tmp_path):
    create_events(db, 1, 20)  # event i at hour i
    job = events_job(tmp_path, db)
    assert job.run().returncode == 0
    late = lambda first, hours: [(first + n, hour(h)) for n, h in enumerate(hours)]  # noqa: E731
    db.executemany("INSERT INTO events VALUES (?, ?)", late(21, [1, 2, 3, 4, 5]))  # late events, not read yet
    assert set_startpoint(job, "events", "--timestamp", iso(hour(15))).returncode == 0
    assert job.run().returncode == 0
    # rows 11..20 read again (those before hour 15 dropped), rows 21..25 read for the first time, all kept
    assert job.ids("events", "id") == sorted([*range(1, 26), *range(15, 21)])
    db.executemany("INSERT INTO events VALUES (?, ?)", late(26, [6, 7, 8]))
    assert set_startpoint(job, "events", "--timestamp", iso(hour(40))).returncode == 2  # newest event: hour 20
    assert set_startpoint(job, "events", "--timestamp", iso(hour(40)), "--force").returncode == 0
    ran = job.run()
    assert ran.returncode == 0 and '"startpoint_nothing_to_replay"' in ran.stderr
    assert job.ids("events", "id") == sorted([*range(1, 29), *range(15, 21)])
