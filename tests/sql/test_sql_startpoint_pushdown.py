"""A TIMESTAMP startpoint on a table whose delta column holds times is a predicate of the query the database
runs (``WHERE delta >= T``): the rows before it are never read, the dry run estimates only the rows from T, and
the run's summary and history say which startpoint was used and how many rows it skipped."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from gobblin_py.store import FsDatasetStateStore
from gobblin_py.store.progress import task_progress
from gobblin_py.store.startpoints import FILTERED_KEY
from tests.sql.helpers import BASE, SqlJob, create_shop
from tests.support.cli import run_gpy

AT = BASE + dt.timedelta(minutes=40, seconds=30)  # orders 41..60 are at or after it (order i at BASE + i min)


@pytest.mark.parametrize("db", ["sqlite", "postgresql"], indirect=True)
def test_a_timestamp_startpoint_reads_only_the_rows_from_its_time(db, tmp_path):
    create_shop(db, orders=60, customers=1)
    job = SqlJob(tmp_path, db, tables="orders")
    assert job.run().returncode == 0
    done = run_gpy("state", "startpoint", "set", str(job.file), "--dataset", "orders",
                   "--timestamp", AT.isoformat() + "Z")
    assert done.returncode == 0, done.stderr
    shown = run_gpy("run", str(job.file), "--engine", "local", "--dry-run")
    assert shown.returncode == 0, shown.stderr
    assert "{'" not in shown.stdout, shown.stdout  # no raw watermark dict
    assert "orders: start at 2024-03-01T08:40:30Z (TIMESTAMP startpoint" in shown.stdout, shown.stdout
    assert "~20 row(s)" in shown.stdout, shown.stdout  # the estimate counts only the rows from the time
    ran = job.run()
    assert ran.returncode == 0, ran.stderr
    assert job.ids() == sorted(list(range(1, 61)) + list(range(41, 61)))
    latest = FsDatasetStateStore.from_properties(job.props).get_latest_dataset_state("Shop", "orders")
    assert latest is not None
    read = sum(p[2] for t in latest.task_states.values() for p in task_progress(t).values())
    assert read == 20  # the older rows were not read (and then dropped): the database never sent them
    assert sum(int(t.get_prop(FILTERED_KEY) or 0) for t in latest.task_states.values()) == 0
    assert "startpoint TIMESTAMP 2024-03-01T08:40:30Z" in ran.stdout and "40 row(s) before it skipped" in ran.stdout
    [record] = [r for r in (json.loads(p.read_text()) for p in (job.state_dir / "_history" / "Shop").glob("*.json"))
                if any(d.get("startpoints") for d in r["datasets"])]
    [used] = record["datasets"][0]["startpoints"]
    assert used["kind"] == "TIMESTAMP" and used["value"] == "2024-03-01T08:40:30Z" and used["rows_skipped"] == 40
    shown = run_gpy("history", str(job.file), record["run_id"])
    assert f"startpoint TIMESTAMP 2024-03-01T08:40:30Z (id {used['id']}, set " in shown.stdout, shown.stdout


@pytest.mark.parametrize("db", ["sqlite", "postgresql"], indirect=True)
def test_a_date_column_starts_at_the_first_day_at_or_after_the_time(db, tmp_path):
    db.execute(f"CREATE TABLE visits (id {db.types['id']} PRIMARY KEY, day {db.types['date']})")
    db.executemany("INSERT INTO visits VALUES (?, ?)",
                   [(i, (BASE + dt.timedelta(days=i // 3)).date()) for i in range(30)])  # 3 visits a day, 10 days
    job = SqlJob(tmp_path, db, tables="visits", extract__delta__fields="day")
    assert job.run().returncode == 0
    done = run_gpy("state", "startpoint", "set", str(job.file), "--dataset", "visits",
                   "--timestamp", "2024-03-05T12:00:00Z")
    assert done.returncode == 0, done.stderr
    ran = job.run()
    assert ran.returncode == 0, ran.stderr
    assert job.ids("visits", "id") == sorted(list(range(30)) + list(range(15, 30)))  # from 2024-03-06 on
    latest = FsDatasetStateStore.from_properties(job.props).get_latest_dataset_state("Shop", "visits")
    assert latest is not None
    assert sum(p[2] for t in latest.task_states.values() for p in task_progress(t).values()) == 15
    assert "15 row(s) before it skipped" in ran.stdout, ran.stdout


@pytest.mark.parametrize("db", ["sqlite"], indirect=True)
def test_without_counts_the_rows_skipped_are_not_known(db, tmp_path):
    create_shop(db, orders=60, customers=1)
    job = SqlJob(tmp_path, db, tables="orders", source__querybased__skip__count__calc="true")
    assert job.run().returncode == 0
    done = run_gpy("state", "startpoint", "set", str(job.file), "--dataset", "orders",
                   "--timestamp", AT.isoformat() + "Z")
    assert done.returncode == 0, done.stderr
    ran = job.run()
    assert ran.returncode == 0, ran.stderr
    assert job.ids() == sorted(list(range(1, 61)) + list(range(41, 61)))
    assert "startpoint TIMESTAMP 2024-03-01T08:40:30Z" in ran.stdout and "before it skipped" not in ran.stdout
    [record] = [r for r in (json.loads(p.read_text()) for p in (job.state_dir / "_history" / "Shop").glob("*.json"))
                if any(d.get("startpoints") for d in r["datasets"])]
    assert record["datasets"][0]["startpoints"][0]["rows_skipped"] is None  # not counted, not said to be 0
