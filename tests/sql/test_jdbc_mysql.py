"""The JDBC writer and publisher on MySQL/MariaDB (when PyMySQL and a MariaDB server are installed)."""

from __future__ import annotations

from types import SimpleNamespace

from tests.support.jdbc import job, run, write_users


def test_mysql_staging_tables_and_replace_into(mysql_db, tmp_path):
    mysql_db.execute("CREATE TABLE test_user (id BIGINT PRIMARY KEY, business_unit VARCHAR(40), geo_region TEXT, "
                     "signed_up DATETIME, score DOUBLE)")
    mysql_db.execute("INSERT INTO test_user (id, business_unit) VALUES (3, 'old')")
    write_users(tmp_path / "data" / "a.avro", range(1, 8))
    props = {"jdbc.publisher.url": f"jdbc:mysql://{mysql_db.host}:{mysql_db.port}/{mysql_db.database}",
             "jdbc.publisher.username": mysql_db.user, "jdbc.publisher.password": mysql_db.password,
             "jdbc.publisher.database_name": mysql_db.database, "writer.destination.type": "MYSQL",
             "allow.jdbc.record.overwrite": "true"}
    run(job(tmp_path, SimpleNamespace(props=props)))
    rows = mysql_db.query("SELECT id, business_unit FROM test_user ORDER BY id")
    assert [r[0] for r in rows] == list(range(1, 8)) and rows[2][1] == "bu0"  # REPLACE took the new row 3
    tables = [r[0] for r in mysql_db.query("SHOW TABLES")]
    assert not [t for t in tables if t.startswith("stage_")] and "gpy_commits" in tables
