"""One task: a work unit run to completion on an executor, retried with fresh plugins when an attempt fails.

Each attempt is a :class:`~gobblin_py.runtime.execute.pipeline.TaskPipeline` and writes under its own attempt folder;
a failed attempt is retried up to ``task.maxretries`` times, the k-th retry after (k−1) ×
``task.retry.intervalinsec`` seconds. The TaskState that comes back holds Gobblin's counters, the working state,
the quality results and the actual high watermark the extractor set, or the failure.
"""

from __future__ import annotations

import sys
import time
import traceback
import uuid
from collections.abc import Mapping

from gobblin_py.runtime.execute import task_progress
from gobblin_py.runtime.execute.dataset_outputs import USAGE_FAILURE_KEY
from gobblin_py.runtime.execute.pipeline import TaskPipeline
from gobblin_py.runtime.execute.task_settings import TaskSettings
from gobblin_py.sdk.errors import GobblinPyError, UsageError
from gobblin_py.sdk.interrupts import TaskCancelled, pause
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.states import State, TaskState, WorkingState, WorkUnit

log = get_logger(__name__)


def attempt_id(retry: int) -> str:
    """A unique id for one attempt: Spark's stage/partition/attempt numbers when on Spark, then the retry."""
    context = None
    if "pyspark" in sys.modules:  # only on a Spark executor; importing pyspark costs a local run ~0.15 s
        from pyspark import TaskContext

        context = TaskContext.get()
    prefix = f"s{context.stageId()}p{context.partitionId()}a{context.attemptNumber()}_" if context is not None else ""
    return f"{prefix}r{retry}_{uuid.uuid4().hex[:8]}"


def run_task(job_props: Mapping[str, str], workunit: WorkUnit, job_id: str, task_id: str) -> TaskState:
    """Run one work unit to completion (with retries) and return its TaskState."""
    job_state = State(job_props)
    settings = TaskSettings.load(job_state)
    started = int(time.time() * 1000)
    attempt = 0
    while True:
        task = TaskState(job_id, task_id, workunit, job_state=job_state, start_time=started)
        task.set_prop("job.id", job_id)
        task.set_prop("task.id", task_id)
        # every attempt (a Spark retry or speculative copy, or a retry here) stages and outputs under its own
        # folder; only the attempt whose TaskState reaches the driver is published
        task.set_prop("task.attempt.id", attempt_id(attempt))
        task.working_state = WorkingState.RUNNING
        try:
            TaskPipeline(task).run()
            task.working_state = WorkingState.SUCCESSFUL
        except Exception as exc:  # noqa: BLE001 - any plugin error fails the task, not the job
            task.working_state = WorkingState.FAILED
            task.set_prop("task.failure.exception", "".join(traceback.format_exception(exc)))
            if isinstance(exc, GobblinPyError) and exc.exit_code == UsageError.exit_code:
                task.set_prop(USAGE_FAILURE_KEY, str(exc))  # the run exits 2 with this message
            log.warning("task_failed", task=task_id, attempt=attempt, error=f"{type(exc).__name__}: {exc}")
            if attempt < settings.max_retries and not isinstance(exc, (UsageError, TaskCancelled)):
                attempt += 1
                pause(settings.retry_interval_s * (attempt - 1))
                continue
        task.set_prop("task.retries", attempt)
        task.end_time = int(time.time() * 1000)
        task.task_duration = task.end_time - task.start_time
        log.info("task_finished", task=task_id, state=task.working_state.value,
                 extracted=task.get_prop("qualitychecker.rows.extracted"), written=task.get_prop("writer.records.written"))
        task_progress.report_finished(task)
        return task
