"""Make the sample shop database the SQL example jobs pull (deterministic, so reruns match).

    python scripts/make_sqlite_sample.py [DB]            # create DB (default work/sqlite/shop.db), replacing it
    python scripts/make_sqlite_sample.py [DB] --more     # new orders, some orders updated, a new customer
    python scripts/make_sqlite_sample.py --postgres "host=… port=… user=… password=… dbname=…" [--more]

Tables (the same on both databases):

- ``customers(customer_id, name, email, country, created_at)`` — pulled by id (watermark type simple);
- ``orders(order_id, customer_id, amount numeric(10,2), currency, status, note, paid, ordered_at, updated_at)``
  — pulled by ``updated_at`` (timestamp); ``--more`` adds orders and updates some (an update moves
  ``updated_at``, so the next run pulls the row again);
- ``products(sku, title, price, active)`` — no delta column: a snapshot each run.

SQLite files are put in WAL mode, so that a job can read while the shop keeps writing.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

BASE = datetime(2026, 11, 1, 8, 0, 0)
CUSTOMERS = 50
ORDERS = 500
PRODUCTS = 12

DDL = {
    "sqlite": [
        "CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT, country TEXT, "
        "created_at TIMESTAMP NOT NULL)",
        "CREATE TABLE orders (order_id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL, amount NUMERIC(10,2) NOT NULL, "
        "currency TEXT NOT NULL, status TEXT NOT NULL, note TEXT, paid BOOLEAN NOT NULL, ordered_at TIMESTAMP NOT NULL, "
        "updated_at TIMESTAMP NOT NULL)",
        "CREATE INDEX orders_updated_at ON orders (updated_at)",
        "CREATE TABLE products (sku TEXT PRIMARY KEY, title TEXT NOT NULL, price NUMERIC(8,2) NOT NULL, active BOOLEAN NOT NULL)",
    ],
    "postgresql": [
        "CREATE TABLE customers (customer_id bigint PRIMARY KEY, name text NOT NULL, email text, country text, "
        "created_at timestamptz NOT NULL)",
        "CREATE TABLE orders (order_id bigint PRIMARY KEY, customer_id bigint NOT NULL, amount numeric(10,2) NOT NULL, "
        "currency text NOT NULL, status text NOT NULL, note text, paid boolean NOT NULL, ordered_at timestamptz NOT NULL, "
        "updated_at timestamptz NOT NULL)",
        "CREATE INDEX orders_updated_at ON orders (updated_at)",
        "CREATE TABLE products (sku text PRIMARY KEY, title text NOT NULL, price numeric(8,2) NOT NULL, active boolean NOT NULL)",
    ],
}


def _stamp(value: datetime, kind: str):
    return value.isoformat(sep=" ") if kind == "sqlite" else value.replace(tzinfo=timezone.utc)


def customer_rows(first: int, count: int, rng: random.Random, kind: str) -> list[tuple]:
    return [
        (i, f"customer {i}", f"c{i}@example.com", rng.choice(["DE", "FR", "US", "GB", "CH"]),
         _stamp(BASE + timedelta(hours=i), kind))
        for i in range(first, first + count)
    ]


def order_rows(first: int, count: int, start: datetime, rng: random.Random, kind: str) -> list[tuple]:
    rows = []
    for i in range(first, first + count):
        at = start + timedelta(seconds=1200 * (i - first), microseconds=rng.randrange(1_000_000))
        amount = Decimal(rng.randrange(200, 40000)) / 100
        rows.append((
            i, rng.randrange(1, CUSTOMERS + 1), amount if kind == "postgresql" else float(amount),
            rng.choice(["EUR", "USD", "CHF"]), "new", rng.choice([None, "gift", "express", "pickup"]),
            rng.random() < 0.5 if kind == "postgresql" else int(rng.random() < 0.5),
            _stamp(at, kind), _stamp(at, kind),
        ))
    return rows


def product_rows(kind: str) -> list[tuple]:
    return [(f"SKU-{i:03d}", f"product {i}", Decimal(i * 150) / 100 if kind == "postgresql" else i * 1.5,
             (i % 4 != 0) if kind == "postgresql" else int(i % 4 != 0)) for i in range(1, PRODUCTS + 1)]


def create(conn, kind: str) -> None:
    ph = "?" if kind == "sqlite" else "%s"
    rng = random.Random(7)
    cur = conn.cursor()
    for statement in DDL[kind]:
        cur.execute(statement)
    cur.executemany(f"INSERT INTO customers VALUES ({', '.join([ph] * 5)})", customer_rows(1, CUSTOMERS, rng, kind))
    cur.executemany(f"INSERT INTO orders VALUES ({', '.join([ph] * 9)})", order_rows(1, ORDERS, BASE, rng, kind))
    cur.executemany(f"INSERT INTO products VALUES ({', '.join([ph] * 4)})", product_rows(kind))
    conn.commit()


def more(conn, kind: str, new_orders: int = 40, updates: int = 10) -> None:
    """New orders after the latest one, some existing orders updated, one new customer."""
    ph = "?" if kind == "sqlite" else "%s"
    cur = conn.cursor()
    cur.execute("SELECT max(order_id), max(updated_at) FROM orders")
    last_id, last_update = cur.fetchone()
    if isinstance(last_update, str):
        last_update = datetime.fromisoformat(last_update)
    last_update = last_update.replace(tzinfo=None)
    rng = random.Random(last_id)
    start = last_update + timedelta(minutes=5)
    cur.executemany(f"INSERT INTO orders VALUES ({', '.join([ph] * 9)})",
                    order_rows(last_id + 1, new_orders, start, rng, kind))
    changed = start + timedelta(hours=1)
    for order_id in rng.sample(range(1, last_id + 1), updates):
        cur.execute(f"UPDATE orders SET status = 'shipped', updated_at = {ph} WHERE order_id = {ph}",
                    (_stamp(changed, kind), order_id))
        changed += timedelta(seconds=1)
    cur.execute("SELECT max(customer_id) FROM customers")
    next_customer = cur.fetchone()[0] + 1
    cur.executemany(f"INSERT INTO customers VALUES ({', '.join([ph] * 5)})", customer_rows(next_customer, 1, rng, kind))
    conn.commit()


def make_sqlite(path: Path, add: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not add and path.exists():
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        if add:
            more(conn, "sqlite")
        else:
            create(conn, "sqlite")
    finally:
        conn.close()
    return path


def make_postgres(conninfo: str, add: bool = False) -> None:
    import psycopg

    with psycopg.connect(conninfo) as conn:
        if add:
            more(conn, "postgresql")
        else:
            for table in ("orders", "customers", "products"):
                conn.execute(f"DROP TABLE IF EXISTS {table}")
            create(conn, "postgresql")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("database", nargs="?", default="work/sqlite/shop.db", help="SQLite file to create")
    parser.add_argument("--more", action="store_true", help="add new and updated rows instead of creating")
    parser.add_argument("--postgres", metavar="CONNINFO", help="load a PostgreSQL database instead ('' = PG* env)")
    args = parser.parse_args()
    if args.postgres is not None:
        make_postgres(args.postgres, args.more)
        print(f"PostgreSQL sample {'updated' if args.more else 'loaded'}")
    else:
        path = make_sqlite(Path(args.database), args.more)
        print(f"{path}: sample shop database {'updated' if args.more else 'created'}")


if __name__ == "__main__":
    main()
