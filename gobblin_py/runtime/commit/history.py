"""Recording each run in the run history: ``RUNNING`` when it starts, its whole outcome when it ends.

A record holds the run's ids, host and process, start, end and duration, status and exit code, and per dataset
its state, tasks, records read and written per branch, files, bytes, watermarks from → to and errors. Recording
never fails a run: a history that cannot be written is a warning.
"""

from __future__ import annotations

import os
import time
from typing import Any

from gobblin_py.io import fs as fsutil
from gobblin_py.io.processes import host_name
from gobblin_py.runtime.commit.dataset_result import DatasetResult
from gobblin_py.runtime.commit.job_result import JobResult
from gobblin_py.runtime.commit.job_run import JobRun
from gobblin_py.runtime.execute.signals import JobInterrupted
from gobblin_py.sdk.errors import GobblinPyError
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.redact import redact
from gobblin_py.sdk.watermarks import watermark_sort_key
from gobblin_py.store import FsDatasetStateStore
from gobblin_py.store.report import iso_time, watermark_text
from gobblin_py.store.run_history import FORMAT, RUNNING, RunHistoryStore

log = get_logger(__name__)

MAX_WATERMARKS = 50  # distinct watermark values kept per dataset and side (a Kafka topic has many partitions)
NOTHING_NEW = "nothing new to pull"
_STATUS_BY_EXIT = {0: "SUCCEEDED", 3: "PARTIAL"}


def _distinct(values: list) -> list[str]:
    if len(values) == 1:  # a dataset of one task: nothing to order or merge
        text = watermark_text(values[0])
        return [text] if text != "-" else []
    texts = [t for t in dict.fromkeys(watermark_text(v) for v in sorted(values, key=watermark_sort_key)) if t != "-"]
    return texts[:MAX_WATERMARKS] + ([f"… {len(texts) - MAX_WATERMARKS} more"] if len(texts) > MAX_WATERMARKS else [])


def dataset_record(d: DatasetResult) -> dict[str, Any]:
    """What one dataset did in the run, as the history keeps it."""
    return {
        "urn": d.urn, "state": d.state.value, "tasks": d.tasks, "failed_tasks": d.failed_tasks,
        "records_read": d.records_extracted, "records_written": d.records_written,
        "branches": [b.as_json() for b in d.branches], "files": d.files, "bytes": d.bytes_written,
        "watermark_from": _distinct(d.low_watermarks), "watermark_to": _distinct(d.high_watermarks),
        "seconds": round(d.seconds, 3), "state_saved": d.persisted, "published": list(d.published),
        "commits": list(d.commits),
        "quality": list(d.quality), "error": d.error, "task_errors": list(d.task_errors),
        "task_attempts": list(d.task_attempts),
        "startpoints": list(d.startpoints),
    }


def outcome(result: JobResult, failure: BaseException | None) -> tuple[str, int, str | None]:
    """``(status, exit code, error)`` of a finished run: SUCCEEDED, NOTHING_NEW, PARTIAL, FAILED or STOPPED."""
    if isinstance(failure, JobInterrupted):
        return "STOPPED", failure.exit_code, str(failure)
    if failure is not None:
        code = failure.exit_code if isinstance(failure, GobblinPyError) else 1
        text = str(failure) if isinstance(failure, GobblinPyError) else f"{type(failure).__name__}: {failure}"
        return "FAILED", code, redact(text)  # the history's and every reporter's error: credentials masked
    code = result.exit_code
    status = _STATUS_BY_EXIT.get(code, "FAILED")
    if status == "SUCCEEDED" and result.message.startswith(NOTHING_NEW) and not result.datasets:
        status = "NOTHING_NEW"
    return status, code, None


def _state_retention_seconds(run: JobRun) -> float | None:
    """``state.store.retention`` in seconds (None when unset): the history keeps nothing older either."""
    if not run.props.get("state.store.retention") or not run.props.get("state.store.dir"):
        return None
    return FsDatasetStateStore.from_properties(run.props).retention_seconds


class RunRecorder:
    """Writes one run's record: :meth:`started` once the job's lock is held, :meth:`finished` at its end."""

    def __init__(self, store: RunHistoryStore, run: JobRun, engine: str, lock_held: bool) -> None:
        self.store = store
        self.run = run
        self.lock_held = lock_held
        self.record: dict[str, Any] = {
            "format": FORMAT, "job": run.job_name, "run_id": run.job_id, "host": host_name(), "pid": os.getpid(),
            "engine": engine, "started_ms": run.started_ms, "started": iso_time(run.started_ms),
            "ended_ms": None, "ended": None, "seconds": None, "status": RUNNING, "state": "RUNNING",
            "exit_code": None, "message": "", "error": None, "datasets": [],
        }

    @classmethod
    def for_run(cls, run: JobRun, engine: str, lock_held: bool) -> RunRecorder | None:
        """The recorder of a run; None when the job keeps no history."""
        try:
            store = RunHistoryStore.for_job(run.props, _state_retention_seconds(run))
        except (GobblinPyError, OSError, ValueError) as exc:
            log.warning("history_not_recorded", job=run.job_name, error=str(exc))
            return None
        return cls(store, run, engine, lock_held) if store is not None else None

    def started(self) -> None:
        """Record the run as RUNNING, and mark earlier runs that died without an end KILLED."""
        try:
            if self.lock_held:  # no other run of the job writes here: a _tmp_ file is a killed run's
                fsutil.remove_temporary_files(self.store.fs, self.store.job_dir(self.run.job_name))
            killed = self.store.mark_killed(self.run.job_name, self.run.job_id, self.lock_held)
            for run_id in killed:
                log.warning("earlier_run_killed", job=self.run.job_name, run_id=run_id,
                            note="it ended without recording its end; see `gpy history`")
            self.store.put(self.run.job_name, self.record)
        except (GobblinPyError, OSError, ValueError) as exc:
            log.warning("history_not_recorded", job=self.run.job_name, error=str(exc))

    def finished(self, result: JobResult, failure: BaseException | None) -> None:
        """Record the run's end: status, exit code, duration and every dataset's outcome; prune old records."""
        status, code, error = outcome(result, failure)
        ended = int(time.time() * 1000)
        self.record.update(
            ended_ms=ended, ended=iso_time(ended), seconds=round((ended - self.run.started_ms) / 1000, 3),
            status=status, state=result.state.value, exit_code=code, message=result.message, error=error,
            warnings=list(result.warnings),
            datasets=[dataset_record(d) for d in result.datasets],
        )
        try:
            self.store.put(self.run.job_name, self.record)
            self.store.prune(self.run.job_name)
        except (GobblinPyError, OSError, ValueError) as exc:
            log.warning("history_not_recorded", job=self.run.job_name, error=str(exc))
