"""JDBC writer jobs (SQLite or PostgreSQL targets) as the SQL tests write and run them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import fastavro

from tests.support.cli import run_gpy

SCHEMA = {"type": "record", "name": "User", "fields": [
    {"name": "id", "type": "long"}, {"name": "businessUnit", "type": "string"},
    {"name": "geo", "type": {"type": "record", "name": "Geo", "fields": [{"name": "region", "type": "string"}]}},
    {"name": "signedUp", "type": "long"}, {"name": "score", "type": ["null", "double"], "default": None}]}
DAY_MS = 86_400_000


def write_users(path: Path, ids: range) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [{"id": i, "businessUnit": f"bu{i % 3}", "geo": {"region": "EMEA" if i % 2 else "APAC"},
             "signedUp": i * DAY_MS, "score": None if i % 4 == 0 else i / 2} for i in ids]
    with open(path, "wb") as out:
        fastavro.writer(out, SCHEMA, rows)


def job(root: Path, target: Target, extra: str = "") -> Path:
    props = {
        "job.name": "AvroToDb", "source.class": "org.apache.gobblin.source.extractor.hadoop.AvroFileSource",
        "source.filebased.data.directory": str(root / "data"), "extract.table.type": "SNAPSHOT_ONLY",
        "extract.namespace": "dummy", "extract.table.name": "users", "source.max.number.of.partitions": "3",
        "converter.classes": "org.apache.gobblin.converter.jdbc.AvroToJdbcEntryConverter",
        "converter.avro.jdbc.entry_fields_pairs": '{"businessUnit":"business_unit", "signedUp":"signed_up"}',
        "writer.builder.class": "org.apache.gobblin.writer.JdbcWriterBuilder", "writer.jdbc.batch_size": "7",
        "data.publisher.type": "org.apache.gobblin.publisher.JdbcPublisher", "jdbc.publisher.table_name": "test_user",
        "writer.staging.dir": str(root / "staging"), "writer.output.dir": str(root / "output"),
        "state.store.dir": str(root / "state"), "task.maxretries": "0", **target.props,
    }
    path = root / "job.pull"
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()) + extra)
    return path


def run(path: Path, env: dict | None = None, expect: int = 0):
    result = run_gpy("run", str(path), "--engine", "local", env=env)
    assert result.returncode == expect, result.stdout + result.stderr
    return result


class Target:
    """The database the job writes to, with the SQL the test checks it with."""

    def __init__(self, kind: str, tmp_path: Path, pg_db=None) -> None:
        self.kind, self.pg = kind, pg_db
        if kind == "sqlite":
            self.path = tmp_path / "users.db"
            self.props = {"jdbc.publisher.url": f"jdbc:sqlite:{self.path}", "writer.destination.type": "SQLITE",
                          "jdbc.publisher.driver": "org.sqlite.JDBC"}
        else:
            self.props = {"jdbc.publisher.url": f"jdbc:postgresql://{pg_db.host}:{pg_db.port}/{pg_db.name}",
                          "jdbc.publisher.username": pg_db.user, "jdbc.publisher.password": pg_db.password,
                          "jdbc.publisher.database_name": "public", "writer.destination.type": "POSTGRES",
                          "jdbc.publisher.driver": "org.postgresql.Driver"}
        self.execute("CREATE TABLE test_user (id BIGINT NOT NULL, business_unit VARCHAR(40), geo_region TEXT, "
                     "signed_up TIMESTAMP, score DOUBLE PRECISION)")

    def execute(self, sql: str) -> None:
        if self.kind == "sqlite":
            with sqlite3.connect(self.path) as conn:
                conn.execute(sql)
        else:
            self.pg.execute(sql)

    def query(self, sql: str) -> list[tuple]:
        if self.kind == "sqlite":
            with sqlite3.connect(self.path) as conn:
                return conn.execute(sql).fetchall()
        return self.pg.query(sql)

    def tables(self) -> set[str]:
        if self.kind == "sqlite":
            return {r[0] for r in self.query("SELECT name FROM sqlite_master WHERE type = 'table'")}
        return {r[0] for r in self.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}

    def ids(self) -> list[int]:
        return sorted(r[0] for r in self.query("SELECT id FROM test_user"))
