"""Live progress of a run's tasks for a display on the driver: rows read and written per branch, as they go.

Nothing is reported unless the driver installs a :class:`ProgressSink` (``gpy run`` on a terminal does). Then
tasks of the local engine report to it directly, batch by batch; Spark executors report the same
:class:`TaskReport`s over a progress channel to the driver (:mod:`gobblin_py.runtime.execute.progress_channel`). A task
reports at most every :data:`THROTTLE_S` seconds while it runs, and once when it ends. Reports carry running
totals, so a lost one costs nothing but a moment's staleness.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from gobblin_py.runtime.execute.dataset_outputs import written_by_branch
from gobblin_py.sdk.states import TaskState

THROTTLE_S = 0.2


@dataclass
class TaskReport:
    """Where one task stands: rows read, rows written per branch, its working state once it ended, and a note
    while it waits to be retried (``attempt 2 of 6 in 300 s — ConnectionRefusedError: …``)."""

    task_id: str
    urn: str
    read: int
    written: dict[str, int] = field(default_factory=dict)
    state: str | None = None
    note: str | None = None  # a failed attempt's retry: when and why
    started_ms: int = 0  # the task's start (epoch ms; 0: not known), where rows/s count from

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TaskReport:
        return cls(str(data["task_id"]), str(data.get("urn") or ""), int(data.get("read") or 0),
                   {str(k): int(v) for k, v in (data.get("written") or {}).items()}, data.get("state"),
                   data.get("note"), int(data.get("started_ms") or 0))


class ProgressSink(Protocol):
    """Takes the tasks' reports (from any thread)."""

    def planned(self, tasks: int) -> None:
        """The engine is about to run ``tasks`` tasks."""

    def update(self, report: TaskReport) -> None:
        """A task's latest report."""


_state: dict[str, Any] = {"driver": None, "channel": None}


def install(sink: ProgressSink | None) -> None:
    """Make ``sink`` the driver's progress sink (None: report nothing)."""
    _state["driver"] = sink


def driver_sink() -> ProgressSink | None:
    """The driver's progress sink, if a display is listening."""
    return _state["driver"]


def connect(sink: ProgressSink | None) -> None:
    """On an executor: send this process's task reports to ``sink`` (a progress channel), or stop (None)."""
    _state["channel"] = sink


def _sink() -> ProgressSink | None:
    return _state["driver"] or _state["channel"]


class TaskReporter:
    """Reports one task attempt's progress, throttled."""

    def __init__(self, sink: ProgressSink, task_id: str, urn: str) -> None:
        self.sink = sink
        self.task_id = task_id
        self.urn = urn
        self._last = time.monotonic()  # a task that ends within the first interval only reports its end
        self.started_ms = int(time.time() * 1000)

    def batch(self, read: int, branches: list) -> None:
        """After a batch: rows read so far and each live branch's rows written so far."""
        now = time.monotonic()
        if now - self._last < THROTTLE_S:
            return
        self._last = now
        written = {b.name: (b.writer.records_written if b.writer is not None else 0) for b in branches if b is not None}
        self.sink.update(TaskReport(self.task_id, self.urn, read, written, started_ms=self.started_ms))


def reporter(task: TaskState) -> TaskReporter | None:
    """A reporter for a task attempt, or None when nobody listens (the usual case: no cost)."""
    sink = _sink()
    return TaskReporter(sink, task.task_id, task.dataset_urn) if sink is not None else None


def report_finished(task: TaskState, sink: ProgressSink | None = None) -> None:
    """A task ended: its final counts and working state, to ``sink`` or whoever listens (if anyone)."""
    sink = sink or _sink()
    if sink is None:
        return
    read = int(task.get_prop("qualitychecker.rows.extracted") or 0)
    sink.update(TaskReport(task.task_id, task.dataset_urn, read, written_by_branch(task), task.working_state.value,
                           started_ms=max(task.start_time, 0)))


def report_retry(task: TaskState, note: str) -> None:
    """A task attempt failed and the task will be tried again: ``note`` says when and why, to whoever listens."""
    sink = _sink()
    if sink is not None:
        sink.update(TaskReport(task.task_id, task.dataset_urn, 0, {}, None, note=note,
                               started_ms=max(task.start_time, 0)))
