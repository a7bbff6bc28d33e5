"""Gobblin's JDBC writer and publisher on SQLite and on the real PostgreSQL server: staging tables per task,
one publishing transaction with a commit marker, exactly once across crashes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import fastavro
import pytest

from tests.conftest import run_gpy

SCHEMA = {"type": "record", "name": "User", "fields": [
    {"name": "id", "type": "long"}, {"name": "businessUnit", "type": "string"},
    {"name": "geo", "type": {"type": "record", "name": "Geo", "fields": [{"name": "region", "type": "string"}]}},
    {"name": "signedUp", "type": "long"}, {"name": "score", "type": ["null", "double"], "default": None}]}
DAY_MS = 86_400_000


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


@pytest.fixture(params=["sqlite", "postgresql"])
def target(request, tmp_path):
    pg_db = request.getfixturevalue("pg_db") if request.param == "postgresql" else None
    return Target(request.param, tmp_path, pg_db)


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


def test_rows_reach_the_final_table_once_and_staging_tables_are_gone(target, tmp_path):
    write_users(tmp_path / "data" / "a.avro", range(1, 21))
    write_users(tmp_path / "data" / "b.avro", range(21, 31))
    path = job(tmp_path, target)
    first = run(path)
    assert target.ids() == list(range(1, 31))
    assert "test_user" in first.stdout  # the summary names where the data went
    row = target.query("SELECT business_unit, geo_region, signed_up, score FROM test_user WHERE id = 3")[0]
    assert row[0] == "bu0" and row[1] == "EMEA" and str(row[2]).startswith("1970-01-04") and row[3] == 1.5
    assert not [t for t in target.tables() if t.startswith("stage_")]
    assert target.query("SELECT count(*) FROM gpy_commits")[0][0] == 1
    if target.pg is not None:
        assert target.pg.password not in first.stdout + first.stderr
        from gobblin_py.store import FsDatasetStateStore

        state = FsDatasetStateStore(str(tmp_path / "state")).get_latest_dataset_state("AvroToDb", "")
        for task in state.all_task_states():
            values = {**task.workunit.properties, **task.properties}
            assert target.pg.password not in values.values()
    run(path)  # nothing new: nothing inserted
    write_users(tmp_path / "data" / "c.avro", range(31, 36))
    run(path)
    assert target.ids() == list(range(1, 36))


def test_replace_table_empties_the_final_table_in_the_same_transaction(target, tmp_path):
    target.execute("INSERT INTO test_user (id) VALUES (999)")
    write_users(tmp_path / "data" / "a.avro", range(1, 6))
    path = job(tmp_path, target, "jdbc.publisher.replace_table=true\n")
    run(path)
    assert target.ids() == [1, 2, 3, 4, 5]
    write_users(tmp_path / "data" / "b.avro", range(6, 9))
    run(path)
    assert target.ids() == [6, 7, 8]


@pytest.mark.parametrize("boundary", [2, 3])  # 2: the commit is logged, nothing done; 3: rows published, state not saved
def test_a_crash_in_the_commit_publishes_exactly_once(target, tmp_path, boundary):
    write_users(tmp_path / "data" / "a.avro", range(1, 13))
    path = job(tmp_path, target)
    crashed = run_gpy("run", str(path), "--engine", "local", env={"GPY_TEST_CRASH_AT_BOUNDARY": str(boundary)})
    assert crashed.returncode == -9
    assert target.ids() == ([] if boundary == 2 else list(range(1, 13)))
    run(path)  # finishes the logged commit first, then finds nothing new
    assert target.ids() == list(range(1, 13))
    assert not [t for t in target.tables() if t.startswith("stage_")]
    run(path)
    assert target.ids() == list(range(1, 13))


def test_a_failed_task_publishes_nothing_and_drops_its_staging_table(target, tmp_path):
    write_users(tmp_path / "data" / "a.avro", range(1, 4))
    target.execute("CREATE TABLE narrow (id BIGINT)")
    path = job(tmp_path, target, "jdbc.publisher.table_name=narrow\n")
    path.write_text(path.read_text().replace("jdbc.publisher.table_name=test_user\n", ""))
    result = run(path, expect=2)  # the target table does not fit the job: a person must fix one of them
    assert "business_unit" in result.stdout and "not in table narrow" in result.stdout
    assert "gpy: error: " in result.stderr and "not in table narrow" in result.stderr
    assert target.query("SELECT count(*) FROM narrow")[0][0] == 0
    assert not [t for t in target.tables() if t.startswith("stage_")]


def test_a_missing_final_table_is_named(target, tmp_path):
    write_users(tmp_path / "data" / "a.avro", range(1, 3))
    path = job(tmp_path, target)
    path.write_text(path.read_text().replace("jdbc.publisher.table_name=test_user", "jdbc.publisher.table_name=nope"))
    result = run(path, expect=2)
    assert "jdbc.publisher.table_name=nope: no such table" in result.stdout and "create it first" in result.stdout
    assert "gpy: error: " in result.stderr and "jdbc.publisher.table_name=nope: no such table" in result.stderr


@pytest.mark.parametrize("line,key", [("writer.destination.type=TERADATA", "writer.destination.type"),
                                      ("writer.staging.table=mine", "writer.staging.table"),
                                      ("jdbc.publisher.password=ENC(abc)", "jdbc.publisher.password")])
def test_what_gpy_does_not_support_is_refused_before_any_work(tmp_path, line, key):
    target = Target("sqlite", tmp_path)
    write_users(tmp_path / "data" / "a.avro", range(1, 3))
    path = job(tmp_path, target, line + "\n")
    result = run_gpy("run", str(path), "--engine", "local")
    assert result.returncode == 2 and key in result.stderr
    assert target.ids() == []


@pytest.mark.spark
def test_on_spark_executors_write_staging_tables_the_driver_publishes(tmp_path, spark):
    from click.testing import CliRunner

    from gobblin_py.cli import main

    target = Target("sqlite", tmp_path)
    write_users(tmp_path / "data" / "a.avro", range(1, 11))
    write_users(tmp_path / "data" / "b.avro", range(11, 16))
    result = CliRunner().invoke(main, ["run", str(job(tmp_path, target)), "--engine", "spark", "--master", "local[2]"])
    assert result.exit_code == 0, result.output
    assert target.ids() == list(range(1, 16)) and not [t for t in target.tables() if t.startswith("stage_")]


@pytest.mark.parametrize("change,key,says", [
    (("jdbc.publisher.url=jdbc:sqlite:{root}/users.db", "jdbc.publisher.url=jdbc:sqlite:{root}/nope.db"),
     "jdbc.publisher.url", "no SQLite database file {root}/nope.db"),
    (("jdbc.publisher.table_name=test_user", "jdbc.publisher.table_name=test\\u0000user"),
     "jdbc.publisher.table_name", "NUL"),
])
def test_a_missing_database_file_or_a_nul_in_the_table_is_refused_before_any_work(tmp_path, change, key, says):
    target = Target("sqlite", tmp_path)
    write_users(tmp_path / "data" / "a.avro", range(1, 3))
    path = job(tmp_path, target)
    old, new = (text.format(root=tmp_path) for text in change)
    path.write_text(path.read_text().replace(old, new))
    for command in (["validate", str(path)], ["run", str(path), "--engine", "local"]):
        result = run_gpy(*command)
        output = result.stdout + result.stderr
        assert result.returncode == 2, output
        assert f"key '{key}'" in output and says.format(root=tmp_path) in output, output
    assert not (tmp_path / "nope.db").exists() and not (tmp_path / "state").exists()
    assert target.ids() == []
