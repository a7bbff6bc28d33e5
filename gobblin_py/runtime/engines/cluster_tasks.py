"""The Spark engines' driver side of cluster tasks (:mod:`gobblin_py.sdk.cluster_tasks`): which of a run's tasks
are Spark jobs of their own, and running them one after another on the driver, each with every executor."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from gobblin_py.runtime.engines.base import TaskGroup
from gobblin_py.runtime.execute import signals
from gobblin_py.runtime.execute.task import run_task
from gobblin_py.sdk.cluster_tasks import ClusterTasks
from gobblin_py.sdk.contracts import Source
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.plugins import instantiate
from gobblin_py.sdk.states import State, TaskState, WorkUnit, WorkUnitState

log = get_logger(__name__)


def split_cluster_tasks(job_props: Mapping[str, str], groups: list[TaskGroup]
                        ) -> tuple[ClusterTasks | None, list[TaskGroup], list[tuple[str, WorkUnit]]]:
    """The job's Source when it has cluster tasks, the groups whose tasks run on executors as usual, and the
    cluster tasks (taken out of their groups)."""
    name = job_props.get("source.class") or ""
    if not name:
        return None, groups, []
    source = instantiate(name, "source.class", Source)
    if not isinstance(source, ClusterTasks):
        return None, groups, []
    job_state = State(job_props)
    on_executors: list[TaskGroup] = []
    on_driver: list[tuple[str, WorkUnit]] = []
    for group in groups:
        kept = []
        for task_id, unit in group.tasks:
            if source.runs_on_cluster(WorkUnitState(unit, job_state=job_state)):
                on_driver.append((task_id, unit))
            else:
                kept.append((task_id, unit))
        if kept:
            on_executors.append(TaskGroup(kept))
    return (source, on_executors, on_driver) if on_driver else (None, groups, [])


def run_cluster_tasks(session: Any, source: ClusterTasks, job_props: Mapping[str, str], job_id: str,
                      tasks: list[tuple[str, WorkUnit]]) -> list[TaskState]:
    """Run each cluster task from the driver (one at a time: each uses every executor)."""
    states = []
    for task_id, unit in tasks:
        log.info("cluster_task_started", task=task_id, dataset=unit.get_prop("dataset.urn"))
        states.append(run_task(job_props, unit, job_id, task_id, body=partial(source.run_on_cluster, session)))
        signals.raise_if_interrupted()  # a stop during a Spark job fails that task: the run stops here
    return states
