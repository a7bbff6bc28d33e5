"""Where tasks run: Spark (one Spark task per work unit or MultiWorkUnit) or a local thread pool.

Both engines run the same ``run_task``. Work units travel to Spark executors in Gobblin's own Writable
encoding and TaskStates come back the same way, so executors need only the job's properties and gobblin_py.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gobblin_py.sdk.settings import Settings, setting
from gobblin_py.sdk.logs import get_logger
from gobblin_py.runtime import task_progress
from gobblin_py.sdk import interrupts
from gobblin_py.runtime.task import run_task
from gobblin_py.sdk.states import MultiWorkUnit, TaskState, WorkUnit
from gobblin_py.store.writable import TASK_STATE_CLASS, WORK_UNIT_CLASS, deserialize, serialize

if TYPE_CHECKING:
    from gobblin_py.runtime.progress_channel import Address

log = get_logger(__name__)


@dataclass(frozen=True)
class EngineSettings(Settings):
    """The keys of the engines."""

    threads: int = setting("taskexecutor.threadpool.size", default=2, minimum=1, maximum=1024,
                           doc="tasks run at once by --engine local")
    processes: int = setting("gpy.taskexecutor.processes", default=0, minimum=0, maximum=1024,
                             doc="--engine local: run tasks in this many worker processes instead of threads "
                                 "(0: threads); for many small tasks or tasks that spend their time in Python")
    master: str | None = setting("spark.master", default_doc="local[*]", doc="Spark master of --engine spark")


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


class LocalEngine:
    """Runs tasks in a thread pool of ``taskexecutor.threadpool.size`` threads (Gobblin's standalone mode), or in
    ``gpy.taskexecutor.processes`` worker processes."""

    name = "local"

    def run(self, job_props: Mapping[str, str], job_id: str, groups: list[TaskGroup]) -> list[TaskState]:
        settings = EngineSettings.load(job_props)
        threads = settings.threads
        _announce(groups)
        if settings.processes and groups:
            from gobblin_py.runtime.task_processes import run_in_processes

            return run_in_processes(job_props, job_id, [g.tasks for g in groups], settings.processes,
                                    _executor_log_settings())
        pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="gpy-task")
        try:
            futures = [pool.submit(_run_group, dict(job_props), job_id, group.tasks) for group in groups]
            return [state for future in futures for state in future.result()]
        finally:
            # interrupted: queued tasks never start, running ones stop at their next batch (check_cancelled)
            pool.shutdown(wait=True, cancel_futures=True)


def _run_group(job_props: dict[str, str], job_id: str, tasks: list[tuple[str, WorkUnit]]) -> list[TaskState]:
    return [run_task(job_props, unit, job_id, task_id) for task_id, unit in tasks]


def _announce(groups: list[TaskGroup]) -> None:
    sink = task_progress.driver_sink()
    if sink is not None:
        sink.planned(sum(len(g.tasks) for g in groups))


def _spark_partition(job_props: dict[str, str], job_id: str, log_settings: tuple[str, str],
                     channel: Address | None,
                     items: Iterator[tuple[int, list[tuple[str, bytes]]]]) -> Iterator[tuple[str, bytes]]:
    """Runs on a Spark executor's Python worker: decode work units, run them, encode TaskStates (reporting
    progress over ``channel`` when the driver listens)."""
    from gobblin_py.io import fs_settings
    from gobblin_py.sdk.logs import configure_logging

    configure_logging(*log_settings)
    fs_settings.apply(job_props)  # an executor opens the job's filesystems with the job's S3 (fsspec) settings
    from gobblin_py.runtime.progress_channel import ChannelSink  # Spark tasks only

    sink = ChannelSink(channel) if channel is not None else None
    task_progress.connect(sink)
    try:
        for _, tasks in items:
            for task_id, unit_bytes in tasks:
                unit = deserialize(WORK_UNIT_CLASS, unit_bytes)
                yield task_id, serialize(run_task(job_props, unit, job_id, task_id))  # type: ignore[arg-type]
    finally:
        task_progress.connect(None)
        if sink is not None:
            sink.close()


def _executor_log_settings() -> tuple[str, str]:
    """Executors log as the driver does; under a live display, warnings and errors only (it shows the rest)."""
    level, fmt = os.environ.get("GPY_LOG_LEVEL", "INFO"), os.environ.get("GPY_LOG_FORMAT", "json")
    if getattr(task_progress.driver_sink(), "shows_tasks", False) and level.upper() != "DEBUG":
        level = "WARNING"
    return level, fmt


class SparkEngine:
    """Runs each task group as one Spark task via ``mapPartitions``; executors write straight to storage."""

    name = "spark"

    def __init__(self, master: str | None = None) -> None:
        self.master = master

    def run(self, job_props: Mapping[str, str], job_id: str, groups: list[TaskGroup]) -> list[TaskState]:
        from functools import partial

        from gobblin_py.runtime.spark_session import get_spark_session

        session = get_spark_session(self.master, job_props, app_name=job_props.get("job.name", "gpy"))
        interrupts.reclaim_signals()
        context = session.sparkContext
        payload = [
            (index, [(task_id, serialize(unit)) for task_id, unit in group.tasks]) for index, group in enumerate(groups)
        ]
        context.setJobDescription(f"gpy {job_id}: {sum(len(g.tasks) for g in groups)} tasks")
        rdd = context.parallelize(payload, numSlices=max(1, len(payload)))
        _announce(groups)
        sink = task_progress.driver_sink()
        from gobblin_py.runtime.progress_channel import ProgressServer

        host = context.getConf().get("spark.driver.host", "127.0.0.1") or "127.0.0.1"
        listening = ProgressServer(sink, host, context.getConf().get("spark.driver.bindAddress", None)) \
            if sink is not None else nullcontext(None)
        try:
            with listening as channel:
                run = partial(_spark_partition, dict(job_props), job_id, _executor_log_settings(), channel)
                results = rdd.mapPartitions(run).collect()
        except BaseException:
            if not interrupts.cancelled():
                raise
            # a signal cut the call to the JVM short (py4j may wrap it): stop the executors' tasks; their
            # attempts' files are never published
            context.cancelAllJobs()
            raise interrupts.JobInterrupted(interrupts.interrupted_by()) from None
        states = []
        for task_id, data in results:
            state = deserialize(TASK_STATE_CLASS, data)
            assert isinstance(state, TaskState) and state.task_id == task_id
            states.append(state)
            if sink is not None:  # the display is whole even where executors could not reach the channel
                task_progress.report_finished(state, sink)
        return states


def make_engine(name: str, master: str | None = None) -> LocalEngine | SparkEngine:
    if name == "local":
        return LocalEngine()
    if name == "spark":
        return SparkEngine(master)
    raise ValueError(f"unknown engine {name!r}")
