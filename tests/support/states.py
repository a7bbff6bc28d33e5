"""Dataset states as the state store tests build them."""

from __future__ import annotations

from gobblin_py.sdk.run_states import DatasetState
from gobblin_py.sdk.states import Extract, RunningState, TaskState, WorkUnit
from gobblin_py.sdk.watermarks import LongWatermark, WatermarkInterval


def make_state(urn, job_id="job_Pull_1000", low=0, high=10, actual=None, start=1000):
    state = DatasetState("Pull", job_id, dataset_urn=urn, state=RunningState.COMMITTED, start_time=start, task_count=1)
    unit = WorkUnit.create(Extract(), WatermarkInterval.of(LongWatermark(low), LongWatermark(high)))
    unit.set_prop("dataset.urn", urn)
    task = TaskState(job_id, f"task_{job_id[4:]}_0", unit)
    task.set_actual_high_watermark(LongWatermark(high if actual is None else actual))
    state.add_task_state(task)
    return state
