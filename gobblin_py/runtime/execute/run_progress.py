"""A run's progress on the driver, put together from its tasks' reports: work units done of planned, rows read,
rows per second, rows written per fork branch.

Under the local engine tasks report batch by batch; Spark executors report over the progress channel, and when
they cannot reach the driver the display catches up as each task's state comes back (task granularity).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from gobblin_py.runtime.execute.task_progress import TaskReport


@dataclass
class Snapshot:
    """The run's progress at one moment."""

    planned: int
    done: int
    failed: int
    rows_read: int
    written: dict[str, int] = field(default_factory=dict)  # by branch name
    seconds: float = 0.0
    retries: list[str] = field(default_factory=list)  # a line per running task that failed an attempt: when, why

    @property
    def rows_per_second(self) -> float:
        return self.rows_read / self.seconds if self.seconds > 0 else 0.0

    def as_json(self) -> dict:
        return {"work_units_done": self.done, "work_units": self.planned, "work_units_failed": self.failed,
                "rows_read": self.rows_read, "rows_per_s": round(self.rows_per_second, 1),
                "rows_written": dict(self.written), "seconds": round(self.seconds, 3)}


class RunProgress:
    """Collects the tasks' reports (a :class:`~gobblin_py.runtime.execute.task_progress.ProgressSink`, thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._planned = 0
        self._reports: dict[str, TaskReport] = {}
        self._notes: dict[str, str] = {}  # the last retry note of each task
        self._started = time.monotonic()

    def planned(self, tasks: int) -> None:
        with self._lock:
            self._planned += tasks

    def update(self, report: TaskReport) -> None:
        with self._lock:
            known = self._reports.get(report.task_id)
            if known is not None and known.state is not None and report.state is None:
                return  # a running report that arrived after the task's end
            self._reports[report.task_id] = report
            if report.note:
                self._notes[report.task_id] = report.note

    def snapshot(self) -> Snapshot:
        with self._lock:
            reports = list(self._reports.values())
            planned = self._planned
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
                        time.monotonic() - self._started, retries)


def _task_label(task_id: str) -> str:
    """``task 3`` for Gobblin's ``task_<job>_<ms>_3``; other ids as they are."""
    tail = task_id.rsplit("_", 1)[-1]
    return f"task {tail}" if task_id.startswith("task_") and tail.isdigit() else task_id
