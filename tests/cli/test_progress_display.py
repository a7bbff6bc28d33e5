"""The live display's model: what it shows while Spark starts, the planned count, and rows/s from the first task."""

from __future__ import annotations

import io

from rich.console import Console

from gobblin_py.cli.progress_display import LiveDisplay, render_snapshot
from gobblin_py.runtime.execute import run_progress
from gobblin_py.runtime.execute.run_progress import RunProgress
from gobblin_py.runtime.execute.task_progress import TaskReport, report_finished
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.states import Extract, TaskState, WorkingState, WorkUnit
from tests.support.clock import FakeClock


def _text(display: LiveDisplay) -> str:
    out = io.StringIO()
    Console(file=out, width=120, color_system=None).print(render_snapshot(display.snapshot()))
    return out.getvalue()


def test_while_spark_starts_the_display_says_so_with_the_master_and_the_planned_count():
    display = LiveDisplay(Console(file=io.StringIO(), width=120))
    with display:
        # the events a run logs as it plans its tasks and the Spark engine starts its session
        get_logger("gobblin_py.runtime.launcher").info(run_progress.TASKS_PLANNED, job="Orders", tasks=3, skipped=0)
        get_logger("gobblin_py.runtime.engines.spark").info(run_progress.SPARK_STARTING, master="local[2]")
        starting = _text(display)
        get_logger("gobblin_py.runtime.engines.spark").info(run_progress.SPARK_STARTED, master="local[2]",
                                                             seconds=9.5)
        started = _text(display)
    assert "starting Spark (local[2])…" in starting and "0/3" in starting, starting
    assert "starting Spark" not in started and "0/3" in started, started


def test_the_planned_count_is_not_added_twice_when_the_engine_announces_it_too():
    progress = RunProgress()
    progress.observe({"event": run_progress.TASKS_PLANNED, "tasks": 3})
    progress.planned(3)
    assert progress.snapshot().planned == 3


def test_rows_per_second_count_from_the_first_tasks_start_not_from_start_up():
    clock = FakeClock()
    progress = RunProgress(clock.monotonic, clock.time)
    clock.advance(6)  # start-up: a Spark session starting, the source planning
    progress.update(TaskReport("t0", "", 1000, started_ms=int(clock.time() * 1000)))
    clock.advance(2)
    snap = progress.snapshot()
    assert snap.seconds == 8 and snap.rate_seconds == 2, snap
    assert snap.rows_per_second == 500, snap
    assert snap.as_json()["rows_per_s"] == 500.0


def test_a_task_state_reported_at_its_end_carries_its_start():
    clock = FakeClock()
    progress = RunProgress(clock.monotonic, clock.time)
    clock.advance(1)
    start_ms = int(clock.time() * 1000) + 500  # the executor's clock: the task started after the display did
    unit = WorkUnit.create(Extract.create("append_only", "shop", "orders"))
    task = TaskState("job_Orders_1", "task_Orders_1_0", unit, start_time=start_ms, end_time=start_ms + 10)
    task.working_state = WorkingState.SUCCESSFUL
    task.set_prop("qualitychecker.rows.extracted", 40)
    clock.advance(1)  # the task's state comes back once it has ended
    report_finished(task, progress)
    clock.advance(3)
    snap = progress.snapshot()
    assert snap.done == 1 and snap.rows_read == 40
    assert snap.seconds == 5 and snap.rate_seconds == 3.5, snap  # from the task's start, not the report's arrival
