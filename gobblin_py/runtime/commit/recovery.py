"""Finishing, at the start of a run, the commits earlier runs logged and did not complete (exactly-once)."""

from __future__ import annotations

import posixpath
import time

from gobblin_py.io import fs as fsutil
from gobblin_py.io.crash_points import phase
from gobblin_py.runtime.commit.dataset_result import DatasetResult
from gobblin_py.runtime.commit.job_run import JobRun
from gobblin_py.runtime.commit.sequence_settings import CommitSequenceSettings
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.retry_budget import RetryBudgetSpent, run_budget
from gobblin_py.sdk.states import RunningState

log = get_logger(__name__)


def finish_pending_commits(run: JobRun) -> tuple[dict[str, str], list[DatasetResult]]:
    """Replay every logged, unfinished commit of the job.

    Returns ``{urn: job id}`` of those that still fail after ``gobblin.runtime.commit.sequence.max.retries``
    tries, or once the run's retry budget is spent (the waits between tries come out of it) — their datasets sit
    this run out, loudly — and a failed result for each of them.
    """
    if run.sequences is None:
        return {}, []
    retries = CommitSequenceSettings.load(run.props).max_retries
    budget = run_budget(run.props)
    blocked: dict[str, str] = {}
    failed: list[DatasetResult] = []
    batches: dict[str, tuple[list, list]] = {}  # batch file: its sequences, those left unfinished
    for sequence in run.sequences.pending(run.job_name):
        if sequence.batch is not None:
            batch = batches.setdefault(sequence.batch, ([], []))
            batch[0].append(sequence)
        error: Exception | None = None
        tries, spent = 0, ""
        for attempt in range(retries):
            if attempt:
                try:
                    time.sleep(budget.grant(min(2.0, 0.2 * attempt)).seconds)
                except RetryBudgetSpent as exc:
                    spent = f"; not tried again: {exc}"
                    break
            tries += 1
            try:
                with phase("recovery"):
                    sequence.execute()
                    if sequence.batch is None:
                        run.sequences.delete(sequence)
                error = None
                break
            except Exception as exc:  # noqa: BLE001 - reported below, per dataset
                error = exc
        if error is None:
            log.info("pending_commit_finished", dataset=sequence.urn, job_id=sequence.job_id)
            continue
        blocked[sequence.urn] = sequence.job_id
        if sequence.batch is not None:
            batches[sequence.batch][1].append(sequence)
        message = (f"the commit of run {sequence.job_id} could not be finished after {tries} tries ({error}){spent}; "
                   "this dataset is skipped until it can")
        log.error("pending_commit_failed", dataset=sequence.urn, job_id=sequence.job_id, error=str(error))
        failed.append(DatasetResult(sequence.urn, RunningState.FAILED, 0, 0, 0, 0, error=message))
    for path, (sequences, left) in batches.items():  # a batch file goes once all its sequences have run
        with phase("recovery"):
            run.sequences.finish_batch(path, sequences, left)
    return blocked, failed


def remove_temporary_files(run: JobRun) -> None:
    """Delete what earlier runs killed mid-write left beside the state store's and the commit log's files
    (their temporary copies); the job's lock is held, so no run of the job is writing there."""
    folders = []
    if run.store is not None:
        folders.append((run.store.fs, run.store.job_dir(run.job_name)))
    if run.sequences is not None:
        folders.append((run.sequences.fs, posixpath.join(run.sequences.root, run.job_name)))
    for fs, folder in folders:
        try:
            removed = fsutil.remove_temporary_files(fs, folder)
        except OSError as exc:  # housekeeping never fails a run
            log.warning("temporary_files_not_removed", directory=folder, error=str(exc))
            continue
        if removed:
            log.info("temporary_files_removed", directory=folder, files=removed)
