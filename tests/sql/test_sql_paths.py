"""A table's name becomes its output folder: a name that would leave the final folder (``/tmp/x``, ``../x``, a NUL)
is refused before any work, by ``gpy validate``, the start of ``gpy run`` and planning (exit 2, naming it)."""

from __future__ import annotations

import pytest

from gobblin_py.connectors.sql import QueryBasedSource
from gobblin_py.io.contained_paths import PathEscapeError
from gobblin_py.sdk.run_states import SourceState
from tests.sql.helpers import SqlJob, create_shop
from tests.support.cli import run_gpy


def add_table(db, name: str) -> None:
    db.execute(f'CREATE TABLE "{name}" (id INTEGER PRIMARY KEY, updated_at TIMESTAMP)')
    db.execute(f'INSERT INTO "{name}" VALUES (1, \'2024-03-01 08:00:00\')')


def test_validate_refuses_a_listed_table_named_as_an_absolute_path(sqlite_db, tmp_path):
    create_shop(sqlite_db, orders=3, customers=1)
    job = SqlJob(tmp_path, sqlite_db, tables="orders,/tmp/x")
    done = run_gpy("validate", str(job.file))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "key 'source.entities'" in done.stdout and "table '/tmp/x'" in done.stdout, done.stdout


def test_a_table_named_as_a_path_outside_is_refused_and_nothing_written(sqlite_db, tmp_path):
    create_shop(sqlite_db, orders=3, customers=1)
    outside = tmp_path / "outside"
    add_table(sqlite_db, f"{outside}/x")
    job = SqlJob(tmp_path / "job", sqlite_db, tables=f"orders,{outside}/x")
    for command in (["validate", str(job.file)], ["run", str(job.file), "--engine", "local"]):
        done = run_gpy(*command)
        assert done.returncode == 2, done.stdout + done.stderr
        assert "key 'source.entities'" in done.stdout + done.stderr and "absolute path" in done.stdout + done.stderr
    assert not outside.exists() and not job.final.exists() and not job.state_dir.exists()


def test_a_table_given_an_output_name_of_its_own_is_pulled(sqlite_db, tmp_path):
    create_shop(sqlite_db, orders=3, customers=1)
    add_table(sqlite_db, "/up")
    job = SqlJob(tmp_path, sqlite_db, tables="/up")
    job.set(**{"source.querybased.entity./up.extract.table.name": "up"})
    done = job.run()
    assert done.returncode == 0, done.output
    assert job.published("up").num_rows == 1 and not (tmp_path / "up").exists()


def test_planning_refuses_a_table_whose_output_name_leaves_the_folder(sqlite_db, tmp_path):
    create_shop(sqlite_db, orders=3, customers=1)
    add_table(sqlite_db, "/x")
    job = SqlJob(tmp_path, sqlite_db, tables="/x")
    with pytest.raises(PathEscapeError, match="table '/x'"):
        QueryBasedSource().get_workunits(SourceState(job.props))


def test_a_nul_in_a_listed_table_name_is_refused_up_front(sqlite_db, tmp_path):
    create_shop(sqlite_db, orders=3, customers=1)
    job = SqlJob(tmp_path, sqlite_db, tables="orders,or\\u0000ders")
    done = run_gpy("run", str(job.file), "--engine", "local")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "key 'source.entities'" in done.stderr and "NUL" in done.stderr
    assert not job.final.exists() and not job.state_dir.exists()
