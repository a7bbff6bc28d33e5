"""One task, on an executor or a local thread, over Arrow batches:

extractor → ``converter.classes`` → pre-fork row policies → fork operator ─┬▶ branch 0: ``converter.classes.0`` → row policies.0 → writer.0
                                                                           └▶ branch 1: …

The task builds its plugins from the work unit's properties (falling back to the job's). When every branch
succeeded, each branch's task-level policies are evaluated and its writer commits its staged files into the
task output directory; if any branch failed, no branch commits. The TaskState that comes back holds Gobblin's
counters, the working state, the quality results and the actual high watermark the extractor set. A failed
attempt is retried up to ``task.maxretries`` times with fresh plugins (``task.retry.intervalinsec`` × attempt
seconds apart); staged output of a failed attempt is deleted.
"""

from __future__ import annotations

import json
import time
import traceback
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import pyarrow as pa

from gobblin_py.api import (
    BatchForkOperator,
    Closeable,
    Converter,
    DataWriterBuilder,
    Extractor,
    ForkBranchMismatchError,
    ForkOperator,
    Initializable,
    RecordForkOperator,
    Source,
)
from gobblin_py.config.branches import branch_key, fork_key
from gobblin_py.config.settings import Scope, Settings, setting
from gobblin_py.converters.record_adapter import RecordConverterAdapter
from gobblin_py.errors import GobblinPyError, UsageError
from gobblin_py.forks.identity import MAX_BRANCHES, IdentityForkOperator
from gobblin_py.logs import get_logger
from gobblin_py.plugins import instantiate
from gobblin_py.quality import task as task_quality
from gobblin_py.quality.row import RowChecker
from gobblin_py.runtime.fork import Branch
from gobblin_py.runtime.interrupts import TaskCancelled, check_cancelled, pause
from gobblin_py.state import State, TaskState, WorkingState, WorkUnit, WorkUnitState

log = get_logger(__name__)

DEFAULT_WRITER_BUILDER = "gobblin_py.writers.builder.FsDataWriterBuilder"
DEFAULT_FORK_OPERATOR = "gobblin_py.forks.identity.IdentityForkOperator"


@dataclass(frozen=True)
class TaskSettings(Settings):
    """The keys of a task: retries, the fork and its queues, the writer of each branch."""

    max_retries: int = setting("task.maxretries", default=5, minimum=0, maximum=100,
                               doc="retries of a failed task, each with fresh plugins (Gobblin's default)")
    retry_interval_s: float = setting("task.retry.intervalinsec", default=300.0, minimum=0, maximum=86400,
                                      doc="the k-th retry waits (k-1) times this many seconds")
    fork_operator: str = setting("fork.operator.class", default=DEFAULT_FORK_OPERATOR,
                                 default_doc="IdentityForkOperator", doc="routes records to the branches")
    queue_capacity: int = setting("fork.record.queue.capacity", default=100, minimum=1, maximum=100000,
                                  doc="batches queued per branch when a task has several (back pressure)")
    queue_timeout_ms: float = setting("fork.record.queue.timeout", default=1000.0, minimum=1,
                                      doc="milliseconds a put or get waits before checking the branch is alive")
    writer_builder: str = setting("writer.builder.class", default=DEFAULT_WRITER_BUILDER, scope=Scope.BRANCH,
                                  default_doc="FsDataWriterBuilder", doc="builds each branch's writer")


class BranchFailures(GobblinPyError):
    """Several branches of a task failed."""


class TaskPolicyFailure(GobblinPyError):
    """A FAIL-type task policy failed and ``data.quality.enforce.failure`` is true."""


def converter_chain(state: State, key: str) -> list[Converter]:
    """The converters named by ``key`` (comma list), each ``init``-ed; per-record ones get the adapter."""
    converters: list[Converter] = []
    for name in state.get_prop_as_list(key):
        plugin = instantiate(name, key, Converter)
        converter = plugin if isinstance(plugin, Converter) else RecordConverterAdapter(plugin)
        converter.init(state)  # type: ignore[arg-type]
        converters.append(converter)
    return converters


def apply_converters(converters: list[Converter], batch: pa.RecordBatch, state: State) -> Iterable[pa.RecordBatch]:
    """Run ``batch`` through a chain; each converter may turn one batch into any number."""
    batches: Iterable[pa.RecordBatch] = (batch,)
    for converter in converters:
        produced: list[pa.RecordBatch] = []
        for item in batches:
            result = converter.convert_batch(item, state)  # type: ignore[arg-type]
            if isinstance(result, pa.RecordBatch):
                produced.append(result)
            else:
                produced.extend(result)
        batches = produced
    return batches


def _converted_schema(converters: list[Converter], schema: pa.Schema, state: State) -> pa.Schema:
    for converter in converters:
        schema = converter.convert_schema(schema, state)  # type: ignore[arg-type]
    return schema


def _writer_builder(state: State, branches: int, branch: int) -> DataWriterBuilder:
    name = TaskSettings.load(state, branches=branches, branch=branch).writer_builder
    return instantiate(name, branch_key("writer.builder.class", branches, branch), DataWriterBuilder)  # type: ignore[return-value]


def _fork_operator(task: TaskState) -> ForkOperator | IdentityForkOperator:
    name = TaskSettings.load(task).fork_operator
    operator = instantiate(name, "fork.operator.class")
    if not isinstance(operator, (ForkOperator, RecordForkOperator)):
        raise UsageError(f"fork.operator.class={name}: not a ForkOperator (it has no get_branches)")
    if isinstance(operator, Initializable):
        operator.init(task)
    return operator  # type: ignore[return-value]


def _masks(operator, task: TaskState, batch: pa.RecordBatch, branches: int) -> list:
    if isinstance(operator, BatchForkOperator):
        masks = operator.fork_batch(task, batch)
    else:  # a per-record operator without the ForkOperator base
        rows = [operator.fork_data_record(task, r) for r in batch.to_pylist()]
        for answer in rows:
            if len(answer) != branches:
                raise ForkBranchMismatchError(operator, "data records", len(answer), branches)
        masks = [pa.array([bool(r[i]) for r in rows], pa.bool_()) for i in range(branches)]
    if len(masks) != branches:
        raise ForkBranchMismatchError(operator, "data records", len(masks), branches)
    for mask in masks:
        if not isinstance(mask, bool) and len(mask) != batch.num_rows:
            raise ForkBranchMismatchError(operator, f"mask rows of a {batch.num_rows}-row batch", len(mask), batch.num_rows)
    return masks


def schema_json(schema: pa.Schema) -> str:
    """A stable text form of a schema, stored as ``extract.schema`` for schema-compatibility checks."""
    return json.dumps([{"name": f.name, "type": str(f.type), "nullable": f.nullable} for f in schema],
                      separators=(",", ":"))


def _build_branches(task: TaskState, operator, schema: pa.Schema, branches: int) -> list[Branch | None]:
    routes = operator.fork_schema(task, schema)
    if len(routes) != branches:
        raise ForkBranchMismatchError(operator, "schemas", len(routes), branches)
    result: list[Branch | None] = []
    for index in range(branches):
        if not routes[index]:  # no schema, no branch: its records are dropped, it writes nothing
            result.append(None)
            continue
        state = WorkUnitState(task.workunit, {"fork.branch.id": str(index)}, job_state=task, id=task.task_id)
        converters = converter_chain(state, fork_key("converter.classes", index))
        branch_schema = _converted_schema(converters, schema, state)
        checker = RowChecker.build(state, task.task_id, index)
        result.append(Branch(index, branches, state, converters, branch_schema, checker,
                             _writer_builder(task, branches, index), f"{task.task_id}_0"))
    return result


def _attempt(task: TaskState) -> None:
    """One attempt of the task; raises on failure. Counters, results and watermark land on ``task``."""
    source: Source = instantiate(task.get_prop("source.class") or "", "source.class", Source)  # type: ignore[assignment]
    extractor: Extractor = source.get_extractor(task)
    converters: list[Converter] = []
    pre_checker: RowChecker | None = None
    operator = None
    branches: list[Branch | None] = []
    extracted = 0
    try:
        converters = converter_chain(task, "converter.classes")
        pre_checker = RowChecker.build(task, task.task_id, -1)
        operator = _fork_operator(task)
        count = operator.get_branches(task)
        if not 1 <= count <= MAX_BRANCHES:
            raise UsageError(f"fork.operator.class: {count} branches; a task has 1 to {MAX_BRANCHES}")
        task.set_prop("fork.branches", count)
        schema = _converted_schema(converters, extractor.get_schema(), task)
        branches = _build_branches(task, operator, schema, count)
        live = [b for b in branches if b is not None]
        if count > 1:
            settings = TaskSettings.load(task)
            for branch in live:
                branch.start(settings.queue_capacity, settings.queue_timeout_ms / 1000)
        try:
            for batch in extractor.read_batches():
                check_cancelled()
                extracted += batch.num_rows
                for out in apply_converters(converters, batch, task):
                    if pre_checker is not None:
                        out = pre_checker.apply(out)
                    if out.num_rows == 0:
                        continue
                    masks = [True] if count == 1 and isinstance(operator, IdentityForkOperator) else _masks(operator, task, out, count)
                    for branch, mask in zip(branches, masks):
                        if branch is None or mask is False:
                            continue
                        routed = out if mask is True else out.filter(mask)
                        if routed.num_rows:
                            branch.feed(routed)
        finally:
            for branch in live:
                branch.finish()
        task.set_prop("qualitychecker.rows.extracted", extracted)
        task.set_prop("qualitychecker.rows.expected", extractor.get_expected_record_count())
        failures = [b for b in live if b.failure is not None]
        if len(failures) == 1:
            raise failures[0].failure  # type: ignore[misc]
        if failures:
            raise BranchFailures("; ".join(f"branch {b.name}: {type(b.failure).__name__}: {b.failure}" for b in failures))
        _commit_branches(task, branches, count)
    except BaseException:
        task.set_prop("qualitychecker.rows.extracted", extracted)
        for branch in branches:
            if branch is not None and branch.writer is not None:
                branch.writer.cleanup()
        raise
    finally:
        try:
            extractor.close()
        finally:
            for converter in converters:
                converter.close()
            if pre_checker is not None:
                pre_checker.close()
                task.set_prop("qualitychecker.row.policy.results", json.dumps(pre_checker.results()))
            for branch in branches:
                if branch is not None:
                    branch.close()
            if isinstance(operator, Closeable):
                operator.close()


def _commit_branches(task: TaskState, branches: list[Branch | None], count: int) -> None:
    """Evaluate each branch's task policies, then commit every writer (or none when a FAIL policy blocks)."""
    expected = task.get_prop("qualitychecker.rows.expected")
    statuses, blocked = [], []
    for index, branch in enumerate(branches):
        key = lambda k: branch_key(k, count, index)  # noqa: E731 - Gobblin's per-branch counter keys
        written = branch.writer.records_written if branch is not None and branch.writer is not None else 0
        task.set_prop(key("qualitychecker.rows.written"), written)
        state = WorkUnitState(task.workunit, {"qualitychecker.rows.written": str(written),
                                              "qualitychecker.rows.expected": str(expected)}, job_state=task)
        if branch is not None:
            task.set_prop(key("extract.schema"), schema_json(branch.schema))
            state.set_prop("extract.schema", task.get_prop(key("extract.schema")))
            previous = task.get_prop(key("previous.extract.schema"))
            if previous:
                state.set_prop("previous.extract.schema", previous)
            if branch.row_checker is not None:
                task.set_prop(fork_key("qualitychecker.row.policy.results", index), json.dumps(branch.row_checker.results()))
        policies = task_quality.build_task_policies(task, count, index)
        if policies:
            status, results = task_quality.evaluate(policies, state)
            task.set_prop(key("qualitychecker.task.policy.results"), json.dumps(results))
            statuses.append(status)
            if status == "FAILED":
                blocked.append((index, results))
    if statuses:
        overall = "FAILED" if "FAILED" in statuses else "NOT_EVALUATED" if "NOT_EVALUATED" in statuses else "PASSED"
        task.set_prop("gobblin.task.level.policy.result", overall)
    if blocked and task_quality.enforce(task):
        failed = "; ".join(
            f"branch {i}: " + ", ".join(r["policy"] for r in results if r["result"] == "FAILED" and r["type"] == "FAIL")
            for i, results in blocked
        )
        raise TaskPolicyFailure(f"task-level quality policy failed ({failed}); data.quality.enforce.failure=true")
    total_records = total_bytes = 0
    for index, branch in enumerate(branches):
        key = lambda k: branch_key(k, count, index)  # noqa: E731
        outputs: list[str] = []
        if branch is not None and branch.writer is not None:
            try:
                outputs = branch.writer.commit()
            finally:
                branch.writer.cleanup()
            total_records += branch.writer.records_written
            total_bytes += branch.writer.bytes_written
            task.set_prop(key("writer.records.written"), branch.writer.records_written)
        if outputs:
            task.set_prop(key("writer.final.output.file.paths"), ",".join(outputs))
        task.set_prop(key("fork.state"), "COMMITTED" if branch is not None else "ABSENT")
    task.set_prop("writer.records.written", total_records)
    task.set_prop("writer.bytes.written", total_bytes)


def _attempt_id(retry: int) -> str:
    try:
        from pyspark import TaskContext

        context = TaskContext.get()
    except ImportError:  # pragma: no cover - pyspark is a dependency
        context = None
    prefix = f"s{context.stageId()}p{context.partitionId()}a{context.attemptNumber()}_" if context is not None else ""
    return f"{prefix}r{retry}_{uuid.uuid4().hex[:8]}"


def run_task(job_props: Mapping[str, str], workunit: WorkUnit, job_id: str, task_id: str) -> TaskState:
    """Run one work unit to completion (with retries) and return its TaskState."""
    job_state = State(job_props)
    settings = TaskSettings.load(job_state)
    max_retries, interval = settings.max_retries, settings.retry_interval_s
    started = int(time.time() * 1000)
    attempt = 0
    while True:
        task = TaskState(job_id, task_id, workunit, job_state=job_state, start_time=started)
        task.set_prop("job.id", job_id)
        task.set_prop("task.id", task_id)
        # every attempt (a Spark retry or speculative copy, or a retry here) stages and outputs under its own
        # folder; only the attempt whose TaskState reaches the driver is published
        task.set_prop("task.attempt.id", _attempt_id(attempt))
        task.working_state = WorkingState.RUNNING
        try:
            _attempt(task)
            task.working_state = WorkingState.SUCCESSFUL
        except Exception as exc:  # noqa: BLE001 - any plugin error fails the task, not the job
            task.working_state = WorkingState.FAILED
            task.set_prop("task.failure.exception", "".join(traceback.format_exception(exc)))
            log.warning("task_failed", task=task_id, attempt=attempt, error=f"{type(exc).__name__}: {exc}")
            if attempt < max_retries and not isinstance(exc, (UsageError, TaskCancelled)):
                attempt += 1
                pause(interval * (attempt - 1))
                continue
        task.set_prop("task.retries", attempt)
        task.end_time = int(time.time() * 1000)
        task.task_duration = task.end_time - task.start_time
        log.info("task_finished", task=task_id, state=task.working_state.value,
                 extracted=task.get_prop("qualitychecker.rows.extracted"), written=task.get_prop("writer.records.written"))
        return task
