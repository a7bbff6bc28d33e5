"""Bad input and broken servers: each gives one clear error, changes no state and leaks no password."""

from __future__ import annotations

import datetime as dt

from tests.sql.helpers import BASE, SqlJob, add_orders, count, create_shop
from tests.sql.servers import PG_PASSWORD
from tests.support.cli import run_gpy
from tests.support.net import free_port

WRONG_PASSWORD = "Wrong-Pw-93jf-Qx"


def assert_no_secret(job: SqlJob, *outcomes, secrets=(PG_PASSWORD, WRONG_PASSWORD)) -> None:
    """No password in the run's output, its state store, its published data or ``gpy state show``."""
    shown = run_gpy("state", "show", str(job.file))
    shown_json = run_gpy("state", "show", str(job.file), "--json")
    texts = [o.output for o in outcomes] + [shown.stdout + shown.stderr, shown_json.stdout + shown_json.stderr]
    blobs = list(job.state_files(history=True).values()) + list(job.published_files().values())
    for secret in secrets:
        assert all(secret not in text for text in texts), secret
        assert all(secret.encode() not in blob for blob in blobs), secret


def last_line(outcome) -> str:
    return outcome.stderr.strip().splitlines()[-1]


def test_wrong_credentials(postgres_db, tmp_path):
    create_shop(postgres_db, orders=20, customers=3)
    job = SqlJob(tmp_path, postgres_db)
    ok = job.run()
    assert ok.returncode == 0, ok.output
    before_state, before_data = job.state_files(), job.published_files()
    add_orders(postgres_db, 21, 5, at=BASE + dt.timedelta(days=1))
    job.set(source__conn__password=WRONG_PASSWORD)
    bad = job.run()
    assert bad.returncode == 2, bad.output
    line = last_line(bad)
    assert "authentication failed for user 'gpy_loader'" in line and "source.conn.password" in line
    assert f"127.0.0.1:{postgres_db.database.port}" in line and "Traceback" not in bad.stderr
    assert job.state_files() == before_state and job.published_files() == before_data
    assert_no_secret(job, ok, bad)
    # the right password again: the rows added meanwhile come, once
    job.set(source__conn__password=PG_PASSWORD)
    assert job.run().returncode == 0
    assert job.ids() == list(range(1, 26))


def test_missing_table(db, tmp_path):
    create_shop(db, orders=10, customers=3)
    job = SqlJob(tmp_path, db)
    assert job.run().returncode == 0
    before = job.state_files()
    job.set(source__entities="orders,customers,refunds")
    bad = job.run()
    assert bad.returncode == 2, bad.output
    line = last_line(bad)
    assert "no table 'refunds'" in line and "customers, orders" in line, line
    assert job.state_files() == before


def test_missing_delta_column(db, tmp_path):
    create_shop(db, orders=10, customers=3)
    job = SqlJob(tmp_path, db, extract__delta__fields="modified_at")
    bad = job.run()
    assert bad.returncode == 2, bad.output
    line = last_line(bad)
    assert "extract.delta.fields=modified_at" in line and "no column 'modified_at'" in line and "updated_at" in line
    assert not job.state_dir.exists() or not job.state_files()


def test_missing_sqlite_file_and_unreachable_server(tmp_path, sqlite_db, postgres_db):
    create_shop(sqlite_db, orders=3, customers=1)
    job = SqlJob(tmp_path / "a", sqlite_db, source__conn__database=str(tmp_path / "nope.db"))
    bad = job.run()
    assert bad.returncode == 2 and "no SQLite database file" in last_line(bad)
    assert not (tmp_path / "nope.db").exists()  # never created by opening it
    job = SqlJob(tmp_path / "b", postgres_db, source__conn__port=str(free_port()), source__conn__timeout="3000")
    bad = job.run()
    assert bad.returncode == 1, bad.output
    assert "cannot connect to postgresql://gpy_loader@127.0.0.1:" in last_line(bad)
    assert_no_secret(job, bad)


def test_bad_value_fails_the_task_with_the_column_named(sqlite_db, tmp_path):
    create_shop(sqlite_db, orders=30, customers=1)
    sqlite_db.execute("UPDATE orders SET customer_id = 'n/a' WHERE id = 25")  # SQLite keeps the text
    job = SqlJob(tmp_path, sqlite_db, tables="orders", source__querybased__fetch__size="10")
    bad = job.run()
    assert bad.returncode == 1
    assert "column customer_id (INTEGER): cannot read its values as int64" in bad.stderr
    assert job.ids() == [] and not job.state_files()


def test_dead_server_mid_run(private_pg_db, tmp_path):
    from tests.sql.helpers import PostgresDb

    db = PostgresDb(private_pg_db)
    cluster = private_pg_db.cluster
    create_shop(db, orders=100, customers=3)
    once = tmp_path / "once"
    once.mkdir()
    job = SqlJob(tmp_path / "job", db, tables="orders", source__querybased__fetch__method="cursor",
                 source__querybased__fetch__size="10")
    assert job.run().returncode == 0
    before_state, before_data = job.state_files(), job.published_files()
    add_orders(db, 101, 200, at=BASE + dt.timedelta(days=1))
    job.set(converter__classes="tests.sql.plugins.StopServerAfterFirstBatch", test__once__dir=str(once),
            test__stop__command=cluster.stop_command())
    dead = job.run()
    assert (once / "stopped").exists()
    assert dead.returncode == 1, dead.output
    assert "dataset orders: FAILED" in dead.stdout and "nothing published, state kept" in dead.stdout
    assert "lost the connection to postgresql://gpy_loader@127.0.0.1" in dead.stderr
    assert job.state_files() == before_state and job.published_files() == before_data
    assert_no_secret(job, dead)
    cluster.start()
    job.set(converter__classes=None)
    again = job.run()
    assert again.returncode == 0, again.output
    assert job.ids() == list(range(1, 301)) and count(db, "orders") == 300
