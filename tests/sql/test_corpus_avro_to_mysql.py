"""The corpus job avro-to-mysql.pull, run on SQLite and on the real PostgreSQL server (the job's MySQL swapped
for the test databases; everything else as Gobblin ships it)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import fastavro
import pytest

from tests.corpus.harness import local_copy, run_job, system_config
from tests.support.paths import NEEDS_CORPUS

pytestmark = NEEDS_CORPUS
EXAMPLES = "gobblin-example/src/main/resources/"

USER = {"type": "record", "name": "User", "fields": [
    {"name": "id", "type": "int"}, {"name": "businessUnit", "type": "string"}, {"name": "geoRegion", "type": "string"},
    {"name": "superRegion", "type": "string"}, {"name": "subRegion", "type": ["null", "string"], "default": None}]}
COLUMNS = "id INTEGER, business_unit VARCHAR(20), geo_region VARCHAR(20), super_region VARCHAR(20), sub_region VARCHAR(20)"


def write_users(path: Path, ids: range) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [{"id": i, "businessUnit": f"bu{i % 2}", "geoRegion": "EMEA", "superRegion": "EU",
             "subRegion": None if i % 3 == 0 else "west"} for i in ids]
    with open(path, "wb") as out:
        fastavro.writer(out, USER, rows)


@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
def test_avro_to_mysql(database, tmp_path, request):
    write_users(tmp_path / "avro" / "a.avro", range(0, 50))
    write_users(tmp_path / "avro" / "nested" / "b.avro", range(50, 60))
    if database == "sqlite":
        with sqlite3.connect(tmp_path / "db.sqlite") as conn:
            conn.execute(f"CREATE TABLE test_user ({COLUMNS})")
            conn.execute("INSERT INTO test_user (id) VALUES (-1)")  # replace_table=true empties it
        db = {"jdbc.publisher.url": f"jdbc:sqlite:{tmp_path / 'db.sqlite'}", "writer.destination.type": "SQLITE",
              "jdbc.publisher.driver": "org.sqlite.JDBC"}

        def query(sql):
            with sqlite3.connect(tmp_path / "db.sqlite") as conn:
                return conn.execute(sql).fetchall()
    else:
        pg = request.getfixturevalue("pg_db")
        pg.execute("CREATE SCHEMA database_name")  # the job's jdbc.publisher.database_name, as it is
        pg.execute(f"CREATE TABLE database_name.test_user ({COLUMNS})")
        pg.execute("INSERT INTO database_name.test_user (id) VALUES (-1)")
        db = {"jdbc.publisher.url": f"jdbc:postgresql://{pg.host}:{pg.port}/{pg.name}", "writer.destination.type":
              "POSTGRES", "jdbc.publisher.driver": "org.postgresql.Driver", "jdbc.publisher.username": pg.user,
              "jdbc.publisher.password": pg.password}

        def query(sql):
            return pg.query(sql.replace("test_user", "database_name.test_user").replace("gpy_commits",
                                                                                        "database_name.gpy_commits"))
    job = local_copy(EXAMPLES + "avro-to-mysql.pull", tmp_path,
                     {"source.filebased.data.directory": str(tmp_path / "avro"), **db})
    system_config(tmp_path)
    run_job(job, tmp_path)
    rows = query("SELECT id, business_unit, geo_region, super_region, sub_region FROM test_user ORDER BY id")
    assert [r[0] for r in rows] == list(range(60))  # the old row is gone: replace_table=true
    assert rows[1] == (1, "bu1", "EMEA", "EU", "west") and rows[3][4] is None
    assert query("SELECT count(*) FROM gpy_commits")[0][0] == 1
    write_users(tmp_path / "avro" / "c.avro", range(100, 103))
    run_job(job, tmp_path)  # only the new file; replace_table empties the table first, as in Gobblin
    assert [r[0] for r in query("SELECT id FROM test_user ORDER BY id")] == [100, 101, 102]


