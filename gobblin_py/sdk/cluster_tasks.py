"""An optional ability of a Source: tasks that are Spark jobs of their own.

Most tasks are one Spark task each: an executor reads, converts and writes a work unit alone. Some work needs the
whole cluster for one work unit — a deduplication shuffles the records of a dataset by key across every executor.
A Source with such units implements :class:`ClusterTasks`: on the Spark engines (classic and Connect) the driver
runs those units' tasks through :meth:`ClusterTasks.run_on_cluster`, handing it the run's SparkSession, with the
same retries and failure handling as any task; on the local engine, and for its other units, the task runs as
usual.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from gobblin_py.sdk.states import TaskState, WorkUnitState

#: what a cluster task sets on its TaskState, as the ordinary task pipeline does: the records read, written and
#: the bytes written, and the files written (comma-separated)
CLUSTER_TASK_COUNTERS = ("qualitychecker.rows.extracted", "writer.records.written", "writer.bytes.written",
                         "writer.final.output.file.paths")


@runtime_checkable
class ClusterTasks(Protocol):
    """A Source some of whose work units run as Spark jobs driven from the driver (see the module)."""

    def runs_on_cluster(self, unit: WorkUnitState) -> bool:
        """Whether this work unit (seen with the job's keys) is better run as a Spark job of its own."""

    def run_on_cluster(self, session: Any, task: TaskState) -> None:
        """Do the unit's whole work with ``session`` (a classic or Connect SparkSession), writing its output where
        its publisher expects it, and set :data:`CLUSTER_TASK_COUNTERS` on ``task``; raise on failure (the task
        is retried like any other)."""
