"""The states of a run: the Source's view of the job (``SourceState``), the run itself (``JobState``) and the part
of a run that belongs to one dataset (``DatasetState``), the unit the state store persists."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gobblin_py.sdk.states import (
    DATASET_URN_KEY,
    DEFAULT_DATASET_URN,
    JOB_FAILURES_KEY,
    RunningState,
    State,
    TaskState,
    WorkUnitState,
)

# where a run published a dataset when that is a table, not a folder (a JSON list, e.g. ["iceberg://gpy/shop.orders"]):
# gpy state show names it; the table's commit by that run carries the run's job id (Gobblin ignores the key)
PUBLISHED_KEY = "gpy.published"

class SourceState(State):
    """The job configuration handed to a Source, with what the previous run left in the state store."""

    def __init__(
        self,
        properties: Mapping[str, str] | None = None,
        previous_workunit_states: Iterable[WorkUnitState] = (),
        previous_dataset_states: Mapping[str, DatasetState] | None = None,
    ) -> None:
        super().__init__(properties)
        self.previous_workunit_states: list[WorkUnitState] = list(previous_workunit_states)
        # not serialised: the latest persisted state of each dataset, by URN, and the startpoints an operator set
        # for the datasets (by URN; see gobblin_py.store.startpoints)
        self.previous_dataset_states: dict[str, DatasetState] = dict(previous_dataset_states or {})
        self.startpoints: dict[str, Any] = {}

    def __eq__(self, other: object) -> bool:
        skip = ("previous_dataset_states", "startpoints")
        return (
            type(self) is type(other)
            and {k: v for k, v in self.__dict__.items() if k not in skip}
            == {k: v for k, v in other.__dict__.items() if k not in skip}
        )

    def previous_workunit_states_by_urn(self) -> dict[str, list[WorkUnitState]]:
        """Previous work-unit states grouped by dataset URN, each from that dataset's latest run.

        A dataset skipped by the previous run still appears here with the states of the run that last
        processed it: that is what keeps its watermark from being lost.
        """
        return {urn: state.previous_workunit_states_from_tasks() for urn, state in self.previous_dataset_states.items()}


class JobState(SourceState):
    """One job run: name, id, timing, running state and the states of its tasks."""

    def __init__(
        self,
        job_name: str = "",
        job_id: str = "",
        properties: Mapping[str, str] | None = None,
        state: RunningState = RunningState.PENDING,
        start_time: int = 0,
        end_time: int = 0,
        duration: int = 0,
        task_count: int = 0,
        task_states: Iterable[TaskState] = (),
        skipped_task_states: Iterable[TaskState] = (),
        previous_workunit_states: Iterable[WorkUnitState] = (),
    ) -> None:
        super().__init__(properties, previous_workunit_states)
        self.id = job_id
        self.job_name = job_name
        self.job_id = job_id
        self.state = RunningState(state)
        self.start_time = start_time
        self.end_time = end_time
        self.duration = duration
        self.task_count = task_count
        self.task_states: dict[str, TaskState] = {t.task_id: t for t in task_states}
        self.skipped_task_states: dict[str, TaskState] = {t.task_id: t for t in skipped_task_states}

    def add_task_state(self, task_state: TaskState) -> None:
        self.task_states[task_state.task_id] = task_state

    def all_task_states(self) -> list[TaskState]:
        return [*self.task_states.values(), *self.skipped_task_states.values()]

    def previous_workunit_states_from_tasks(self) -> list[WorkUnitState]:
        """Each task as the WorkUnitState the next run's Source sees (same work unit, own properties copied)."""
        return [
            WorkUnitState(task.workunit, dict(task.properties), id=task.task_id) for task in self.all_task_states()
        ]


class DatasetState(JobState):
    """The part of a job run that belongs to one dataset URN; the unit the state store persists."""

    def __init__(self, job_name: str = "", job_id: str = "", dataset_urn: str | None = None, **kwargs: Any) -> None:
        super().__init__(job_name, job_id, **kwargs)
        if dataset_urn is not None:
            self.dataset_urn = dataset_urn
        self.properties.setdefault(DATASET_URN_KEY, DEFAULT_DATASET_URN)
        # Gobblin's reader throws without it, so it is always present
        self.properties.setdefault(JOB_FAILURES_KEY, "0")

    @property
    def dataset_urn(self) -> str:
        return self.properties.get(DATASET_URN_KEY, DEFAULT_DATASET_URN)

    @dataset_urn.setter
    def dataset_urn(self, urn: str) -> None:
        self.properties[DATASET_URN_KEY] = urn

    @property
    def job_failures(self) -> int:
        return int(self.properties.get(JOB_FAILURES_KEY, "0"))

    @job_failures.setter
    def job_failures(self, count: int) -> None:
        self.properties[JOB_FAILURES_KEY] = str(count)

    @classmethod
    def from_job_state(cls, job_state: JobState) -> DatasetState:
        """A legacy job-level ``JobState`` record read as the dataset state of the default URN."""
        dataset = cls(
            job_state.job_name,
            job_state.job_id,
            properties=job_state.properties,
            state=job_state.state,
            start_time=job_state.start_time,
            end_time=job_state.end_time,
            duration=job_state.duration,
            task_count=job_state.task_count,
            previous_workunit_states=job_state.previous_workunit_states,
        )
        dataset.task_states = dict(job_state.task_states)
        dataset.skipped_task_states = dict(job_state.skipped_task_states)
        return dataset
