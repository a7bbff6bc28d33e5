"""``--engine spark``: each task group as one Spark task; work units travel to executors in Gobblin's own
Writable encoding and TaskStates come back the same way, so executors need only the job's properties and
gobblin_py."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

from gobblin_py.runtime.engines.base import Engine, TaskGroup, _announce, _executor_log_settings
from gobblin_py.runtime.engines.cluster_tasks import run_cluster_tasks, split_cluster_tasks
from gobblin_py.runtime.execute import signals, task_progress
from gobblin_py.runtime.execute.task import run_task
from gobblin_py.sdk import interrupts
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.states import TaskState
from gobblin_py.store.writable import TASK_STATE_CLASS, WORK_UNIT_CLASS, deserialize, serialize

if TYPE_CHECKING:

    from gobblin_py.runtime.execute.progress_channel import Address

log = get_logger(__name__)


def _spark_partition(job_props: dict[str, str], job_id: str, log_settings: tuple[str, str],
                     channel: Address | None,
                     items: Iterator[tuple[int, list[tuple[str, bytes]]]]) -> Iterator[tuple[str, bytes]]:
    """Runs on a Spark executor's Python worker: decode work units, run them, encode TaskStates (reporting
    progress over ``channel`` when the driver listens)."""
    from gobblin_py.io import fs_settings
    from gobblin_py.sdk.logs import configure_logging

    configure_logging(*log_settings)
    fs_settings.apply(job_props)  # an executor opens the job's filesystems with the job's S3 (fsspec) settings
    from gobblin_py.runtime.execute.progress_channel import ChannelSink  # Spark tasks only

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


class SparkEngine(Engine):
    """Runs each task group as one Spark task via ``mapPartitions``; executors write straight to storage."""

    name = "spark"

    def stop(self) -> None:
        from gobblin_py.runtime.engines.spark_session import stop_driver

        stop_driver()

    def run(self, job_props: Mapping[str, str], job_id: str, groups: list[TaskGroup]) -> list[TaskState]:
        from gobblin_py.runtime.engines import pack
        from gobblin_py.runtime.engines.spark_session import (
            chosen_master,
            get_spark_session,
            has_session,
            submitted_conf,
        )

        _announce(groups)  # the display counts the tasks while Spark starts (spark_starting … spark_started)
        conf = {**job_props, **submitted_conf()}  # spark-submit's settings win over the job's keys
        if not has_session():  # executors get gpy's environment (a running session keeps the one it has)
            conf.update(pack.spark_conf(chosen_master(self.master, conf), conf))
        session = get_spark_session(self.master, conf, app_name=job_props.get("job.name", "gpy"))
        signals.reclaim_signals()
        signals.raise_if_interrupted()  # a signal while the session started (py4j may have swallowed its error)
        source, groups, on_driver = split_cluster_tasks(job_props, groups)
        states = self._run_groups(session, job_props, job_id, groups) if groups else []
        if source is not None:
            states += run_cluster_tasks(session, source, job_props, job_id, on_driver)
        return states

    def _run_groups(self, session: Any, job_props: Mapping[str, str], job_id: str,
                    groups: list[TaskGroup]) -> list[TaskState]:
        """Each group as one Spark task."""
        from functools import partial

        context = session.sparkContext
        payload = [
            (index, [(task_id, serialize(unit)) for task_id, unit in group.tasks]) for index, group in enumerate(groups)
        ]
        context.setJobDescription(f"gpy {job_id}: {sum(len(g.tasks) for g in groups)} tasks")
        rdd = context.parallelize(payload, numSlices=max(1, len(payload)))
        sink = task_progress.driver_sink()
        from gobblin_py.runtime.execute.progress_channel import ProgressServer

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
            raise signals.JobInterrupted(signals.interrupted_by()) from None
        return task_states(results, sink)


def task_states(results: Iterable[tuple[str, bytes]], sink: Any) -> list[TaskState]:
    """The tasks' states from ``(task id, serialized state)`` pairs that executors sent back, each reported
    finished to the driver's display ``sink`` (if any)."""
    states = []
    for task_id, data in results:
        state = deserialize(TASK_STATE_CLASS, data)
        assert isinstance(state, TaskState) and state.task_id == task_id
        states.append(state)
        if sink is not None:  # the display is whole even where executors could not reach the channel
            task_progress.report_finished(state, sink)
    return states
