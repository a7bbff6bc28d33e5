"""The driver: one job run from loaded properties to committed datasets and an exit code.

check the configuration → job id ``job_<name>_<millis>`` and the run's folders → take the job lock → finish
commits earlier runs left → remove their leftover files (run folders, temporary copies) → previous dataset
states → the Source plans work units → tasks on the engine → each dataset committed per the commit policy →
this run's files removed.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext

from gobblin_py.io import fs_settings
from gobblin_py.io.crash_points import phase
from gobblin_py.runtime.commit.boundary import plugin_boundary
from gobblin_py.runtime.commit.commit_sequence import CommitSequenceStore
from gobblin_py.runtime.commit.dataset_result import DatasetResult, describe_outputs
from gobblin_py.runtime.commit.datasets import (
    LoggedCommit,
    commit_batch,
    commit_dataset,
    commit_threads,
    group_by_urn,
    job_publisher,
)
from gobblin_py.runtime.commit.folder_owner import FolderClaims, check_folder_owners
from gobblin_py.runtime.commit.history import RunRecorder
from gobblin_py.runtime.commit.job_result import EXIT_DATA, EXIT_FAILED, EXIT_OK, EXIT_PARTIAL, EXIT_USAGE, JobResult
from gobblin_py.runtime.commit.job_run import JobRun
from gobblin_py.runtime.commit.published_marks import (
    check_state_not_lost,
    job_file_of,
    mark_published,
    marks_final_folders,
)
from gobblin_py.runtime.commit.recovery import finish_pending_commits, remove_temporary_files
from gobblin_py.runtime.commit.replace_check import check_replaced_folders
from gobblin_py.runtime.commit.sequence_settings import CommitSequenceSettings
from gobblin_py.runtime.engines import choose_engine, make_engine
from gobblin_py.runtime.engines.base import TaskGroup, task_groups
from gobblin_py.runtime.execute import signals
from gobblin_py.runtime.execute.job_settings import JobSettings
from gobblin_py.runtime.execute.run_progress import TASKS_PLANNED
from gobblin_py.runtime.monitor import RunInfo, RunMonitor, monitor_for
from gobblin_py.runtime.plan.empty_plan import empty_run, explain
from gobblin_py.runtime.plan.implied_keys import with_source_defaults
from gobblin_py.runtime.plan.locks import JobLock, LockSettings
from gobblin_py.runtime.plan.run_folders import RunFolders
from gobblin_py.runtime.plan.startpoint_checks import check_stored
from gobblin_py.runtime.plan.validation import check_job
from gobblin_py.sdk import interrupts
from gobblin_py.sdk.commit import EXACTLY_ONCE, DeliverySettings, PreflightPublisher
from gobblin_py.sdk.contracts import Source
from gobblin_py.sdk.errors import GobblinPyError, UsageError
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.plugins import canonical_plugin_props, instantiate
from gobblin_py.sdk.retry_budget import close_budget, open_budget
from gobblin_py.sdk.run_states import SourceState
from gobblin_py.sdk.states import MultiWorkUnit, RunningState, State, TaskState, WorkingState, WorkUnitState
from gobblin_py.store import open_state_store
from gobblin_py.store.startpoints import StartpointStore, applied_ids
from gobblin_py.store.store import StateStoreSettings
from gobblin_py.store.summary_index import StateIndex

log = get_logger(__name__)

__all__ = ["EXIT_DATA", "EXIT_FAILED", "EXIT_OK", "EXIT_PARTIAL", "EXIT_USAGE", "JobLauncher", "JobResult", "open_source"]


def _members(unit) -> list:
    return unit.work_units if isinstance(unit, MultiWorkUnit) else [unit]


def open_source(run: JobRun, startpoints: bool = True) -> tuple[Source, SourceState]:
    """The job's Source and the state it plans from: each dataset's previous state and (unless ``startpoints`` is
    false) the operators' startpoints (refused, before any work, when the source cannot start where they ask)."""
    name = run.props["source.class"]
    source: Source = instantiate(name, "source.class", Source)  # type: ignore[assignment]
    if run.store is not None:
        run.previous = run.store.get_latest_dataset_states_by_urns(run.job_name)
    state = SourceState(run.props, previous_dataset_states=run.previous)
    if run.store is None or not startpoints:
        return source, state
    run.startpoints = StartpointStore.for_job(run.props)
    points = run.startpoints.all(run.job_name)
    if points:  # each must fit the source (a file written by hand or an older gpy), naming its file if not
        check_stored(type(source), run.props, run.startpoints, run.job_name, points)
        state.startpoints = points
    return source, state


def log_startpoints(state: SourceState, units: list, default_urn: str) -> None:
    """Say which startpoints this run applies, and which wait (their dataset planned nothing this run)."""
    if not state.startpoints:
        return
    applied: dict[str, set[str]] = {}
    for unit in units:
        for member in _members(unit):
            applied.setdefault(member.get_prop("dataset.urn", default_urn), set()).update(applied_ids(member))
    for urn, points in state.startpoints.items():
        used = points.ids() & applied.get(urn, set())
        if used:
            log.info("startpoints_applied", dataset=urn, startpoints=sorted(used))
        unused = {p: point for p, point in points.by_partition.items() if point.id not in used}
        if unused and urn in applied:  # the dataset has work this run, yet none of it starts from these
            log.warning("startpoints_unused", dataset=urn,
                        startpoints={p or "(dataset)": point.describe() for p, point in sorted(unused.items())},
                        reason="the dataset's work units of this run do not start from them (a partition it does "
                               "not have?): they stay until used, or removed with `gpy state startpoint clear`")
        elif unused:
            log.info("startpoints_kept", dataset=urn, startpoints=sorted(p.id for p in unused.values()),
                     reason="the dataset has no work this run: they wait for its next")


class JobLauncher:
    """Runs one job: ``JobLauncher(props, engine="spark").run()``."""

    def __init__(self, props: Mapping[str, str], engine: str = "spark", master: str | None = None,
                 strict: bool = False, remote: str | None = None, republish: bool = False,
                 lenient: bool = False) -> None:
        props = with_source_defaults(props)
        check = check_job(props, strict=strict, lenient=lenient)  # before any work: every configuration problem at once
        for warning in check.warnings:
            log.warning("config_warning", problem=warning)
        check.raise_for_errors()
        fs_settings.apply(props)  # the job's S3 / fsspec settings, for every filesystem opened from here on
        # executors import plugins by module path: they need no registry of names
        self.props = canonical_plugin_props(props)
        self.settings = JobSettings.load(self.props)
        self.engine = make_engine(*choose_engine(engine, master, remote, self.props))
        self.job_name = self.settings.name
        self.republish = republish  # a run without state may publish into a final folder the job published to
        self.job_file = job_file_of(props)
        self.marks = marks_final_folders(self.props)  # its final folders name the job that published there
        self._lock: JobLock | None = None

    def run(self) -> JobResult:
        started = time.time()
        millis = int(started * 1000)
        if self.settings.job_id and DeliverySettings.load(self.props).semantics == EXACTLY_ONCE:
            raise UsageError("job.id is set: with exactly-once commits every run needs its own id "
                             "(job_<name>_<millis>); remove job.id, or use AT_LEAST_ONCE delivery")
        job_id = self.settings.job_id or f"job_{self.job_name}_{millis}"
        folders = RunFolders({**self.props, "job.id": job_id}, self.job_name, job_id)
        run = JobRun(folders.job_props(), self.job_name, job_id, millis)
        result = JobResult(self.job_name, job_id, RunningState.RUNNING, engine=self.engine.name)
        self._lock = JobLock(run.props, self.job_name, job_id) if LockSettings.load(run.props).enabled else None
        open_budget(job_id, run.props)  # every retry loop of the run, planning's too, waits within it
        with signals.handle_signals():
            if self._lock is not None:
                # a signal while taking the lock stops the run once it is held
                with signals.shielded(), phase("lock"):
                    self._lock.acquire()
            failure: BaseException | None = None
            recorder = None
            monitor: RunMonitor | None = None
            try:
                with signals.shielded():
                    recorder = RunRecorder.for_run(run, self.engine.name, lock_held=self._lock is not None)
                    if recorder is not None:
                        recorder.started()
                    monitor = monitor_for(RunInfo(self.job_name, job_id, self.engine.name, millis, run.props))
                    monitor.started()
                signals.raise_if_interrupted()
                log.info("job_started", job=self.job_name, job_id=job_id, engine=self.engine.name)
                return self._run(run, folders, result)
            except BaseException as exc:
                # a library cut short by the signal (py4j, PySpark) raises an error of its own: the run was stopped
                failure = signals.as_stop(exc) or exc
                if failure is not exc:
                    raise failure from None
                raise
            finally:
                self._finish(result, started, recorder, failure, monitor)

    def _finish(self, result: JobResult, started: float, recorder: RunRecorder | None,
                failure: BaseException | None, monitor: RunMonitor | None = None) -> None:
        with signals.shielded():  # recording and releasing the lock are never cut short by a second signal
            if result.state is RunningState.RUNNING:  # an exception ended the run
                result.state = RunningState.FAILED
            result.seconds = time.time() - started
            if recorder is not None:  # before the lock goes: the next run must not take this run for killed
                recorder.finished(result, failure)
            if self._lock is not None:
                self._lock.release()
            if monitor is not None:  # metrics and lineage: bounded by their timeouts, a warning when not sent
                monitor.finished(result, failure)
            if isinstance(failure, signals.JobInterrupted):
                self.engine.stop()  # a stopped run leaves no process behind (Spark's JVM)
            close_budget(result.job_id)
            log.info("job_finished", job=self.job_name, job_id=result.job_id, state=result.state.value,
                     seconds=round(result.seconds, 3))

    def _run(self, run: JobRun, folders: RunFolders, result: JobResult) -> JobResult:
        self._open_store(run)
        self._ensure_lock()
        with signals.deferred("earlier runs' unfinished commits were finished first"):
            blocked, failed = finish_pending_commits(run)
        result.datasets.extend(failed)
        with phase("cleanup"):
            folders.remove_earlier_runs(keep=set(blocked.values()))
            remove_temporary_files(run)
        source, source_state = open_source(run)
        try:
            claims = None
            if self.marks:
                check_state_not_lost(run, self.job_file, self.republish)
                claims = check_folder_owners(run.props, self.job_name, self.job_file)
            units = self._plan(run, source, source_state, blocked)
            self._preflight(run, units)
            signals.raise_if_interrupted()
            if not units:
                first_run = not run.previous
                plan = explain(source, run.props["source.class"], first_run)
                empty = empty_run(plan, self.job_name, run.job_id, first_run, self.settings.fail_on_empty)
                failed_any = any(d.state is RunningState.FAILED for d in result.datasets)
                result.state = RunningState.FAILED if failed_any else RunningState.COMMITTED
                result.message, result.warnings = empty.message, empty.warnings
                return result
            runnable, skipped = self._task_groups(run, units)
            with phase("tasks"):
                task_states = self.engine.run(run.props, run.job_id, runnable) if runnable else []
            signals.raise_if_interrupted()  # stopped while tasks ran (a library may swallow the signal's error)
            folders.remove_staging()
            self._commit(run, task_states + skipped, result, claims)
            if self.marks and any(d.published for d in result.datasets):
                mark_published(run, self.job_file, [place for d in result.datasets for place in d.published])
            return result
        finally:
            try:
                with plugin_boundary(f"source.class={run.props['source.class']}: shutting down"):
                    source.shutdown(source_state)
            finally:
                # a commit left for the next run still needs this run's task output
                with phase("cleanup"):
                    folders.remove(keep_output=any(d.commit_pending for d in result.datasets))

    def _open_store(self, run: JobRun) -> None:
        """The state store and, for exactly-once delivery, the commit log (None when the job keeps no state)."""
        if not StateStoreSettings.load(run.props).enabled:
            return
        run.store = open_state_store(run.props)
        sequences = CommitSequenceStore.for_job(run.props, run.store)
        if DeliverySettings.load(run.props).semantics == EXACTLY_ONCE:
            run.sequences = sequences
            return
        left = list(sequences.pending(self.job_name))
        if left:
            raise UsageError(f"{len(left)} exactly-once commit(s) of earlier runs are unfinished "
                             f"(dataset {left[0].urn!r}, run {left[0].job_id}): run once with "
                             "gobblin.runtime.delivery.semantics=EXACTLY_ONCE to finish them first")

    def _plan(self, run: JobRun, source: Source, state: SourceState, blocked: dict[str, str]) -> list:
        """The Source's work units, without those of datasets whose earlier commit could not be finished."""
        name = run.props["source.class"]
        log.info("planning_started", job=self.job_name, source=name)
        with plugin_boundary(f"source.class={name}: planning work units"), phase("planning"):
            units = source.get_workunits(state)
        if units is None:
            raise GobblinPyError(f"source.class={name}: returned no work units (failure)")
        default_urn = run.props.get("dataset.urn", "")
        if blocked:
            units = [u for u in units if not {m.get_prop("dataset.urn", default_urn) for m in _members(u)} & set(blocked)]
        self._carry_previous_schemas(units, run.previous, default_urn)
        log_startpoints(state, units, default_urn)
        return units

    def _preflight(self, run: JobRun, units: list) -> None:
        """The publisher's check of its destinations against the planned work (:class:`PreflightPublisher`)."""
        if not units:
            return
        with plugin_boundary("the publisher"):
            publisher = job_publisher(run.props, run.commit_settings)
            if isinstance(publisher, PreflightPublisher):
                job = State(run.props)
                publisher.preflight([WorkUnitState(member, job_state=job) for unit in units for member in _members(unit)])

    def _task_groups(self, run: JobRun, units: list) -> tuple[list[TaskGroup], list[TaskState]]:
        """The groups of tasks to run, and the states of work units the Source marked ``workunit.skip``."""
        skipped, runnable = [], []
        for group in task_groups(units, self.job_name, run.started_ms):
            kept = []
            for task_id, unit in group.tasks:
                if unit.get_prop_as_bool("workunit.skip"):
                    state = TaskState(run.job_id, task_id, unit, start_time=run.started_ms, end_time=run.started_ms)
                    state.working_state = WorkingState.SKIPPED
                    skipped.append(state)
                else:
                    kept.append((task_id, unit))
            if kept:
                group.tasks = kept
                runnable.append(group)
        log.info(TASKS_PLANNED, job=self.job_name, tasks=sum(len(g.tasks) for g in runnable), skipped=len(skipped))
        return runnable, skipped

    def _commit(self, run: JobRun, task_states: list[TaskState], result: JobResult,
                claims: FolderClaims | None = None) -> None:
        """Commit each dataset on its own (in parallel unless ``job.commit.parallelize=false``), into final
        folders ``claims`` claimed for the job first."""
        job_state = State(run.props)
        for task in task_states:  # lookups fall through to the job's properties, as in Gobblin
            task.job_state = job_state
        ended = int(time.time() * 1000)
        datasets = sorted(group_by_urn(task_states).items())
        check_replaced_folders(datasets)  # before any dataset publishes
        self._ensure_lock()  # a run that lost its lock commits nothing
        if claims is not None and any(t.working_state is WorkingState.SUCCESSFUL for t in task_states):
            claims.claim()  # no file is published into a folder no job owns

        def commit(item: tuple[str, list[TaskState]]) -> DatasetResult:
            urn, tasks = item
            if interrupts.cancelled():  # stopped by a signal: commits under way finish, none starts
                outcome = DatasetResult(urn, RunningState.FAILED, len(tasks), len(tasks), 0, 0,
                                        error="not committed: the run was interrupted")
            else:
                outcome = commit_dataset(run, urn, tasks, ended)
            return describe_outputs(outcome, tasks, run.started_ms)

        def commit_chunk(numbered: tuple[int, list[tuple[str, list[TaskState]]]]) -> list[DatasetResult]:
            number, chunk = numbered  # datasets whose commit sequences are logged as one batch
            batch: list[LoggedCommit] = []
            outcomes = []
            for urn, tasks in chunk:
                if interrupts.cancelled():
                    outcome = DatasetResult(urn, RunningState.FAILED, len(tasks), len(tasks), 0, 0,
                                            error="not committed: the run was interrupted")
                else:
                    outcome = commit_dataset(run, urn, tasks, ended, batch)
                outcomes.append((outcome, tasks))
            commit_batch(run, number, batch)
            return [describe_outputs(outcome, tasks, run.started_ms) for outcome, tasks in outcomes]

        settings = run.commit_settings
        workers = commit_threads(run) if settings.parallel_commit and len(datasets) > 1 else 1
        size = min(CommitSequenceSettings.load(run.props).batch_size, -(-len(datasets) // workers)) if run.sequences else 1
        # one worker commits on this thread, where a signal is seen between two commits, not some time later
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="gpy-commit") if workers > 1 else None
        run_all = pool.map if pool is not None else map
        with signals.deferred("the dataset commits under way finished; no other was started"), \
                pool if pool is not None else nullcontext(), phase("commit.datasets"):
            if size > 1:  # many datasets per thread: their commit logs are written in batches
                chunks = enumerate(datasets[i:i + size] for i in range(0, len(datasets), size))
                result.datasets.extend(d for outcomes in run_all(commit_chunk, chunks) for d in outcomes)
            else:
                result.datasets.extend(run_all(commit, datasets))
        if claims is not None and any(d.published for d in result.datasets):
            claims.claim_replaced()
        saved = {d.urn: d.saved for d in result.datasets if d.saved is not None}
        if saved and run.store is not None:
            StateIndex(run.store, self.job_name).record(saved)
        failed = any(d.state is RunningState.FAILED for d in result.datasets)
        result.state = RunningState.FAILED if failed else RunningState.COMMITTED

    def _ensure_lock(self) -> None:
        if self._lock is not None:
            self._lock.ensure_held()

    @staticmethod
    def _carry_previous_schemas(units: list, previous: Mapping, default_urn: str) -> None:
        """Give each work unit its dataset's last output schemas, for SchemaCompatibilityPolicy."""
        for unit in units:
            for member in _members(unit):
                state = previous.get(member.get_prop("dataset.urn", default_urn))
                tasks = state.all_task_states() if state is not None else []
                for key, value in (tasks[0].properties.items() if tasks else ()):
                    if key == "extract.schema" or key.startswith("extract.schema."):
                        member.set_prop(f"previous.{key}", value)
