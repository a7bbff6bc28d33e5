"""One task: a work unit run to completion on an executor, retried with fresh plugins when an attempt fails.

Each attempt is a :class:`~gobblin_py.runtime.execute.pipeline.TaskPipeline` and writes under its own attempt folder;
a failed attempt is retried up to ``task.maxretries`` times, the k-th retry after (k−1) ×
``task.retry.intervalinsec`` seconds (a stop of the run ends that wait and makes no further attempt), unless its
failure is permanent (:func:`gobblin_py.sdk.failures.classify`: a bad value, a missing file, a configuration
error fail the task at once) or the run's retry budget (:mod:`gobblin_py.sdk.retry_budget`) is spent; a wait that
would pass the budget is shortened to what is left. Each retry is a ``task_retry`` event and
a line on the live display; every failed attempt is kept on the task's state (:data:`ATTEMPTS_KEY`). The TaskState
that comes back holds Gobblin's counters, the working state, the quality results and the actual high watermark
the extractor set, or the failure.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
import uuid
from collections.abc import Callable, Mapping

from gobblin_py.runtime.execute import task_progress
from gobblin_py.runtime.execute.dataset_outputs import (
    ATTEMPTS_KEY,
    BUDGET_SPENT_KEY,
    DATA_FAILURE_KEY,
    FAILURE_KIND_KEY,
    USAGE_FAILURE_KEY,
)
from gobblin_py.runtime.execute.pipeline import TaskPipeline
from gobblin_py.runtime.execute.task_settings import TaskSettings
from gobblin_py.sdk.errors import DataError, GobblinPyError, UsageError
from gobblin_py.sdk.failures import Failure, classify
from gobblin_py.sdk.interrupts import TaskCancelled, cancelled, pause
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.redact import redact
from gobblin_py.sdk.retry_budget import Grant, RetryBudgetSpent, run_budget
from gobblin_py.sdk.states import State, TaskState, WorkingState, WorkUnit

log = get_logger(__name__)

MAX_ERROR_CHARS = 500  # of an attempt's error kept on the task's state; the last attempt keeps its whole trace


def attempt_id(retry: int) -> str:
    """A unique id for one attempt: Spark's stage/partition/attempt numbers when on Spark, then the retry."""
    context = None
    if "pyspark" in sys.modules:  # only on a Spark executor; importing pyspark costs a local run ~0.15 s
        from pyspark import TaskContext

        context = TaskContext.get()
    prefix = f"s{context.stageId()}p{context.partitionId()}a{context.attemptNumber()}_" if context is not None else ""
    return f"{prefix}r{retry}_{uuid.uuid4().hex[:8]}"


def run_task(job_props: Mapping[str, str], workunit: WorkUnit, job_id: str, task_id: str,
             body: Callable[[TaskState], None] | None = None) -> TaskState:
    """Run one work unit to completion (with retries) and return its TaskState. Each attempt is the task
    pipeline, or ``body`` when given (a cluster task's Spark job, see :mod:`gobblin_py.sdk.cluster_tasks`)."""
    job_state = State(job_props)
    settings = TaskSettings.load(job_state)
    started = int(time.time() * 1000)
    attempt = 0
    attempts: list[dict] = []  # each failed attempt: number, error, kind, the wait before the next
    while True:
        task = TaskState(job_id, task_id, workunit, job_state=job_state, start_time=started)
        task.set_prop("job.id", job_id)
        task.set_prop("task.id", task_id)
        # every attempt (a Spark retry or speculative copy, or a retry here) stages and outputs under its own
        # folder; only the attempt whose TaskState reaches the driver is published
        task.set_prop("task.attempt.id", attempt_id(attempt))
        task.working_state = WorkingState.RUNNING
        try:
            if body is None:
                TaskPipeline(task).run()
            else:
                body(task)
            task.working_state = WorkingState.SUCCESSFUL
        except Exception as exc:  # noqa: BLE001 - any plugin error fails the task, not the job
            _record_failure(task, exc)
            failure = classify(exc)
            retry = (attempt < settings.max_retries and failure.retryable and not isinstance(exc, TaskCancelled)
                     and not cancelled())
            grant: Grant | None = None
            if retry:
                try:
                    grant = run_budget(job_state).grant(settings.retry_interval_s * attempt)
                except RetryBudgetSpent as spent:
                    task.set_prop(BUDGET_SPENT_KEY, str(spent))
            attempts.append({"attempt": attempt + 1, "error": _error_text(exc), "kind": failure.kind,
                             "reason": failure.reason, "retry_in_s": grant.seconds if grant else None})
            task.set_prop(FAILURE_KIND_KEY, failure.kind)
            if grant is not None:
                _announce_retry(task, exc, failure, attempt + 2, settings.max_retries + 1, grant)
                pause(grant.seconds)  # a stop ends the back-off at once, and no further attempt is made
                if not cancelled():
                    attempt += 1
                    continue
                attempts[-1]["retry_in_s"] = None
            log.warning("task_failed", task=task_id, attempt=attempt + 1, error=_error_text(exc), kind=failure.kind,
                        reason=failure.reason, note=_final_note(task, exc, failure, attempt + 1))
        if attempts:  # on the state that goes back, whether the last attempt failed or not
            task.set_prop(ATTEMPTS_KEY, json.dumps(attempts, ensure_ascii=False))
        task.set_prop("task.retries", attempt)
        task.end_time = int(time.time() * 1000)
        task.task_duration = task.end_time - task.start_time
        log.info("task_finished", task=task_id, state=task.working_state.value,
                 extracted=task.get_prop("qualitychecker.rows.extracted"), written=task.get_prop("writer.records.written"))
        task_progress.report_finished(task)
        return task


def _record_failure(task: TaskState, exc: BaseException) -> None:
    """Mark the attempt failed and keep its error on the state (the history, metrics and lineage read it there),
    credentials masked; a configuration or data error also as the message the run exits 2 or 65 with."""
    task.working_state = WorkingState.FAILED
    task.set_prop("task.failure.exception", redact("".join(traceback.format_exception(exc))))
    if isinstance(exc, GobblinPyError) and exc.exit_code == UsageError.exit_code:
        task.set_prop(USAGE_FAILURE_KEY, redact(str(exc)))
    elif isinstance(exc, DataError):
        task.set_prop(DATA_FAILURE_KEY, redact(str(exc)))


def _error_text(exc: BaseException) -> str:
    text = redact(f"{type(exc).__name__}: {exc}")
    return text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS - 1] + "…"


def _final_note(task: TaskState, exc: BaseException, failure: Failure, attempts: int) -> str:
    if isinstance(exc, TaskCancelled) or cancelled():
        return "the run was stopped: no further attempt"
    if not failure.retryable:
        return f"permanent ({failure.reason}): not retried"
    if spent := task.get_prop(BUDGET_SPENT_KEY):
        return f"{failure.kind}: failed {attempts} attempt(s), not retried: {spent}"
    return f"{failure.kind}: failed {attempts} attempt(s), task.maxretries reached"


def _announce_retry(task: TaskState, exc: BaseException, failure: Failure, attempt: int, of: int,
                    grant: Grant) -> None:
    """The ``task_retry`` event and the live display's line for a task about to be tried again (the run's first
    retry says how long the run may still wait for retries)."""
    note = grant.note()
    log.warning("task_retry", task=task.task_id, attempt=attempt, of=of, delay_s=grant.seconds,
                error_type=type(exc).__name__, error=_error_text(exc), kind=failure.kind, reason=failure.reason,
                **({"note": note} if note else {}))
    brief = _error_text(exc)
    task_progress.report_retry(task, f"attempt {attempt} of {of} in {grant.seconds:g} s — "
                                     f"{brief if len(brief) <= 100 else brief[:99] + '…'} ({failure.kind})"
                                     + (f"; {note}" if note else ""))
