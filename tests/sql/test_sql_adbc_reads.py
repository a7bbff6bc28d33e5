"""How the ADBC readers are driven: through adbc_driver_manager's own handles (no pandas import), with range
bounds and partition values written into the statement as literals."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from gobblin_py.connectors.sql.dialects import sqlite as sqlite_dialect
from gobblin_py.connectors.sql.source import QueryBasedSource
from gobblin_py.sdk.run_states import SourceState
from gobblin_py.sdk.states import State, TaskState
from tests.sql.helpers import SqlJob, create_shop

# the CLI, telling on its way out whether anything it ran imported pandas
WATCHED_CLI = ("import sys\n"
               "from gobblin_py.cli import main\n"
               "try:\n"
               "    main(sys.argv[1:])\n"
               "finally:\n"
               "    sys.stderr.write('pandas imported: %s\\n' % ('pandas' in sys.modules))\n")


@pytest.mark.parametrize("kind", ["sqlite_db", "postgres_db"])
def test_reading_a_table_never_imports_pandas(kind, request, tmp_path):
    db = request.getfixturevalue(kind)
    create_shop(db, orders=30)
    job = SqlJob(tmp_path / "job", db, tables="orders", source__querybased__fetch__method="adbc")
    done = subprocess.run([sys.executable, "-c", WATCHED_CLI, "run", str(job.file), "--engine", "local"],
                          capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert done.returncode == 0, done.stdout + done.stderr
    assert '"method": "adbc"' in done.stdout + done.stderr
    assert sorted(job.ids("orders")) == list(range(1, 31))
    assert "pandas imported: False" in done.stderr


def test_sqlite_literals_replace_only_the_placeholders_outside_quotes():
    sql = "SELECT \"what?\", 'x?' FROM \"t?\" WHERE a >= ? AND b = ? AND c = ? AND d IS ? AND e = ?"
    assert sqlite_dialect.inline(sql, [7, "it's", 2.5, None, b"\x01\xff"]) == (
        "SELECT \"what?\", 'x?' FROM \"t?\" WHERE a >= 7 AND b = 'it''s' AND c = 2.5 AND d IS NULL AND e = X'01ff'")


def test_sqlite_partition_values_with_quotes_and_question_marks_are_read(sqlite_db, tmp_path):
    sqlite_db.execute('CREATE TABLE events (id INTEGER PRIMARY KEY, "kind?" TEXT, at INTEGER)')
    kinds = ["it's", "what?", "plain"]
    sqlite_db.executemany("INSERT INTO events VALUES (?, ?, ?)", [(i, kinds[i % 3], i) for i in range(1, 31)])
    job = SqlJob(tmp_path / "job", sqlite_db, tables="events", extract__delta__fields="at",
                 extract__primary__key__fields="id", source__querybased__partition__column="kind?",
                 source__querybased__fetch__method="adbc")
    outcome = job.run()
    assert outcome.returncode == 0, outcome.stdout + outcome.stderr
    published = job.published("events")
    assert sorted(zip(published.column("id").to_pylist(), published.column("kind?").to_pylist(), strict=True)) == [
        (i, kinds[i % 3]) for i in range(1, 31)]


def test_postgresql_batches_are_about_fetch_size_rows_not_the_drivers_16_mb(postgres_db, tmp_path):
    postgres_db.execute("CREATE TABLE wide AS SELECT i AS id, repeat('x', 50) AS note FROM generate_series(1, 20000) i")
    job = SqlJob(tmp_path / "job", postgres_db, tables="wide", extract__delta__fields="id",
                 extract__primary__key__fields="id", source__querybased__fetch__size="100",
                 source__querybased__fetch__method="adbc")
    [unit] = QueryBasedSource().get_workunits(SourceState(job.props))
    extractor = QueryBasedSource().get_extractor(TaskState("job_b_1", "task_b_1_0", unit, job_state=State(job.props)))
    try:
        extractor.get_schema()
        sizes = [batch.num_rows for batch in extractor.read_batches()]
    finally:
        extractor.close()
    assert sum(sizes) == 20000
    assert len(sizes) >= 4  # 1.6 MB of rows in batches of about 256 KB (the least asked for), not one of 16 MB
