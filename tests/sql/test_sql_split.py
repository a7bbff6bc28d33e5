"""A range read as several work units when no partition interval is set (``source.querybased.split.rows``),
and the row groups a table's rows are written in.

A range of more rows than ``split.rows`` is cut into equal widths of the delta column, one per ``split.rows``
rows, and a range of at least ``split.min.rows`` into at least one per task slot of the job (at most
``source.max.number.of.partitions``), so that the work units read at once; every row is read by exactly one of
them, each unit's count matches its rows, and the next run starts where the last range ended.
"""

from __future__ import annotations

import pytest

from gobblin_py.connectors.sql.source import QueryBasedSource
from gobblin_py.sdk.run_states import SourceState
from gobblin_py.sdk.states import State, TaskState
from tests.sql.helpers import SqlJob, add_orders, create_shop


def _units(job: SqlJob) -> list:
    return QueryBasedSource().get_workunits(SourceState(job.props))


def _read(job: SqlJob) -> list[tuple[int, list[int]]]:
    """Each planned work unit extracted: (expected record count, the ids it read)."""
    results = []
    for index, unit in enumerate(_units(job)):
        task = TaskState("job_split_1", f"task_split_1_{index}", unit, job_state=State(job.props))
        extractor = QueryBasedSource().get_extractor(task)
        try:
            extractor.get_schema()
            ids = [i for batch in extractor.read_batches() for i in batch.column("id").to_pylist()]
            results.append((extractor.get_expected_record_count(), ids))
        finally:
            extractor.close()
    return results


@pytest.mark.parametrize("kind", ["sqlite_db", "postgres_db"])
@pytest.mark.parametrize("delta", ["id", "updated_at"])
def test_a_first_load_is_read_in_several_ranges_each_row_once(kind, delta, request, tmp_path):
    db = request.getfixturevalue(kind)
    create_shop(db, orders=100, customers=1)
    job = SqlJob(tmp_path / "job", db, tables="orders", extract__delta__fields=delta,
                 source__querybased__split__rows="30")
    read = _read(job)
    assert len(read) == 4  # 100 rows, 30 a range: four ranges
    assert all(count == len(ids) and ids for count, ids in read)
    assert sorted(i for _, ids in read for i in ids) == list(range(1, 101))


def test_a_split_load_commits_every_row_once_and_the_next_run_goes_on_from_its_end(sqlite_db, tmp_path):
    create_shop(sqlite_db, orders=100, customers=1)
    job = SqlJob(tmp_path / "job", sqlite_db, tables="orders", extract__delta__fields="id",
                 source__querybased__split__rows="30")
    first = job.run()
    assert first.returncode == 0, first.output
    assert first.output.count('"event": "task_finished"') == 4
    assert job.ids() == list(range(1, 101))
    add_orders(sqlite_db, 101, 10)
    second = job.run()
    assert second.returncode == 0, second.output
    assert second.output.count('"event": "task_finished"') == 1  # 10 new rows: one range
    assert job.ids() == list(range(1, 111))


@pytest.mark.parametrize(("props", "ranges"), [
    ({}, 1),  # 100 rows: below the default split.rows
    ({"source.querybased.split.rows": "0"}, 1),  # off
    ({"source.querybased.split.rows": "30", "source.max.number.of.partitions": "2"}, 2),  # capped
    ({"source.querybased.split.rows": "30", "source.querybased.skip.count.calc": "true"}, 1),  # rows not counted
    ({"source.querybased.split.rows": "30", "source.querybased.partition.interval": "50"}, 2),  # the interval rules
])
def test_how_many_ranges(sqlite_db, tmp_path, props, ranges):
    create_shop(sqlite_db, orders=100, customers=1)
    job = SqlJob(tmp_path / "job", sqlite_db, tables="orders", extract__delta__fields="id")
    job.set(**props)
    assert len(_units(job)) == ranges


@pytest.mark.parametrize(("props", "row_group"), [
    ({}, str(8 << 20)),  # a database's rows: 8 MB row groups
    ({"parquet.block.size": "32MB"}, None),  # the job's own size is kept
    ({"parquet.block.size.0": "32MB"}, None),
    ({"writer.file.block.size": "33554432"}, None),
])
def test_a_tables_rows_are_written_in_small_row_groups_unless_the_job_sizes_them(sqlite_db, tmp_path, props,
                                                                                  row_group):
    create_shop(sqlite_db, orders=10, customers=1)
    job = SqlJob(tmp_path / "job", sqlite_db, tables="orders")
    job.set(**props)
    [unit] = _units(job)
    assert unit.properties.get("parquet.block.size") == row_group


@pytest.mark.parametrize(("props", "ranges"), [
    ({"source.querybased.split.min.rows": "50"}, 2),  # one range per task thread (2 by default)
    ({"source.querybased.split.min.rows": "50", "taskexecutor.threadpool.size": "3"}, 3),
    ({"source.querybased.split.min.rows": "50", "gpy.taskexecutor.processes": "4"}, 4),  # worker processes rule
    ({"source.querybased.split.min.rows": "50", "taskexecutor.threadpool.size": "3",
      "source.max.number.of.partitions": "2"}, 2),  # capped
    ({"source.querybased.split.min.rows": "50", "taskexecutor.threadpool.size": "1"}, 1),  # one slot: one range
    ({"source.querybased.split.min.rows": "101"}, 1),  # fewer rows than the threshold
    ({"source.querybased.split.min.rows": "0"}, 1),  # off
    ({"source.querybased.split.min.rows": "50", "source.querybased.split.rows": "30"}, 4),  # split.rows asks more
    ({"source.querybased.split.min.rows": "50", "source.querybased.skip.count.calc": "true"}, 1),  # not counted
])
def test_a_large_range_is_read_as_one_range_per_task_slot(sqlite_db, tmp_path, props, ranges):
    create_shop(sqlite_db, orders=100, customers=1)
    job = SqlJob(tmp_path / "job", sqlite_db, tables="orders", extract__delta__fields="id")
    job.set(**props)
    assert len(_units(job)) == ranges


@pytest.mark.parametrize("kind", ["sqlite_db", "postgres_db"])
def test_a_first_load_over_the_task_slots_reads_gaps_and_skew_once_and_the_next_run_goes_on(kind, request,
                                                                                            tmp_path):
    db = request.getfixturevalue(kind)
    create_shop(db, orders=60, customers=1)
    add_orders(db, 10_000, 40)  # ids 1-60 and 10000-10039: equal widths of the id hold 60 and 40 rows
    job = SqlJob(tmp_path / "job", db, tables="orders", extract__delta__fields="id",
                 source__querybased__split__min__rows="50")
    read = _read(job)
    assert [len(ids) for _, ids in read] == [60, 40]
    assert all(count == len(ids) for count, ids in read)
    first = job.run()
    assert first.returncode == 0, first.output
    assert first.output.count('"event": "task_finished"') == 2
    assert job.ids() == [*range(1, 61), *range(10_000, 10_040)]
    add_orders(db, 10_040, 10)
    second = job.run()
    assert second.returncode == 0, second.output
    assert second.output.count('"event": "task_finished"') == 1  # 10 new rows: below the threshold, one range
    assert job.ids() == [*range(1, 61), *range(10_000, 10_050)]


@pytest.mark.parametrize(("props", "row_group"), [
    ({}, str(4 << 20)),  # two ranges at once: 4 MB row groups each, 8 MB together as one range's
    ({"taskexecutor.threadpool.size": "4", "source.max.number.of.partitions": "3"}, str((8 << 20) // 3)),
    ({"parquet.block.size": "32MB"}, None),  # the job's own size is kept
])
def test_ranges_read_at_once_share_one_ranges_row_group_memory(sqlite_db, tmp_path, props, row_group):
    create_shop(sqlite_db, orders=100, customers=1)
    job = SqlJob(tmp_path / "job", sqlite_db, tables="orders", extract__delta__fields="id",
                 source__querybased__split__min__rows="50")
    job.set(**props)
    units = _units(job)
    assert len(units) > 1
    assert {unit.properties.get("parquet.block.size") for unit in units} == {row_group}
