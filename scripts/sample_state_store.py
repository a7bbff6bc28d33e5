"""Write a small, realistic state store: one job, three datasets, each with watermarked tasks.

Usage: python scripts/sample_state_store.py DIR   (the tests use :func:`build` too)
"""

from __future__ import annotations

import sys

from gobblin_py.store import FsDatasetStateStore

from gobblin_py.sdk.run_states import DatasetState

from gobblin_py.sdk.states import Extract, RunningState, TaskState, WorkingState, WorkUnit

from gobblin_py.sdk.watermarks import LongWatermark, WatermarkInterval

JOB_NAME = "SampleOrdersPull"
DATASETS = {  # urn -> (low, expected high, actual high) per task
    "orders_db:public.orders": [(0, 5000, 5000), (5000, 10000, 10000)],
    "orders_db:public.customers": [(1700000000000, 1700086400000, 1700086400000)],
    "orders_db:public.refunds": [(120, 480, 360)],
}


def build(root: str, start_ms: int = 1763600000000) -> FsDatasetStateStore:
    """Persist one committed run per dataset under ``root``; returns the store."""
    store = FsDatasetStateStore(root)
    job_id = f"job_{JOB_NAME}_{start_ms}"
    for urn, tasks in DATASETS.items():
        state = DatasetState(
            JOB_NAME, job_id, dataset_urn=urn, state=RunningState.COMMITTED,
            start_time=start_ms, end_time=start_ms + 1469, duration=1469, task_count=len(tasks),
        )
        namespace, table = urn.split(":", 1)
        for seq, (low, high, actual) in enumerate(tasks):
            unit = WorkUnit.create(
                Extract.create("append_only", namespace, table, now_ms=start_ms),
                WatermarkInterval.of(LongWatermark(low), LongWatermark(high)),
            )
            unit.set_prop("dataset.urn", urn)
            task = TaskState(job_id, f"task_{JOB_NAME}_{start_ms}_{seq}", unit,
                             start_time=start_ms + 3, end_time=start_ms + 1400, task_duration=1397)
            task.working_state = WorkingState.COMMITTED
            task.set_actual_high_watermark(LongWatermark(actual))
            task.set_prop("qualitychecker.rows.extracted", actual - low)
            task.set_prop("writer.records.written", actual - low)
            state.add_task_state(task)
        store.persist_dataset_state(state)
    return store


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    build(sys.argv[1])
    print(f"wrote a sample state store for job {JOB_NAME} ({len(DATASETS)} datasets) under {sys.argv[1]}")
