"""The driver: one job run from loaded properties to committed datasets and an exit code.

load config → job id ``job_<name>_<millis>`` → previous dataset states from the store → Source work units →
tasks on the engine → commit per dataset → persist → clean up staging → summary.
"""

from __future__ import annotations

import posixpath
import re
import time
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Mapping
from dataclasses import dataclass, field

from gobblin_py import fs as fsutil
from gobblin_py import fs_settings
from gobblin_py.api import Source
from gobblin_py.errors import GobblinPyError, UsageError
from gobblin_py.logs import get_logger
from gobblin_py.plugins import canonical_plugin_props, instantiate
from gobblin_py.runtime import interrupts
from gobblin_py.runtime.commit import DatasetResult, commit_dataset, group_by_urn
from gobblin_py.runtime.commit_sequence import EXACTLY_ONCE, CommitSequenceStore, DeliverySettings
from gobblin_py.runtime.engines import make_engine, task_groups
from gobblin_py.runtime.job_settings import CommitSettings, JobSettings
from gobblin_py.runtime.locks import JobLock, LockSettings
from gobblin_py.runtime.validation import check_job
from gobblin_py.state.store import StateStoreSettings
from gobblin_py.state import FsDatasetStateStore, RunningState, SourceState, State, TaskState, WorkingState

log = get_logger(__name__)

BRANCH_DIR_KEY = re.compile(r"^writer\.(staging|output)\.dir(\.\d+)?$")

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_PARTIAL = 3


@dataclass
class JobResult:
    """The outcome of a run: per-dataset results, the job state and the process exit code."""

    job_name: str
    job_id: str
    state: RunningState
    datasets: list[DatasetResult] = field(default_factory=list)
    seconds: float = 0.0
    engine: str = ""
    message: str = ""

    @property
    def exit_code(self) -> int:
        if self.state is RunningState.FAILED or any(d.state is RunningState.FAILED for d in self.datasets):
            return EXIT_FAILED
        if any(d.failed_tasks for d in self.datasets):
            return EXIT_PARTIAL
        return EXIT_OK


def rewrite_dirs(props: dict[str, str], job_name: str, job_id: str) -> None:
    """Per-run working directories under the configured roots (Gobblin's JobContext rewrite, §6.2)."""
    # branch-suffixed dirs too (Gobblin leaves them shared across runs, where a failed run's files could linger)
    for key in [k for k in props if BRANCH_DIR_KEY.match(k)]:
        if props.get(key):
            props[key] = posixpath.join(props[key], job_name, job_id)
    root = props.get("task.data.root.dir")
    if root:
        root = posixpath.join(root, job_name, job_id)
        props["task.data.root.dir"] = root
        props.setdefault("writer.staging.dir", posixpath.join(root, "task-staging"))
        props.setdefault("writer.output.dir", posixpath.join(root, "task-output"))
    if not props.get("writer.staging.dir") or not props.get("writer.output.dir"):
        raise UsageError("writer.staging.dir and writer.output.dir are not set: set them, or task.data.root.dir")


def _writer_fs_uri(props: Mapping[str, str], key: str) -> str | None:
    """The filesystem of a directory key: ``writer.fs.uri.N`` for a branch's ``writer.*.dir.N``."""
    match = BRANCH_DIR_KEY.match(key)
    branch = match.group(2)[1:] if match and match.group(2) else None
    return (props.get(f"writer.fs.uri.{branch}") if branch else None) or props.get("writer.fs.uri")


def _urns(unit, default_urn: str) -> list[str]:
    members = getattr(unit, "work_units", None) or [unit]
    return [member.get_prop("dataset.urn", default_urn) for member in members]


class JobLauncher:
    """Runs one job: ``JobLauncher(props, engine="spark").run()``."""

    def __init__(self, props: Mapping[str, str], engine: str = "spark", master: str | None = None,
                 strict: bool = False) -> None:
        check = check_job(props, strict=strict)  # before any work: every configuration problem at once
        for warning in check.warnings:
            log.warning("config_warning", problem=warning)
        check.raise_for_errors()
        fs_settings.apply(props)  # the job's S3 / fsspec settings, for every filesystem opened from here on
        # executors import plugins by module path: they need no registry of names
        self.props = canonical_plugin_props(props)
        self.settings = JobSettings.load(self.props)
        self.engine = make_engine(engine, master)
        self.job_name = self.settings.name

    def _store(self) -> FsDatasetStateStore | None:
        if not StateStoreSettings.load(self.props).enabled:
            return None
        return FsDatasetStateStore.from_properties(self.props)

    def run(self) -> JobResult:
        started = time.time()
        millis = int(started * 1000)
        delivery = DeliverySettings.load(self.props)
        if self.settings.job_id and delivery.semantics == EXACTLY_ONCE:
            raise UsageError("job.id is set: with exactly-once commits every run needs its own id "
                             "(job_<name>_<millis>); remove job.id, or use AT_LEAST_ONCE delivery")
        job_id = self.settings.job_id or f"job_{self.job_name}_{millis}"
        props = dict(self.props)
        props["job.id"] = job_id
        roots = {k: v for k, v in props.items() if (BRANCH_DIR_KEY.match(k) or k == "task.data.root.dir") and v}
        rewrite_dirs(props, self.job_name, job_id)
        result = JobResult(self.job_name, job_id, RunningState.RUNNING, engine=self.engine.name)
        lock = JobLock(props, self.job_name, job_id) if LockSettings.load(props).enabled else None
        with interrupts.handle_signals():
            if lock is not None:
                with interrupts.shielded():  # a signal while taking the lock stops the run once it is held
                    lock.acquire()
            try:
                interrupts.raise_if_interrupted()
                log.info("job_started", job=self.job_name, job_id=job_id, engine=self.engine.name)
                self._lock = lock
                return self._run(props, job_id, millis, roots, result)
            finally:
                self._finish(lock, result, started, job_id)

    def _finish(self, lock: JobLock | None, result: JobResult, started: float, job_id: str) -> None:
        with interrupts.shielded():  # releasing the lock is never cut short by a second signal
            if lock is not None:
                lock.release()
            if result.state is RunningState.RUNNING:  # an exception ended the run
                result.state = RunningState.FAILED
            result.seconds = time.time() - started
            log.info("job_finished", job=self.job_name, job_id=job_id, state=result.state.value,
                     seconds=round(result.seconds, 3))

    def _run(self, props: dict[str, str], job_id: str, millis: int, roots: dict[str, str], result: JobResult) -> JobResult:
        store = self._store()
        sequences = None
        if store is not None and DeliverySettings.load(props).semantics == EXACTLY_ONCE:
            sequences = CommitSequenceStore.for_job(props, store)
        elif store is not None:
            left = list(CommitSequenceStore.for_job(props, store).pending(self.job_name))
            if left:
                raise UsageError(f"{len(left)} exactly-once commit(s) of earlier runs are unfinished "
                                 f"(dataset {left[0].urn!r}, run {left[0].job_id}): run once with "
                                 "gobblin.runtime.delivery.semantics=EXACTLY_ONCE to finish them first")
        self._ensure_lock()
        with interrupts.deferred("earlier runs' unfinished commits were finished first"):
            blocked = self._finish_pending_commits(props, sequences, result)
        self._remove_old_runs(props, roots, job_id, keep={job for job in blocked.values()})
        previous = store.get_latest_dataset_states_by_urns(self.job_name) if store is not None else {}
        source: Source = instantiate(props["source.class"], "source.class", Source)  # type: ignore[assignment]
        source_state = SourceState(props, previous_dataset_states=previous)
        try:
            units = source.get_workunits(source_state)
        except GobblinPyError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise GobblinPyError(f"source.class={props['source.class']}: planning work units failed: {exc}") from exc
        if units is None:
            raise GobblinPyError(f"source.class={props['source.class']}: returned no work units (failure)")
        default_urn = props.get("dataset.urn", "")
        if blocked:
            units = [u for u in units if not (set(_urns(u, default_urn)) & set(blocked))]
        try:
            if not units:
                failed = any(d.state is RunningState.FAILED for d in result.datasets)
                result.state = RunningState.FAILED if failed else RunningState.COMMITTED
                result.message = "nothing new to pull"
                log.info("job_nothing_to_do", job=self.job_name, job_id=job_id)
                return result
            self._carry_previous_schemas(units, previous, default_urn)
            groups = task_groups(units, self.job_name, millis)
            skipped, runnable = [], []
            for group in groups:
                kept = []
                for task_id, unit in group.tasks:
                    if unit.get_prop_as_bool("workunit.skip"):
                        state = TaskState(job_id, task_id, unit, start_time=millis, end_time=millis)
                        state.working_state = WorkingState.SKIPPED
                        skipped.append(state)
                    else:
                        kept.append((task_id, unit))
                if kept:
                    group.tasks = kept
                    runnable.append(group)
            log.info("tasks_planned", job=self.job_name, tasks=sum(len(g.tasks) for g in runnable), skipped=len(skipped))
            task_states = self.engine.run(props, job_id, runnable) if runnable else []
            job_state = State(props)
            for task in task_states + skipped:  # lookups fall through to the job's properties, as in Gobblin
                task.job_state = job_state
            ended = int(time.time() * 1000)
            datasets = sorted(group_by_urn(task_states + skipped).items())

            self._ensure_lock()  # a run that lost its lock commits nothing

            def commit(item: tuple[str, list[TaskState]]) -> DatasetResult:
                urn, tasks = item
                if interrupts.cancelled():  # stopped by a signal: commits under way finish, none starts
                    return DatasetResult(urn, RunningState.FAILED, len(tasks), len(tasks), 0, 0,
                                         error="not committed: the run was interrupted")
                return commit_dataset(props, self.job_name, job_id, urn, tasks, millis, ended, store,
                                      previous.get(urn), sequences)

            # datasets commit independently: in parallel unless job.commit.parallelize=false
            commits = CommitSettings.load(props)
            workers = commits.commit_threads if commits.parallel_commit and len(datasets) > 1 else 1
            with interrupts.deferred("the dataset commits under way finished; no other was started"), \
                    ThreadPoolExecutor(max_workers=workers, thread_name_prefix="gpy-commit") as pool:
                result.datasets.extend(pool.map(commit, datasets))
            failed = any(d.state is RunningState.FAILED for d in result.datasets)
            result.state = RunningState.FAILED if failed else RunningState.COMMITTED
            return result
        finally:
            try:
                source.shutdown(source_state)
            finally:
                # a commit left for the next run still needs this run's task output
                self._cleanup(props, keep_output=any(d.commit_pending for d in result.datasets))

    def _ensure_lock(self) -> None:
        lock = getattr(self, "_lock", None)
        if lock is not None:
            lock.ensure_held()

    def _finish_pending_commits(self, props: dict[str, str], sequences: CommitSequenceStore | None,
                                result: JobResult) -> dict[str, str]:
        """Finish the commits an earlier run logged but did not complete; returns {urn: job id} of those that
        still fail after ``gobblin.runtime.commit.sequence.max.retries`` tries (their datasets sit this run out)."""
        if sequences is None:
            return {}
        retries = DeliverySettings.load(props).max_retries
        blocked: dict[str, str] = {}
        for sequence in sequences.pending(self.job_name):
            error = None
            for attempt in range(max(1, retries)):
                if attempt:
                    time.sleep(min(2.0, 0.2 * attempt))
                try:
                    sequence.execute()
                    sequences.delete(sequence)
                    error = None
                    break
                except Exception as exc:  # noqa: BLE001 - reported below, per dataset
                    error = exc
            if error is None:
                log.info("pending_commit_finished", dataset=sequence.urn, job_id=sequence.job_id)
                continue
            blocked[sequence.urn] = sequence.job_id
            message = (f"the commit of run {sequence.job_id} could not be finished after {retries} tries ({error}); "
                       "this dataset is skipped until it can")
            log.error("pending_commit_failed", dataset=sequence.urn, job_id=sequence.job_id, error=str(error))
            result.datasets.append(DatasetResult(sequence.urn, RunningState.FAILED, 0, 0, 0, 0, error=message))
        return blocked

    def _remove_old_runs(self, props: dict[str, str], roots: dict[str, str], job_id: str, keep: set[str]) -> None:
        """Delete staging and task output that crashed runs left behind (their commits are finished by now);
        a run whose commit is still pending keeps its files."""
        for key, root in roots.items():
            fs, path = fsutil.open_fs(posixpath.join(root, self.job_name), _writer_fs_uri(props, key))
            try:
                names = fsutil.list_dirs(fs, path)
            except OSError as exc:  # e.g. not a directory: the tasks will report it properly
                log.warning("old_run_files_unlisted", directory=path, error=str(exc))
                continue
            for name in names:
                if name != job_id and name not in keep and name.startswith(f"job_{self.job_name}_"):
                    log.info("old_run_files_removed", directory=posixpath.join(path, name))
                    fs.rm(posixpath.join(path, name), recursive=True)

    @staticmethod
    def _cleanup(props: Mapping[str, str], keep_output: bool = False) -> None:
        """Delete this run's staging and task-output directories (published data has moved out already)."""
        for key in [k for k in props if BRANCH_DIR_KEY.match(k)]:
            if keep_output and key.startswith("writer.output.dir"):
                continue
            fs, path = fsutil.open_fs(props[key], _writer_fs_uri(props, key))
            try:
                if fs.exists(path):
                    fs.rm(path, recursive=True)
            except OSError as exc:
                log.warning("run_files_not_removed", directory=path, error=str(exc))

    @staticmethod
    def _carry_previous_schemas(units: list, previous: Mapping, default_urn: str) -> None:
        """Give each work unit its dataset's last output schemas, for SchemaCompatibilityPolicy."""
        for unit in units:
            for member in getattr(unit, "work_units", None) or [unit]:
                state = previous.get(member.get_prop("dataset.urn", default_urn))
                tasks = state.all_task_states() if state is not None else []
                for key, value in (tasks[0].properties.items() if tasks else ()):
                    if key == "extract.schema" or key.startswith("extract.schema."):
                        member.set_prop(f"previous.{key}", value)
