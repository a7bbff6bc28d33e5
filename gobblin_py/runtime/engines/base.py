"""Where tasks run: the engine interface, the engines' keys and the task groups every engine runs.

Every engine runs the same ``run_task`` on each work unit of a group, the groups in any order, and returns the
TaskStates: :class:`LocalEngine` (threads or worker processes) and :class:`SparkEngine` (one Spark task per
work unit or MultiWorkUnit) implement :class:`Engine`; ``make_engine`` picks one by name from ``ENGINES``.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from gobblin_py.runtime.execute import task_progress
from gobblin_py.sdk.job_keys import TaskSlotSettings
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.settings import setting
from gobblin_py.sdk.states import MultiWorkUnit, TaskState, WorkUnit

log = get_logger(__name__)


@dataclass(frozen=True)
class EngineSettings(TaskSlotSettings):
    """The keys of the engines."""

    master: str | None = setting("spark.master", default_doc="local[*]", doc="Spark master of --engine spark")
    remote: str | None = setting("spark.remote", example="sc://spark-connect.example.com:15002",
                                 doc="Spark Connect server (sc://HOST:PORT) whose executors run the tasks, as "
                                     "--remote; excludes spark.master")


@dataclass
class TaskGroup:
    """The tasks of one (multi) work unit: they run one after another in one Spark task."""

    tasks: list[tuple[str, WorkUnit]]


def task_groups(units: list[WorkUnit], job_name: str, job_millis: int) -> list[TaskGroup]:
    """Assign task ids ``task_<job>_<millis>_<seq>`` in work-unit order, MultiWorkUnits flattened."""
    groups, seq = [], 0
    for unit in units:
        members = unit.work_units if isinstance(unit, MultiWorkUnit) else [unit]
        group = []
        for member in members:
            group.append((f"task_{job_name}_{job_millis}_{seq}", member))
            seq += 1
        groups.append(TaskGroup(group))
    return groups


class Engine(ABC):
    """Runs a job's task groups and returns every task's TaskState (a failed task's too: ``run_task`` records
    failures in its state). Built with the Spark master, which an engine not on Spark ignores."""

    name: ClassVar[str]

    def __init__(self, master: str | None = None) -> None:
        self.master = master

    @abstractmethod
    def run(self, job_props: Mapping[str, str], job_id: str, groups: list[TaskGroup]) -> list[TaskState]:
        """Run every task of ``groups`` (the tasks of a group one after another); their TaskStates."""

    def stop(self) -> None:  # noqa: B027 - most engines have nothing left running once a run ends
        """Stop what the engine still runs after its run was stopped by a signal (Spark's driver JVM)."""


def _announce(groups: list[TaskGroup]) -> None:
    sink = task_progress.driver_sink()
    if sink is not None:
        sink.planned(sum(len(g.tasks) for g in groups))


def _executor_log_settings() -> tuple[str, str]:
    """Executors log as the driver does; under a live display, warnings and errors only (it shows the rest)."""
    level, fmt = os.environ.get("GPY_LOG_LEVEL", "INFO"), os.environ.get("GPY_LOG_FORMAT", "json")
    if getattr(task_progress.driver_sink(), "shows_tasks", False) and level.upper() != "DEBUG":
        level = "WARNING"
    return level, fmt
