"""The MySQL/MariaDB dialect (PyMySQL) on a private MariaDB server; skipped when either is not installed."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa

from tests.sql.servers import MYSQL_PASSWORD
from tests.sql.helpers import BASE, SqlJob, add_customers, add_orders, count, create_shop, update_orders


def test_mysql_first_load_then_incremental(mysql_db, tmp_path):
    create_shop(mysql_db, orders=120, customers=15)
    job = SqlJob(tmp_path, mysql_db, source__querybased__partition__interval="0.5")
    first = job.run()
    assert first.returncode == 0, first.output
    assert job.ids("orders") == list(range(1, 121)) and job.ids("customers") == list(range(1, 16))
    orders = job.published("orders")
    assert orders.schema.field("amount").type == pa.decimal128(10, 2)
    assert orders.schema.field("paid").type == pa.bool_()
    assert orders.schema.field("updated_at").type == pa.timestamp("us")
    row = orders.sort_by("id").slice(2, 1).to_pylist()[0]
    assert row["amount"] == Decimal("3.75") and row["payload"] == bytes([3, 7]) and row["day"] == dt.date(2024, 3, 4)
    later = BASE + dt.timedelta(hours=3)
    add_orders(mysql_db, 121, 5, at=later)
    update_orders(mysql_db, [8], later + dt.timedelta(hours=1))
    add_customers(mysql_db, 16, 1)
    second = job.run()
    assert second.returncode == 0, second.output
    ids = job.ids("orders")
    assert len(ids) == 126 and sorted(set(ids)) == list(range(1, 126)) and len(set(ids)) == count(mysql_db, "orders")
    assert job.ids("customers") == list(range(1, 17))


def test_mysql_wrong_password_and_missing_table(mysql_db, tmp_path):
    create_shop(mysql_db, orders=3, customers=1)
    job = SqlJob(tmp_path, mysql_db, source__conn__password="Wrong-Maria-Pw")
    bad = job.run()
    assert bad.returncode == 2 and "authentication failed for user 'gpy'" in bad.stderr
    assert "Wrong-Maria-Pw" not in bad.output and MYSQL_PASSWORD not in bad.output
    job.set(source__conn__password=MYSQL_PASSWORD, source__entities="orders,nope")
    bad = job.run()
    assert bad.returncode == 2 and "no table 'nope'" in bad.stderr
