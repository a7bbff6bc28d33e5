"""Test databases (SQLite, PostgreSQL and MariaDB behind one interface) and SQL jobs run through the real CLI."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from click.testing import CliRunner

from tests.support.cli import run_gpy, run_gpy_here

BASE = dt.datetime(2024, 3, 1, 8, 0, 0)
LATER = BASE + dt.timedelta(hours=3)  # after the orders create_shop makes (up to 179 of them)


class SqliteDb:
    """A SQLite file in WAL mode (so a job can read while a test writes)."""

    kind = "sqlite"
    types = {"id": "INTEGER", "int": "INTEGER", "ts": "TIMESTAMP", "tstz": "TIMESTAMPTZ", "num": "NUMERIC(10,2)",
             "text": "TEXT", "bool": "BOOLEAN", "bytes": "BLOB", "date": "DATE", "float": "REAL"}

    def __init__(self, path: Path) -> None:
        self.path = path
        with self.connect() as conn:
            conn.execute("PRAGMA journal_mode=WAL")

    def connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=30)

    def param(self, value: Any) -> Any:
        if isinstance(value, dt.datetime):
            return value.isoformat(sep=" ")
        if isinstance(value, dt.date):
            return value.isoformat()
        if isinstance(value, Decimal):
            return float(value)
        if isinstance(value, bool):
            return int(value)
        return value

    def execute(self, sql: str, params: tuple = ()) -> None:
        conn = self.connect()
        with conn:
            conn.execute(sql, tuple(self.param(p) for p in params))
        conn.close()

    def executemany(self, sql: str, rows: list[tuple]) -> None:
        conn = self.connect()
        with conn:
            conn.executemany(sql, [tuple(self.param(p) for p in row) for row in rows])
        conn.close()

    def query(self, sql: str, params: tuple = ()) -> list[tuple]:
        conn = self.connect()
        try:
            return conn.execute(sql, tuple(self.param(p) for p in params)).fetchall()
        finally:
            conn.close()

    def conn_props(self) -> dict[str, str]:
        return {"source.conn.driver": "sqlite", "source.conn.database": str(self.path)}

    def plugin_props(self) -> dict[str, str]:
        """Where the test plugins write (they do not use the job's connection)."""
        return {"test.insert.sqlite": str(self.path)}

    def sql_literal_ts(self, value: dt.datetime) -> str:
        return f"'{value.isoformat(sep=' ')}'"


class PostgresDb:
    """A database of the test PostgreSQL server, written with the same '?' placeholders as SQLite."""

    kind = "postgresql"
    types = {"id": "bigint", "int": "integer", "ts": "timestamp", "tstz": "timestamptz", "num": "numeric(10,2)",
             "text": "text", "bool": "boolean", "bytes": "bytea", "date": "date", "float": "double precision"}

    def __init__(self, database) -> None:
        self.database = database

    def param(self, value: Any) -> Any:
        return value

    def execute(self, sql: str, params: tuple = ()) -> None:
        self.database.execute(sql.replace("?", "%s"), params or None)

    def executemany(self, sql: str, rows: list[tuple]) -> None:
        self.database.executemany(sql.replace("?", "%s"), rows)

    def query(self, sql: str, params: tuple = ()) -> list[tuple]:
        return self.database.query(sql.replace("?", "%s"), params or None)

    def conn_props(self) -> dict[str, str]:
        return self.database.conn_props()

    def plugin_props(self) -> dict[str, str]:
        d = self.database
        return {"test.insert.pg": f"host={d.host} port={d.port} user={d.user} password={d.password} dbname={d.name}"}

    def sql_literal_ts(self, value: dt.datetime) -> str:
        return f"timestamp '{value.isoformat(sep=' ')}'"


# ---------------------------------------------------------------- the shop tables


def order_time(i: int) -> dt.datetime:
    """Distinct, microsecond-precise update times, one minute apart."""
    return BASE + dt.timedelta(minutes=i, microseconds=i * 13)


def order_row(i: int, at: dt.datetime | None = None, note: str | None = "") -> tuple:
    return (i, i % 17, Decimal(i * 125) / 100, (f"note {i}" if note == "" else note) if i % 6 else None,
            i % 2 == 0, bytes([i % 256, 7]), (BASE + dt.timedelta(days=i % 5)).date(), at or order_time(i))


def create_shop(db, orders: int = 120, customers: int = 15) -> None:
    t = db.types
    db.execute(
        f"CREATE TABLE orders (id {t['id']} PRIMARY KEY, customer_id {t['int']}, amount {t['num']}, note {t['text']}, "
        f"paid {t['bool']}, payload {t['bytes']}, day {t['date']}, updated_at {t['ts']})"
    )
    db.execute(f"CREATE TABLE customers (customer_id {t['id']} PRIMARY KEY, name {t['text']})")
    add_orders(db, 1, orders)
    add_customers(db, 1, customers)


def add_orders(db, first: int, count: int, at: dt.datetime | None = None) -> None:
    db.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   [order_row(i, at + dt.timedelta(microseconds=i - first) if at else None) for i in range(first, first + count)])


def add_customers(db, first: int, count: int) -> None:
    db.executemany("INSERT INTO customers VALUES (?, ?)", [(i, f"customer {i}") for i in range(first, first + count)])


def update_orders(db, ids: list[int], at: dt.datetime, note: str = "updated") -> None:
    for n, i in enumerate(ids):
        db.execute("UPDATE orders SET note = ?, updated_at = ? WHERE id = ?", (note, at + dt.timedelta(seconds=n), i))


def count(db, table: str) -> int:
    return db.query(f"SELECT count(*) FROM {table}")[0][0]


# ---------------------------------------------------------------- jobs


class Outcome:
    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


class SqlJob:
    """A job file pulling tables of ``db`` into ``root/published``, with its state in ``root/state``."""

    def __init__(self, root: Path, db, tables: str = "orders,customers", name: str = "Shop", **extra: str) -> None:
        self.root = root
        self.db = db
        self.name = name
        self.final = root / "published"
        self.state_dir = root / "state"
        self.file = root / "shop.pull"
        root.mkdir(parents=True, exist_ok=True)
        self.props: dict[str, str] = {
            "job.name": name,
            "source.class": "gobblin_py.connectors.sql.QueryBasedSource",
            **db.conn_props(),
            "source.entities": tables,
            "extract.namespace": "shop",
            "extract.delta.fields": "updated_at",
            "extract.primary.key.fields": "id",
            "source.querybased.entity.customers.extract.delta.fields": "customer_id",
            "source.querybased.entity.customers.extract.primary.key.fields": "customer_id",
            "source.querybased.entity.customers.source.querybased.partition.interval": "0",
            "writer.staging.dir": f"{root}/staging",
            "writer.output.dir": f"{root}/output",
            "data.publisher.final.dir": str(self.final),
            "state.store.dir": str(self.state_dir),
            "task.maxretries": "0",
            "taskexecutor.threadpool.size": "2",
        }
        self.set(**extra)

    def set(self, **props: str) -> "SqlJob":
        for key, value in props.items():
            key = key.replace("__", ".")
            if value is None:
                self.props.pop(key, None)
            else:
                self.props[key] = str(value)
        self.file.write_text("".join(f"{k}={v}\n" for k, v in self.props.items()))
        return self

    def run(self, engine: str = "local") -> Outcome:
        if engine == "spark":
            result = CliRunner().invoke(
                __import__("gobblin_py.cli", fromlist=["main"]).main,
                ["run", str(self.file), "--engine", "spark", "--master", "local[2]"],
            )
            if result.exception and not isinstance(result.exception, SystemExit):
                raise result.exception
            return Outcome(result.exit_code, result.output, "")
        done = run_gpy_here("run", str(self.file), "--engine", "local")
        return Outcome(done.returncode, done.stdout, done.stderr)

    def published(self, table: str) -> pa.Table:
        files = sorted((self.final / "shop" / table).rglob("*.parquet")) if (self.final / "shop" / table).exists() else []
        if not files:
            return pa.table({})
        return pa.concat_tables([pq.read_table(f) for f in files], promote_options="default")

    def ids(self, table: str = "orders", column: str | None = None) -> list:
        data = self.published(table)
        column = column or ("id" if table == "orders" else "customer_id")
        return sorted(data.column(column).to_pylist()) if data.num_rows else []

    def state(self, cli: bool = False) -> dict:
        """What ``gpy state show --json`` prints, by dataset URN (in-process unless ``cli``)."""
        if cli:
            done = run_gpy("state", "show", str(self.file), "--json")
            assert done.returncode == 0, done.stderr
            rows = json.loads(done.stdout)["datasets"]
        else:
            from gobblin_py.store import FsDatasetStateStore, report

            rows = report.show(FsDatasetStateStore.from_properties(self.props), [self.name])
            rows = json.loads(json.dumps(rows))
        return {d["urn"]: d for d in rows}

    def state_files(self, history: bool = False) -> dict[str, bytes]:
        """The state store's files; the run history's records (``_history``, refused runs too) when asked."""
        return {str(p.relative_to(self.state_dir)): p.read_bytes() for p in self.state_dir.rglob("*")
                if p.is_file() and (history or "_history" not in p.relative_to(self.state_dir).parts)}

    def published_files(self) -> dict[str, bytes]:
        return {str(p.relative_to(self.final)): p.read_bytes() for p in self.final.rglob("*") if p.is_file()}


def frontier(dataset: dict) -> Any:
    """The highest actual high watermark of a dataset's tasks (its 'value' for single watermarks)."""
    highs = [t["actual_high_watermark"] for t in dataset["tasks"] if t["actual_high_watermark"] is not None]
    values = [h["value"] if isinstance(h, dict) and "value" in h else h for h in highs]
    return max(values) if values else None


class MysqlDb:
    """A MariaDB/MySQL database (PyMySQL), written with the same '?' placeholders as SQLite."""

    kind = "mysql"
    types = {"id": "BIGINT", "int": "INT", "ts": "DATETIME(6)", "tstz": "TIMESTAMP(6)", "num": "DECIMAL(10,2)",
             "text": "TEXT", "bool": "BOOLEAN", "bytes": "BLOB", "date": "DATE", "float": "DOUBLE"}

    def __init__(self, host: str, port: int, user: str, password: str, database: str) -> None:
        self.host, self.port, self.user, self.password, self.database = host, port, user, password, database

    def connect(self):
        import pymysql

        return pymysql.connect(host=self.host, port=self.port, user=self.user, password=self.password,
                               database=self.database, autocommit=True)

    def param(self, value: Any) -> Any:
        return value

    def state_store_keys(self, url: str | None = None) -> str:
        """The job keys of a MySQL state store in this database (``url``: another server's, to reach none)."""
        url = url or f"jdbc:mysql://{self.host}:{self.port}/{self.database}"
        return "\n".join(["state.store.type=mysql", f"state.store.db.url={url}", f"state.store.db.user={self.user}",
                          f"state.store.db.password={self.password}", ""])

    def execute(self, sql: str, params: tuple = ()) -> None:
        conn = self.connect()
        try:
            conn.cursor().execute(sql.replace("?", "%s"), params or None)
        finally:
            conn.close()

    def executemany(self, sql: str, rows: list[tuple]) -> None:
        conn = self.connect()
        try:
            conn.cursor().executemany(sql.replace("?", "%s"), rows)
        finally:
            conn.close()

    def query(self, sql: str, params: tuple = ()) -> list[tuple]:
        conn = self.connect()
        try:
            cur = conn.cursor()
            cur.execute(sql.replace("?", "%s"), params or None)
            return list(cur.fetchall())
        finally:
            conn.close()

    def conn_props(self) -> dict[str, str]:
        return {"source.conn.driver": "mysql", "source.conn.host": self.host, "source.conn.port": str(self.port),
                "source.conn.username": self.user, "source.conn.password": self.password,
                "source.conn.database": self.database}

    def sql_literal_ts(self, value: dt.datetime) -> str:
        return f"'{value.isoformat(sep=' ')}'"

    def plugin_props(self) -> dict[str, str]:
        return {"test.insert.mysql": json.dumps({"host": self.host, "port": self.port, "user": self.user,
                                                 "password": self.password, "database": self.database})}
