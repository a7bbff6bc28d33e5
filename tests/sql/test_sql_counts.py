"""The expected record count of a work unit: the rows its ranges hold in the snapshot its rows are read in.

A range holding every row of the table is counted by ``COUNT(*)`` when an index on the delta column shows
that no row lies outside it; these tests put rows outside the planned range (newer ones, ones without a delta
value) between planning and reading, and check that the count still matches the rows read.
"""

from __future__ import annotations

import datetime as dt

import pytest

from gobblin_py.connectors.sql.source import QueryBasedSource
from gobblin_py.sdk.run_states import SourceState
from gobblin_py.sdk.states import State, TaskState
from tests.sql.helpers import SqlJob, add_orders, create_shop


def _read(job: SqlJob) -> list[tuple[int, int]]:
    """Each planned work unit extracted: (expected record count, rows read)."""
    results = []
    for index, unit in enumerate(QueryBasedSource().get_workunits(SourceState(job.props))):
        task = TaskState("job_count_1", f"task_count_1_{index}", unit, job_state=State(job.props))
        extractor = QueryBasedSource().get_extractor(task)
        try:
            extractor.get_schema()
            rows = sum(batch.num_rows for batch in extractor.read_batches())
            results.append((extractor.get_expected_record_count(), rows))
        finally:
            extractor.close()
    return results


@pytest.mark.parametrize("indexed", [True, False])
@pytest.mark.parametrize("table_type", ["append_only", "snapshot_append"])
def test_the_count_matches_the_rows_read_whatever_lies_outside_the_range(db, tmp_path, indexed, table_type):
    create_shop(db, orders=40, customers=1)
    if indexed:
        db.execute("CREATE INDEX orders_updated ON orders (updated_at)")
    job = SqlJob(tmp_path, db, tables="orders", extract__table__type=table_type,
                 source__querybased__partition__interval="0")
    assert _read(job) == [(40, 40)]  # the whole table in one range
    db.execute("UPDATE orders SET updated_at = NULL WHERE id IN (7, 8)")
    with_nulls = 40 if table_type == "snapshot_append" else 38  # a first snapshot reads rows without a delta too
    assert _read(job) == [(with_nulls, with_nulls)]

    class Later(QueryBasedSource):
        """Rows newer than the planned range arrive between planning and reading."""

        def get_extractor(self, state):
            add_orders(db, 41 + 3 * len(arrived), 3, at=dt.datetime(2031, 1, 1) + dt.timedelta(days=len(arrived)))
            arrived.append(state)
            return super().get_extractor(state)

    arrived: list = []
    units = QueryBasedSource().get_workunits(SourceState(job.props))
    for index, unit in enumerate(units):
        task = TaskState("job_count_2", f"task_count_2_{index}", unit, job_state=State(job.props))
        extractor = Later().get_extractor(task)
        try:
            extractor.get_schema()
            rows = sum(batch.num_rows for batch in extractor.read_batches())
            assert (extractor.get_expected_record_count(), rows) == (with_nulls, with_nulls)
        finally:
            extractor.close()
    assert len(arrived) == 1
