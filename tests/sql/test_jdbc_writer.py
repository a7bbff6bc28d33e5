"""Gobblin's JDBC writer and publisher on SQLite and on the real PostgreSQL server: staging tables per task,
one publishing transaction with a commit marker, exactly once across crashes."""

from __future__ import annotations

import pytest

from tests.support.cli import run_gpy
from tests.support.jdbc import Target, job, run, write_users


@pytest.fixture(params=["sqlite", "postgresql"])
def target(request, tmp_path):
    pg_db = request.getfixturevalue("pg_db") if request.param == "postgresql" else None
    return Target(request.param, tmp_path, pg_db)


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
