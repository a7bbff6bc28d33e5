"""A run's progress on the driver, put together from its tasks' reports: work units done of planned, rows read,
rows per second, rows written per fork branch.

Under the local engine tasks report batch by batch; Spark executors report over the progress channel, and when
they cannot reach the driver the display catches up as each task's state comes back (task granularity). The
run's log events say what comes before: how many tasks were planned (``tasks_planned``), and that Spark is
starting (``spark_starting`` … ``spark_started``). Rows per second count from the first task's start.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gobblin_py.runtime.execute.task_progress import TaskReport

TASKS_PLANNED = "tasks_planned"  # the launcher: ``tasks`` to run
SPARK_STARTING = "spark_starting"  # the Spark engine, before it starts its session: ``master``
SPARK_STARTED = "spark_started"  # … and once it has


@dataclass
class Snapshot:
    """The run's progress at one moment."""

    planned: int
    done: int
    failed: int
    rows_read: int
    written: dict[str, int] = field(default_factory=dict)  # by branch name
    seconds: float = 0.0  # since the run started
    rate_seconds: float = 0.0  # since its first task started
    status: str | None = None  # what the run is doing before its tasks run (starting Spark)
    retries: list[str] = field(default_factory=list)  # a line per running task that failed an attempt: when, why

    @property
    def rows_per_second(self) -> float:
        return self.rows_read / self.rate_seconds if self.rate_seconds > 0 else 0.0

    def as_json(self) -> dict:
        return {"work_units_done": self.done, "work_units": self.planned, "work_units_failed": self.failed,
                "rows_read": self.rows_read, "rows_per_s": round(self.rows_per_second, 1),
                "rows_written": dict(self.written), "seconds": round(self.seconds, 3)}


class RunProgress:
    """Collects the tasks' reports (a :class:`~gobblin_py.runtime.execute.task_progress.ProgressSink`, thread-safe)."""

    def __init__(self, monotonic: Callable[[], float] = time.monotonic,
                 wall: Callable[[], float] = time.time) -> None:
        """``monotonic`` and ``wall`` are the clocks it reads (the real ones; a test passes its own)."""
        self._monotonic, self._wall = monotonic, wall
        self._lock = threading.Lock()
        self._planned = 0
        self._announced = 0  # the launcher's count, logged before the engine starts
        self._reports: dict[str, TaskReport] = {}
        self._notes: dict[str, str] = {}  # the last retry note of each task
        self._started = monotonic()
        self._started_wall = wall()
        self._first_task: float | None = None  # epoch seconds
        self._status: str | None = None

    def planned(self, tasks: int) -> None:
        with self._lock:
            self._planned += tasks

    def observe(self, event: Mapping[str, Any]) -> bool:
        """Take what a log event says of the run's progress; True for the events the progress shows itself."""
        name = event.get("event")
        with self._lock:
            if name == TASKS_PLANNED:
                self._announced = int(event.get("tasks") or 0)
            elif name == SPARK_STARTING:
                self._status = f"starting Spark ({event.get('master')})…"
                return True
            elif name == SPARK_STARTED:
                self._status = None
        return False

    def update(self, report: TaskReport) -> None:
        with self._lock:
            # an executor's clock may run ahead or behind: never before the run, never after now
            now = self._wall()
            start = min(max(report.started_ms / 1000, self._started_wall), now) if report.started_ms else now
            self._first_task = start if self._first_task is None else min(self._first_task, start)
            known = self._reports.get(report.task_id)
            if known is not None and known.state is not None and report.state is None:
                return  # a running report that arrived after the task's end
            self._reports[report.task_id] = report
            if report.note:
                self._notes[report.task_id] = report.note

    def snapshot(self) -> Snapshot:
        with self._lock:
            reports = list(self._reports.values())
            planned = max(self._planned, self._announced)
            first_task, status = self._first_task, self._status
            notes = dict(self._notes)
        written: dict[str, int] = {}
        for report in reports:
            for branch, rows in report.written.items():
                written[branch] = written.get(branch, 0) + rows
        ended = [r for r in reports if r.state is not None]
        retries = [f"{_task_label(r.task_id)}: {notes[r.task_id]}" for r in sorted(reports, key=lambda r: r.task_id)
                   if r.state is None and r.task_id in notes]
        return Snapshot(max(planned, len(reports)), len(ended), sum(1 for r in ended if r.state == "FAILED"),
                        sum(r.read for r in reports), dict(sorted(written.items())),
                        self._monotonic() - self._started,
                        max(0.0, self._wall() - first_task) if first_task is not None else 0.0,
                        status if not reports else None, retries)


def _task_label(task_id: str) -> str:
    """``task 3`` for Gobblin's ``task_<job>_<ms>_3``; other ids as they are."""
    tail = task_id.rsplit("_", 1)[-1]
    return f"task {tail}" if task_id.startswith("task_") and tail.isdigit() else task_id
