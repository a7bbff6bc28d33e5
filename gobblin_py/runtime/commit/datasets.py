"""Committing a job's datasets: commit policy, publishing, watermark rollback and state persistence (§6.1, §6.4).

Task states are grouped by ``dataset.urn``. For each dataset:

- under ``full``, a dataset with any task not SUCCESSFUL fails: nothing is published and its state is not
  persisted, so the next run starts again from the last committed state;
- otherwise (``successful``, ``partial``, or ``full`` with every task successful) the publisher moves the
  successful tasks' output and those tasks become COMMITTED;
- every task that did not reach COMMITTED has its actual high watermark rolled back to its low watermark;
- the dataset state is persisted to the state store.
"""

from __future__ import annotations

import json
import re
import traceback
from collections.abc import Mapping
from dataclasses import dataclass

from gobblin_py.io import fs as fsutil
from gobblin_py.io.crash_points import boundary, phase
from gobblin_py.io.group_sync import GroupSync
from gobblin_py.io.rename_step import FsRenameStep
from gobblin_py.runtime.commit.boundary import plugin_boundary
from gobblin_py.runtime.commit.commit_sequence import CommitSequence, CommitStep, DatasetStateStep
from gobblin_py.runtime.commit.dataset_result import DatasetResult, quality_lines
from gobblin_py.runtime.commit.job_run import JobRun
from gobblin_py.runtime.commit.startpoint_steps import StartpointsConsumedStep
from gobblin_py.runtime.execute.dataset_outputs import failure_line, int_value
from gobblin_py.runtime.execute.job_settings import CommitSettings
from gobblin_py.sdk import interrupts
from gobblin_py.sdk.commit import ChecksPublishing, ReportsCommit
from gobblin_py.sdk.contracts import DataPublisher, ExactlyOncePublisher, Initializable
from gobblin_py.sdk.errors import GobblinPyError, RecordsLost, UsageError
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.plugins import instantiate
from gobblin_py.sdk.redact import redact
from gobblin_py.sdk.run_states import PUBLISHED_KEY, DatasetState
from gobblin_py.sdk.states import RunningState, TaskState, WorkingState
from gobblin_py.sdk.watermarks import partition_ids
from gobblin_py.store import progress
from gobblin_py.store.startpoints import applied_ids

log = get_logger(__name__)

DEFAULT_PUBLISHER = "gobblin_py.connectors.files.publisher.BaseDataPublisher"


REMOTE_COMMIT_THREADS = 20  # Gobblin's job.commit.parallelCommits: threads hide a remote store's latency
FINAL_DIR_KEY = re.compile(r"^data\.publisher\.final\.dir(\.\d+)?$")


def commit_threads(run: JobRun) -> int:
    """``job.commit.parallelCommits``, or by default 20 threads, but 1 when the state store and every
    ``data.publisher.final.dir`` are on local disk: there a batch of commits is work under the interpreter
    lock and one group sync, which more threads only contend for."""
    chosen = run.commit_settings.commit_threads
    if chosen is not None:
        return chosen
    props = run.props
    finals = [(k, v) for k, v in props.items() if FINAL_DIR_KEY.match(k) and v]
    if run.store is None or not fsutil.is_local(run.store.fs) or not finals:
        return REMOTE_COMMIT_THREADS
    for key, folder in finals:
        branch = key[len("data.publisher.final.dir."):] if key != "data.publisher.final.dir" else ""
        fs_uri = next((props[k] for k in (f"data.publisher.fs.uri.{branch}", "data.publisher.fs.uri",
                                          f"writer.fs.uri.{branch}", "writer.fs.uri") if props.get(k)), None)
        if not fsutil.is_local_url(folder, fs_uri):
            return REMOTE_COMMIT_THREADS
    return 1


def commit_policy(props: Mapping[str, str]) -> str:
    """``full``, ``successful`` or ``partial``."""
    return CommitSettings.load(props).commit_policy


def job_publisher(props: Mapping[str, str], settings: CommitSettings) -> DataPublisher:
    """The job's publisher (data.publisher.job.type, else data.publisher.type), initialised."""
    name = settings.job_publisher or settings.publisher or DEFAULT_PUBLISHER
    key = "data.publisher.job.type" if settings.job_publisher else "data.publisher.type"
    publisher = instantiate(name, key, DataPublisher)
    if isinstance(publisher, Initializable):
        publisher.init(dict(props))
    return publisher  # type: ignore[return-value]


def group_by_urn(task_states: list[TaskState]) -> dict[str, list[TaskState]]:
    groups: dict[str, list[TaskState]] = {}
    for task in task_states:
        groups.setdefault(task.dataset_urn, []).append(task)
    return groups


@dataclass
class LoggedCommit:
    """A dataset's commit sequence waiting to be logged with others of its batch, and then run."""

    sequence: CommitSequence
    result: DatasetResult
    dataset: DatasetState
    failed_tasks: int


def commit_dataset(run: JobRun, urn: str, tasks: list[TaskState], end_time: int,
                   batch: list[LoggedCommit] | None = None) -> DatasetResult:
    """Publish and persist one dataset of ``run`` according to the job commit policy.

    With a commit-sequence store (EXACTLY_ONCE, the default) the moves and the new state are logged as one
    commit sequence before any of them is made; otherwise data is published, then the state saved. With
    ``batch`` the sequence is added to it instead, for :func:`commit_batch` to log and run.
    """
    dataset, result, failed = _open_dataset(run, urn, tasks, end_time)
    if _refused(run, urn, tasks, failed, dataset, result):
        return result
    successful = [t for t in tasks if t.working_state is WorkingState.SUCCESSFUL]
    steps = _publish(run, urn, successful, result)
    not_committed = _settle_tasks(run, tasks, dataset, result)
    consumed = _advance_progress(run, urn, tasks, dataset, result)
    if run.store is not None and steps is not None and run.sequences is not None and not result.error:
        sequence = _commit_sequence(run, urn, steps, dataset, result, consumed)
        if batch is not None:
            batch.append(LoggedCommit(sequence, result, dataset, len(not_committed)))
            return result
        if not _log_and_run(run, urn, sequence, result):
            return result
        result.persisted, result.saved = True, dataset
    elif run.store is not None:
        run.store.persist_dataset_state(dataset, urn)
        if consumed and run.startpoints is not None:
            run.startpoints.remove_ids(run.job_name, urn, set(consumed))
        result.persisted, result.saved = True, dataset
    _log_committed(result, dataset, len(not_committed))
    return result


def _open_dataset(run: JobRun, urn: str, tasks: list[TaskState],
                  end_time: int) -> tuple[DatasetState, DatasetResult, list[TaskState]]:
    """The dataset's new state, its result before anything is committed, and its failed tasks."""
    dataset = DatasetState(run.job_name, run.job_id, dataset_urn=urn, start_time=run.started_ms, end_time=end_time,
                           duration=end_time - run.started_ms, task_count=len(tasks), task_states=tasks)
    # skipped work units (workunit.skip) are kept in the state but neither fail nor commit (Gobblin's filter)
    failed = [t for t in tasks if t.working_state not in (WorkingState.SUCCESSFUL, WorkingState.SKIPPED)]
    result = DatasetResult(urn, RunningState.RUNNING, len(tasks), len(failed),
                           sum(int_value(t.get_prop("qualitychecker.rows.extracted")) for t in tasks), 0)
    result.quality = quality_lines(tasks)
    return dataset, result, failed


def _refused(run: JobRun, urn: str, tasks: list[TaskState], failed: list[TaskState], dataset: DatasetState,
             result: DatasetResult) -> bool:
    """Whether the dataset cannot commit at all (an earlier commit still pending, or a failed task under the
    ``full`` policy): then ``result`` says why and the state is kept; otherwise the dataset is marked to commit."""
    if run.sequences is not None and run.sequences.exists(run.job_name, urn):
        # an earlier run's commit of this dataset is still unfinished: committing over it could lose it
        dataset.state = result.state = RunningState.FAILED
        result.error = "an earlier run's commit of this dataset is still pending: nothing published, state kept"
        for task in tasks:
            task.backoff_actual_high_watermark()
        log.error("dataset_blocked_by_pending_commit", dataset=urn)
        return True
    if run.commit_settings.commit_policy == "full" and failed:
        previous = run.previous.get(urn)
        dataset.state = result.state = RunningState.FAILED
        dataset.job_failures = (previous.job_failures if previous else 0) + 1
        result.error = (f"{len(failed)} of {len(tasks)} tasks failed under job.commit.policy=full: nothing published, "
                        f"state kept; first: {failure_line(failed[0])}")
        log.error("dataset_not_committed", dataset=urn, failed_tasks=len(failed), policy="full")
        return True
    dataset.state = RunningState.SUCCESSFUL
    dataset.job_failures = 0
    return False


def _publish(run: JobRun, urn: str, successful: list[TaskState], result: DatasetResult) -> list[CommitStep] | None:
    """Publish the successful tasks' output — or, with an exactly-once publisher, plan the steps that will —
    and mark those tasks COMMITTED. The steps to log, or None when publishing is not logged (or failed, which
    ``result.error`` then says: a publisher's failure fails the dataset, not the process)."""
    steps: list[CommitStep] | None = None
    try:
        if successful:
            steps = _planned_steps(run, urn, successful, result)
        elif run.sequences is not None and run.store is not None:
            steps = []
        for task in successful:
            task.working_state = WorkingState.COMMITTED
    except GobblinPyError as exc:
        trace, message = redact("".join(traceback.format_exception(exc))), redact(str(exc))  # no credential kept
        for task in successful:
            task.set_prop("task.failure.exception", trace)
        result.error = f"publishing failed: {message}"
        if isinstance(exc, UsageError):  # the job's configuration or its data must change: a rerun cannot help
            result.usage_errors.append(f"publishing: {message}")
        result.published = [] if steps is None else result.published  # nothing was moved by a plan refused
        log.error("publish_failed", dataset=urn, error=message)
    return steps


def _planned_steps(run: JobRun, urn: str, successful: list[TaskState],
                   result: DatasetResult) -> list[CommitStep] | None:
    """An exactly-once publisher's planned steps with its check after the moves; otherwise the output is
    published now and there are no steps."""
    with plugin_boundary("the publisher"):
        publisher = job_publisher(run.props, run.commit_settings)
        if run.sequences is None or run.store is None or not isinstance(publisher, ExactlyOncePublisher):
            if run.sequences is not None:
                log.warning("publisher_not_exactly_once", dataset=urn, publisher=type(publisher).__name__,
                            note="it has no plan(): data is published, then the state saved (at least once)")
            result.published = publisher.publish(successful)
            return None
        planned = list(publisher.plan(successful))
        result.published = list(publisher.final_dirs)
    # what it publishes is checked once moved, before the state is saved
    check = publisher.published_check(urn, successful, planned) if isinstance(publisher, ChecksPublishing) else None
    return planned if check is None else _checked_after_moves(planned, check)


def _settle_tasks(run: JobRun, tasks: list[TaskState], dataset: DatasetState,
                  result: DatasetResult) -> list[TaskState]:
    """Roll back the watermarks of the tasks that did not commit, settle the dataset's state and fill ``result``
    with what committed; the tasks not committed."""
    dataset.state = RunningState.COMMITTED
    not_committed = [t for t in tasks if t.working_state not in (WorkingState.COMMITTED, WorkingState.SKIPPED)]
    for task in not_committed:
        task.backoff_actual_high_watermark()
    settings = run.commit_settings
    if not_committed and (settings.commit_policy == "full" or settings.partial_fails_job or result.error):
        dataset.state = RunningState.FAILED
    result.state = dataset.state
    result.failed_tasks = len(not_committed)
    result.records_written = sum(int_value(t.get_prop("writer.records.written")) for t in tasks
                                 if t.working_state is WorkingState.COMMITTED)
    result.quality = quality_lines(tasks)
    result.low_watermarks = [t.workunit.low_watermark() for t in tasks]
    result.high_watermarks = [t.actual_high_watermark() for t in tasks]
    result.partitions = [partition_ids(t.workunit.get_prop) for t in tasks]
    return not_committed


def _advance_progress(run: JobRun, urn: str, tasks: list[TaskState], dataset: DatasetState,
                      result: DatasetResult) -> list[str]:
    """For a dataset that committed: its replay progress advanced, and the startpoints its work units were
    planned from (which it consumes; one that failed keeps them)."""
    if result.error or dataset.state is not RunningState.COMMITTED:
        return []
    progress.advance(dataset, run.previous.get(urn), tasks, run.replay_settings.max_pairs)
    return sorted({i for task in tasks for i in applied_ids(task)})


def _commit_sequence(run: JobRun, urn: str, steps: list[CommitStep], dataset: DatasetState,
                     result: DatasetResult, consumed: list[str]) -> CommitSequence:
    """The dataset's commit sequence: the publisher's steps, the startpoints it consumes, then its state."""
    assert run.store is not None
    if consumed and run.startpoints is not None:  # exactly-once covers the startpoints this commit used
        steps = [*steps, StartpointsConsumedStep(run.startpoints.url, run.props.get("state.store.fs.uri"),
                                                 run.job_name, urn, consumed)]
    if any(isinstance(step, ReportsCommit) for step in steps):  # a table: the state says which one
        dataset.set_prop(PUBLISHED_KEY, json.dumps(result.published))
    return CommitSequence(run.job_name, urn, run.job_id, [*steps, DatasetStateStep(run.store, urn, dataset)])


def _log_and_run(run: JobRun, urn: str, sequence: CommitSequence, result: DatasetResult) -> bool:
    """Log the sequence, run it, then drop it from the log; False (``result`` failed, the sequence left logged
    for the next run to finish) when a step fails."""
    assert run.sequences is not None
    boundary(f"{urn}:before_log")
    with phase("commit.log"):
        run.sequences.put(sequence)
    boundary(f"{urn}:logged")
    try:
        sequence.execute(fresh=True)
    except Exception as exc:  # noqa: BLE001 - the logged sequence is finished by the next run
        result.commit_pending = True
        result.state = RunningState.FAILED
        result.error = pending_error(exc)
        log.error("commit_interrupted", dataset=urn, error=str(exc))
        return False
    result.commits = commits_of(sequence)
    with phase("commit.unlog"):
        run.sequences.delete(sequence)
    boundary(f"{urn}:done")
    return True


def commits_of(sequence: CommitSequence) -> list[str]:
    """What the steps of a sequence that ran made, as they say it (:class:`ReportsCommit`)."""
    return [made for step in sequence.steps if isinstance(step, ReportsCommit) and (made := step.committed())]


def _checked_after_moves(planned: list[CommitStep], check: CommitStep) -> list[CommitStep]:
    """``planned`` with ``check`` just before the first step after the file moves that makes the files visible
    elsewhere (a :class:`ReportsCommit`: a table's snapshot, a metastore's table), so that it runs only once they
    are known to hold their records; at the end when there is none."""
    moved = max((i for i, step in enumerate(planned) if isinstance(step, FsRenameStep)), default=-1)
    at = next((i for i, step in enumerate(planned) if i > moved and isinstance(step, ReportsCommit)), len(planned))
    return [*planned[:at], check, *planned[at:]]


def _log_committed(result: DatasetResult, dataset: DatasetState, failed_tasks: int) -> None:
    log.info("dataset_committed", dataset=result.urn, state=dataset.state.value,
             committed_tasks=result.tasks - failed_tasks, failed_tasks=failed_tasks,
             records_written=result.records_written)


def commit_batch(run: JobRun, number: int, commits: list[LoggedCommit]) -> None:
    """Log the sequences of several datasets as one batch (one file, one fsync), run each, then drop the batch;
    a sequence that fails stays logged (alone in the batch file) for the next run to finish. Stopped by a
    signal, the commit under way finishes and no other starts: those not started leave the log unrun."""
    sequences = run.sequences
    if not commits or sequences is None:
        return
    name = f"batch{number}"
    boundary(f"{name}:before_log")
    with phase("commit.log"):
        path = sequences.put_batch(run.job_name, run.job_id, number, [c.sequence for c in commits])
    boundary(f"{name}:logged")
    left: list[CommitSequence] = []
    for commit in commits:  # the states' folder is fsynced once, after all of them, before the log goes
        for step in commit.sequence.steps:
            if isinstance(step, DatasetStateStep):
                step.sync_folder = False
    # on local disk the batch's writes are made durable together (group_sync): each commit's steps run, and
    # what must wait for durability (a rename over a state, a published file's source unlinked) runs at the flush
    group = GroupSync()
    started = []
    with group.active():
        for commit in commits:
            if interrupts.cancelled():  # none of its steps ran: dropping it from the log is as if never logged
                _not_started(commit)
                continue
            try:
                with group.owned_by(commit):
                    commit.sequence.execute(fresh=True)
            except Exception as exc:  # noqa: BLE001 - the logged sequence is finished by the next run
                group.discard(commit)
                _left_pending(commit, exc, left)
                continue
            started.append(commit)
    with phase("commit.sync"):
        failures = {id(owner): exc for owner, exc in group.flush(lambda: boundary(f"{name}:synced_one"))}
    for commit in started:
        if id(commit) in failures:
            _left_pending(commit, failures[id(commit)], left)
        else:
            commit.result.persisted, commit.result.saved = True, commit.dataset
            commit.result.commits = commits_of(commit.sequence)
    with phase("commit.unlog"):
        if run.store is not None:
            run.store.sync_job_dir(run.job_name)
        sequences.finish_batch(path, [c.sequence for c in commits], left)
    boundary(f"{name}:done")
    for commit in commits:
        if commit.result.persisted:
            _log_committed(commit.result, commit.dataset, commit.failed_tasks)


def _left_pending(commit: LoggedCommit, exc: BaseException, left: list[CommitSequence]) -> None:
    """A commit that failed part way: it stays logged, for the next run to finish before it pulls more."""
    left.append(commit.sequence)
    result = commit.result
    result.commit_pending = True
    result.state = RunningState.FAILED
    result.error = pending_error(exc)
    log.error("commit_interrupted", dataset=result.urn, error=str(exc))


def pending_error(exc: BaseException) -> str:
    """What a logged commit that could not finish says: why, and what the next run does about it."""
    if isinstance(exc, RecordsLost):
        return (f"{exc}; the state is not saved and the commit stays logged: the next run checks the published "
                "files again, and the dataset sits out until they hold what was written")
    return f"commit interrupted ({exc}); the next run finishes it before pulling more"


def _not_started(commit: LoggedCommit) -> None:
    """A logged commit the run was stopped before starting: its tasks back to uncommitted, its dataset failed."""
    result = commit.result
    for task in commit.dataset.all_task_states():
        if task.working_state is WorkingState.COMMITTED:
            task.working_state = WorkingState.SUCCESSFUL
    result.state, result.error = RunningState.FAILED, "not committed: the run was interrupted"
    result.failed_tasks, result.records_written, result.published = result.tasks, 0, []
