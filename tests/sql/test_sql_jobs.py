"""The shipped SQL example jobs, and incremental runs on the Spark engine."""

from __future__ import annotations

import datetime as dt
import re
import shutil
import sqlite3
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from tests.sql.helpers import LATER, SqlJob, add_customers, add_orders, count, create_shop, update_orders
from tests.support.cli import run_gpy_here
from tests.support.paths import REPO


def _copy_repo_bits(tmp_path):
    shutil.copytree(REPO / "jobs", tmp_path / "jobs", ignore=shutil.ignore_patterns("data"))
    shutil.copytree(REPO / "scripts", tmp_path / "scripts")


def _script(tmp_path, *args, env=None):
    done = subprocess.run([sys.executable, "scripts/make_sqlite_sample.py", *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done


def _ids(root, table, column):
    path = root / "examples" / "shop" / table
    return sorted(pq.read_table(path).column(column).to_pylist())


def test_sqlite_example_job_runs_out_of_the_box(tmp_path):
    _copy_repo_bits(tmp_path)
    _script(tmp_path)
    db = tmp_path / "work" / "sqlite" / "shop.db"
    first = run_gpy_here("run", "jobs/sqlite_incremental.pull", "--engine", "local", cwd=tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    published = tmp_path / "work" / "sqlite" / "published"
    with sqlite3.connect(db) as conn:
        counts = {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("orders", "customers", "products")}
    assert counts == {"orders": 500, "customers": 50, "products": 12}
    assert _ids(published, "orders", "order_id") == list(range(1, 501))
    assert _ids(published, "customers", "customer_id") == list(range(1, 51))
    assert "dataset orders: COMMITTED  tasks 8/8 committed" in first.stdout  # 12-hour ranges, at most 8

    second = run_gpy_here("run", "jobs/sqlite_incremental.pull", "--engine", "local", cwd=tmp_path)
    assert second.returncode == 0
    assert "dataset orders" not in second.stdout and "dataset products: COMMITTED" in second.stdout

    _script(tmp_path, "--more")
    third = run_gpy_here("run", "jobs/sqlite_incremental.pull", "--engine", "local", cwd=tmp_path)
    assert third.returncode == 0, third.stdout + third.stderr
    orders = _ids(published, "orders", "order_id")
    assert len(orders) == 500 + 40 + 10 and sorted(set(orders)) == list(range(1, 541))
    assert _ids(published, "customers", "customer_id") == list(range(1, 52))
    shown = run_gpy_here("state", "show", "jobs/sqlite_incremental.pull", cwd=tmp_path)
    assert shown.returncode == 0
    # time watermarks read as times in the table, and keep value and time in --json
    assert re.search(r"\b20\d\d-\d\d-\d\dT\d\d:\d\d:\d\d", shown.stdout), shown.stdout
    as_json = run_gpy_here("state", "show", "jobs/sqlite_incremental.pull", "--json", cwd=tmp_path)
    assert '"time": "20' in as_json.stdout


def test_postgres_example_job_runs_against_the_test_server(pg_db, tmp_path):
    _copy_repo_bits(tmp_path)
    env = {**__import__("os").environ, **pg_db.env()}
    _script(tmp_path, "--postgres", "", env=env)
    first = run_gpy_here("run", "jobs/postgres_incremental.pull", "--engine", "local", cwd=tmp_path, env=pg_db.env())
    assert first.returncode == 0, first.stdout + first.stderr
    published = tmp_path / "work" / "postgres" / "published"
    assert _ids(published, "orders", "order_id") == list(range(1, 501)) and pg_db.query("SELECT count(*) FROM orders")[0][0] == 500
    assert pg_db.password not in first.stdout + first.stderr
    _script(tmp_path, "--postgres", "", "--more", env=env)
    second = run_gpy_here("run", "jobs/postgres_incremental.pull", "--engine", "local", cwd=tmp_path, env=pg_db.env())
    assert second.returncode == 0, second.stdout + second.stderr
    orders = _ids(published, "orders", "order_id")
    assert len(orders) == 550 and sorted(set(orders)) == list(range(1, 541))
    assert _ids(published, "customers", "customer_id") == list(range(1, 52))
    assert len(pq.read_table(published / "examples" / "shop" / "products").column("sku")) == 24  # two snapshots


@pytest.mark.spark
def test_incremental_runs_on_spark(db, tmp_path, spark):
    create_shop(db, orders=120, customers=15)
    job = SqlJob(tmp_path, db, source__querybased__partition__interval="0.5")
    first = job.run("spark")
    assert first.returncode == 0, first.output
    assert "engine spark" in first.stdout
    assert job.ids("orders") == list(range(1, 121)) and job.ids("customers") == list(range(1, 16))
    later = LATER
    add_orders(db, 121, 7, at=later)
    update_orders(db, [9], later + dt.timedelta(hours=1))
    add_customers(db, 16, 1)
    second = job.run("spark")
    assert second.returncode == 0, second.output
    ids = job.ids("orders")
    assert len(ids) == 128 and sorted(set(ids)) == list(range(1, 128)) and len(set(ids)) == count(db, "orders")
    assert job.ids("customers") == list(range(1, 17))
