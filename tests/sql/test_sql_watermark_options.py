"""What the SQL guide (docs/guides/sql.md) promises about time zones, several delta columns and the watermark
options, run for real."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa

from tests.sql.helpers import BASE, SqlJob, count

UTC = dt.timezone.utc


def test_timestamptz_delta_on_a_server_that_is_not_in_utc(db, tmp_path):
    """Instants arrive as UTC whatever the server's zone, and the next run starts exactly after them."""
    t = db.types
    if db.kind == "postgresql":  # every session of this database starts in New York time
        db.execute(f"ALTER DATABASE {db.database.name} SET timezone = 'America/New_York'")
    db.execute(f"CREATE TABLE events (id {t['id']} PRIMARY KEY, at {t['tstz']})")
    zone = dt.timezone(dt.timedelta(hours=2))
    instants = [dt.datetime(2024, 3, 1, 10, 0, tzinfo=zone) + dt.timedelta(minutes=7 * i, microseconds=1000 * i)
                for i in range(30)]

    def value(at: dt.datetime):
        if db.kind == "sqlite":
            return at.isoformat(timespec="milliseconds")  # text with its +02:00 offset, as applications write it
        if db.kind == "mysql":
            return at.astimezone(UTC).replace(tzinfo=None)  # TIMESTAMP, read and written in the session's UTC
        return at

    db.executemany("INSERT INTO events VALUES (?, ?)", [(i, value(at)) for i, at in enumerate(instants[:20])])
    job = SqlJob(tmp_path, db, tables="events", extract__delta__fields="at", extract__primary__key__fields="id",
                 source__querybased__partition__interval="0.5")
    assert job.run().returncode == 0
    table = job.published("events").sort_by("id")
    assert table.schema.field("at").type == pa.timestamp("us", tz="UTC")
    assert table.column("at").to_pylist() == [at.astimezone(UTC) for at in instants[:20]]
    tasks = job.state()["events"]["tasks"]
    top = max(t["actual_high_watermark"]["value"] for t in tasks)
    last = instants[19].astimezone(UTC).replace(tzinfo=None)
    assert dt.datetime.fromisoformat(max(t["actual_high_watermark"]["time"] for t in tasks)) > last
    assert top == max(t["expected_high_watermark"]["value"] for t in tasks)
    db.executemany("INSERT INTO events VALUES (?, ?)", [(i, value(at)) for i, at in enumerate(instants[20:], 20)])
    second = job.run()
    assert second.returncode == 0, second.output
    assert job.ids("events", "id") == list(range(30)) and count(db, "events") == 30  # each row exactly once


def test_several_delta_columns_take_the_first_that_is_set(db, tmp_path):
    t = db.types
    db.execute(f"CREATE TABLE items (id {t['id']} PRIMARY KEY, created_at {t['ts']}, updated_at {t['ts']}, "
               f"note {t['text']})")
    db.executemany("INSERT INTO items VALUES (?, ?, ?, ?)",
                   [(i, BASE + dt.timedelta(minutes=i), None, "new") for i in range(1, 11)])
    job = SqlJob(tmp_path, db, tables="items", extract__delta__fields="updated_at,created_at")
    assert job.run().returncode == 0
    assert job.ids("items", "id") == list(range(1, 11))  # never updated: ordered by their creation
    later = BASE + dt.timedelta(hours=2)
    db.execute("UPDATE items SET updated_at = ?, note = 'changed' WHERE id = 3", (later,))
    db.executemany("INSERT INTO items VALUES (?, ?, ?, ?)", [(11, later + dt.timedelta(minutes=1), None, "new")])
    second = job.run()
    assert second.returncode == 0, second.output
    assert job.ids("items", "id") == sorted(list(range(1, 12)) + [3])  # the update and the new row, once each
    assert sorted(r["note"] for r in job.published("items").to_pylist() if r["id"] == 3) == ["changed", "new"]
    assert job.run().stdout.count("nothing new to pull") == 1


def test_watermark_override_starts_again_at_the_start_value(sqlite_db, tmp_path):
    t = sqlite_db.types
    sqlite_db.execute(f"CREATE TABLE seq (id {t['id']} PRIMARY KEY)")
    sqlite_db.executemany("INSERT INTO seq VALUES (?)", [(i,) for i in range(1, 21)])
    job = SqlJob(tmp_path, sqlite_db, tables="seq", extract__delta__fields="id", extract__primary__key__fields="id")
    assert job.run().returncode == 0 and job.ids("seq", "id") == list(range(1, 21))
    job.set(source__querybased__start__value="15")
    assert "nothing new to pull" in job.run().stdout  # a start value alone does not move a stored watermark
    job.set(source__querybased__is__watermark__override="true")
    again = job.run()
    assert again.returncode == 0, again.output
    assert job.ids("seq", "id") == sorted(list(range(1, 21)) + list(range(15, 21)))
    [task] = job.state()["seq"]["tasks"]
    assert task["low_watermark"] == {"value": 15} and task["actual_high_watermark"] == {"value": 21}


def test_max_watermark_limit_leaves_the_rest_for_later(sqlite_db, tmp_path):
    t = sqlite_db.types
    sqlite_db.execute(f"CREATE TABLE visits (id {t['id']} PRIMARY KEY, at {t['ts']})")
    today = dt.datetime.now(UTC).replace(tzinfo=None, hour=0, minute=0, second=0, microsecond=0)
    days = {1: -3, 2: -2, 3: -2, 4: 1, 5: 2}  # two days ahead of the limit, and two in the future
    sqlite_db.executemany("INSERT INTO visits VALUES (?, ?)",
                          [(i, today + dt.timedelta(days=d, hours=12)) for i, d in days.items()])
    job = SqlJob(tmp_path, sqlite_db, tables="visits", extract__delta__fields="at",
                 source__querybased__append__max__watermark__limit="CURRENTDATE-1")
    assert job.run().returncode == 0
    assert job.ids("visits", "id") == [1, 2, 3]  # up to the end of yesterday
    [task] = job.state()["visits"]["tasks"]
    assert task["actual_high_watermark"]["time"] == today.isoformat()
    job.set(source__querybased__append__max__watermark__limit=None)
    assert job.run().returncode == 0
    assert job.ids("visits", "id") == [1, 2, 3, 4, 5]
