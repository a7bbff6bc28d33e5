"""An id-watermarked SQL table whose rows carry event times, and its job, for the startpoint tests."""

from __future__ import annotations

import datetime as dt

from tests.sql.helpers import BASE, SqlJob


def create_events(db, first: int, count: int) -> None:
    """Rows ``id`` with an event time of BASE + id hours: an id-watermarked table whose events are times."""
    t = db.types
    if first == 1:
        db.execute(f"CREATE TABLE events (id {t['id']} PRIMARY KEY, created_at {t['ts']})")
    db.executemany("INSERT INTO events VALUES (?, ?)",
                   [(i, BASE + dt.timedelta(hours=i)) for i in range(first, first + count)])


def events_job(tmp_path, db) -> SqlJob:
    return SqlJob(tmp_path, db, tables="events", extract__delta__fields="id", extract__primary__key__fields="id",
                  source__event__time__column="created_at", source__querybased__partition__interval="10",
                  source__querybased__watermark__type="simple")
