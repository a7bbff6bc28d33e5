"""Bad SQL source settings are refused before any work (exit 2), one line each naming the file, line and key.

Most cases are checked by loading the job file and running the same checks as ``gpy validate`` and the start of
``gpy run``; a few go through the CLI. What only the database can tell (a delta column the table lacks, delta
columns of different kinds) is refused when the run plans, also with exit 2 and nothing changed.
"""

from __future__ import annotations

import pytest

from gobblin_py.jobconf import load_job
from gobblin_py.runtime.plan.validation import check_job
from tests.sql.helpers import SqlJob, create_shop
from tests.support.cli import run_gpy

SECRET = "Pw-config-7Hq2-Zz"
GOOD = {
    "job.name": "Shop",
    "source.class": "gobblin_py.connectors.sql.QueryBasedSource",
    "source.conn.driver": "postgresql",
    "source.conn.host": "127.0.0.1",
    "source.conn.username": "loader",
    "source.conn.password": SECRET,
    "source.entities": "orders,customers",
    "extract.delta.fields": "updated_at",
    "task.data.root.dir": "work",
    "data.publisher.final.dir": "out",
    "state.store.dir": "state",
}
ORDERS = "source.querybased.entity.orders."

CASES = [
    ("unknown-driver", {"source.conn.driver": "oracle"}, "source.conn.driver", "'oracle' is not a supported driver"),
    ("bad-url", {"source.conn.url": "jdbc:oracle:thin:@h:1521:x"}, "source.conn.url", "unknown scheme 'oracle'"),
    ("bad-port", {"source.conn.port": "fifty"}, "source.conn.port", "not a whole number"),
    ("bad-timeout", {"source.conn.timeout": "-5"}, "source.conn.timeout", "at least 0"),
    ("bad-watermark-type", {"source.querybased.watermark.type": "weekly"}, "source.querybased.watermark.type",
     "simple | timestamp | hour | date"),
    ("bad-start-value", {"source.querybased.start.value": "yesterday"}, "source.querybased.start.value",
     "not a time"),
    ("start-value-for-simple", {"source.querybased.watermark.type": "simple", "source.querybased.start.value": "2024-01-01"},
     "source.querybased.start.value", "needs a whole number"),
    ("bad-end-value", {"source.querybased.end.value": "soon"}, "source.querybased.end.value", "not a time"),
    ("bad-partition-interval", {"source.querybased.partition.interval": "-2"}, "source.querybased.partition.interval",
     "at least 0"),
    ("words-partition-interval", {"source.querybased.partition.interval": "hourly"},
     "source.querybased.partition.interval", "not a number"),
    ("bad-max-partitions", {"source.max.number.of.partitions": "0"}, "source.max.number.of.partitions", "at least 1"),
    ("bad-fetch-method", {"source.querybased.fetch.method": "bulk"}, "source.querybased.fetch.method",
     "auto | adbc | copy | cursor"),
    ("bad-fetch-size", {"source.querybased.fetch.size": "0"}, "source.querybased.fetch.size", "at least 1"),
    ("bad-skipped-mode", {"source.querybased.skipped.dataset.mode": "ignore"}, "source.querybased.skipped.dataset.mode",
     "urn_state | empty_workunit"),
    ("bad-table-type", {"extract.table.type": "snapshot"}, "extract.table.type", "append_only | snapshot_only"),
    ("append-without-delta", {"extract.delta.fields": None, "extract.table.type": "append_only"}, "extract.table.type",
     "needs a delta column"),
    ("no-table", {"source.entities": None}, "source.entities", "is not set"),
    ("bad-whitelist", {"source.querybased.whitelist": "ord(ers"}, "source.querybased.whitelist",
     "not a regular expression"),
    ("bad-blacklist", {"source.querybased.blacklist": "[a-"}, "source.querybased.blacklist", "not a regular expression"),
    ("bad-limit", {"source.querybased.append.max.watermark.limit": "CURRENTWEEK-1"},
     "source.querybased.append.max.watermark.limit", "CURRENTDATE-n"),
    ("bad-timezone", {"source.timezone": "Mars/Olympus"}, "source.timezone", "not a known time zone"),
    ("bad-override-flag", {"source.querybased.is.watermark.override": "yes"},
     "source.querybased.is.watermark.override", "not a boolean"),
    ("bad-skip-count-flag", {"source.querybased.skip.count.calc": "1"}, "source.querybased.skip.count.calc",
     "not a boolean"),
    ("bad-unbounded-numeric", {"source.querybased.unbounded.numeric.type": "decimal(99,2)"},
     "source.querybased.unbounded.numeric.type", "precision must be 1 to 76"),
    ("class-with-partitions", {"source.querybased.watermark.class": "gobblin_py.sdk.watermarks.LongWatermark",
                               "source.querybased.partition.column": "shard"},
     "source.querybased.watermark.class", "cannot be combined"),
    ("unknown-watermark-class", {"source.querybased.watermark.class": "no.such.Watermark"},
     "source.querybased.watermark.class", "no.such.Watermark"),
    ("bad-max-mappers", {"mr.job.max.mappers": "0"}, "mr.job.max.mappers", "at least 1"),
    # one table's own values are checked as the job's are, and named as written
    ("entity-start-value", {ORDERS + "source.querybased.start.value": "the beginning"},
     ORDERS + "source.querybased.start.value", "not a time"),
    ("entity-fetch-method", {ORDERS + "source.querybased.fetch.method": "fast"},
     ORDERS + "source.querybased.fetch.method", "auto | adbc"),
    ("entity-of-unlisted-table", {"source.querybased.entity.refunds.source.querybased.partition.interval": "x"},
     "source.querybased.entity.refunds.source.querybased.partition.interval", "not a number"),
]


def write_job(tmp_path, changes: dict) -> tuple:
    props = {**GOOD, **changes}
    lines = [f"{k}={v}" for k, v in props.items() if v is not None]
    path = tmp_path / "shop.pull"
    path.write_text("\n".join(lines) + "\n")
    return path, lines


@pytest.mark.parametrize("name,changes,key,says", CASES, ids=[c[0] for c in CASES])
def test_bad_sql_settings_are_refused_naming_file_line_and_key(tmp_path, name, changes, key, says):
    path, lines = write_job(tmp_path, changes)
    check = check_job(load_job(path))
    assert len(check.errors) == 1, [str(e) for e in check.errors]
    [error] = check.errors
    if key != "source.entities":  # an unset key has no line
        line = next(i for i, text in enumerate(lines, 1) if text.startswith(key + "="))
        assert str(error).startswith(f"{path}:{line}: key '{key}':"), str(error)
    assert f"key '{key}'" in str(error) and says in str(error), str(error)
    assert SECRET not in str(error)


def test_the_good_job_is_valid(tmp_path):
    path, _ = write_job(tmp_path, {})
    assert check_job(load_job(path), strict=True).errors == []


def test_validate_and_run_exit_2_before_any_work(tmp_path):
    path, _ = write_job(tmp_path, {"source.querybased.fetch.method": "bulk", "source.conn.port": "x",
                                   "source.querybased.entity.orders.source.querybased.watermark.type": "weekly"})
    for command in (["validate", str(path)], ["run", str(path), "--engine", "local"]):
        done = run_gpy(*command)
        assert done.returncode == 2, done.stdout + done.stderr
        output = done.stdout + done.stderr
        errors = [line for line in output.splitlines() if "error:" in line and "shop.pull:" in line]
        assert len(errors) == 3, output  # every problem at once
        assert "key 'source.querybased.entity.orders.source.querybased.watermark.type'" in output
        assert SECRET not in done.stdout + done.stderr
    assert not (tmp_path / "state").exists() and not (tmp_path / "work").exists()


def test_explain_names_the_entity_scope():
    done = run_gpy("validate", "--explain", "source.querybased.entity.orders.extract.delta.fields")
    assert done.returncode == 0, done.stderr
    assert "extract.delta.fields" in done.stdout and "entity" in done.stdout


# ---------------------------------------------------------------- what only the database can tell


def test_a_delta_column_the_table_lacks_is_refused_at_planning(sqlite_db, tmp_path):
    create_shop(sqlite_db, orders=5, customers=2)
    job = SqlJob(tmp_path, sqlite_db, **{"source.querybased.entity.orders.extract.delta.fields".replace(".", "__"):
                                         "modified_at"})
    bad = job.run()
    assert bad.returncode == 2, bad.output
    line = bad.stderr.strip().splitlines()[-1]
    assert "source.querybased.entity.orders.extract.delta.fields=modified_at" in line, line
    assert "no column 'modified_at'" in line and "updated_at" in line
    assert not job.state_dir.exists() or not job.state_files()


def test_delta_columns_of_different_kinds_are_named(db, tmp_path):
    create_shop(db, orders=5, customers=2)
    job = SqlJob(tmp_path, db, tables="orders", extract__delta__fields="updated_at,customer_id")
    bad = job.run()
    assert bad.returncode == 2, bad.output
    line = bad.stderr.strip().splitlines()[-1]
    assert "extract.delta.fields=updated_at,customer_id" in line and "different kinds" in line, line
    assert "updated_at (" in line and "customer_id (" in line


def test_a_text_delta_column_that_is_not_a_time_is_named(sqlite_db, tmp_path):
    create_shop(sqlite_db, orders=5, customers=2)
    job = SqlJob(tmp_path, sqlite_db, tables="orders", extract__delta__fields="note")
    bad = job.run()
    assert bad.returncode == 2, bad.output
    assert "delta column note holds text that is not an ISO-8601 time ('note 5')" in bad.stderr, bad.stderr
