"""ADBC reads fetch ahead in a second thread (source.querybased.read.ahead): the same rows, types and watermarks."""

from __future__ import annotations

import pytest

from tests.sql.helpers import SqlJob, add_orders, create_shop, frontier


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_reading_ahead_publishes_what_reading_in_turn_does(kind, request, tmp_path):
    db = request.getfixturevalue("sqlite_db" if kind == "sqlite" else "postgres_db")
    create_shop(db, orders=2500)
    jobs = {ahead: SqlJob(tmp_path / f"ahead-{ahead}", db, tables="orders", extract__delta__fields="id",
                          source__querybased__fetch__method="adbc", source__querybased__fetch__size="100",
                          source__querybased__read__ahead=ahead)
            for ahead in ("3", "0")}
    for rows in (2500, 2560):  # a first load in 25 batches, then the 60 rows added since
        for job in jobs.values():
            done = job.run()
            assert done.returncode == 0, done.output
        ahead, in_turn = (jobs[a].published("orders").sort_by("id") for a in ("3", "0"))
        assert ahead.num_rows == rows and ahead.column("id").to_pylist() == list(range(1, rows + 1))
        assert ahead.equals(in_turn)
        marks = [frontier(next(iter(jobs[a].state().values()))) for a in ("3", "0")]
        assert marks[0] == marks[1] == rows + 1  # half-open: the next run starts after the last id
        add_orders(db, rows + 1, 60)
