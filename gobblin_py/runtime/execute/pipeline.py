"""One attempt of a task, as its steps: extract → convert → row policies → fork → branches → commit.

Every part the attempt opens (the extractor, converter chains, row checkers, the fork operator, the branches and
their writers) is registered with one exit stack as it is opened, so whatever happens each is closed, and a
failed attempt's staged files are removed. Counters, quality results and the actual high watermark land on the
task state.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pyarrow as pa

from gobblin_py.runtime.execute import task_progress
from gobblin_py.runtime.execute.branch_commit import commit_branches
from gobblin_py.runtime.execute.converter_chain import ConverterChain
from gobblin_py.runtime.execute.fork import Branch, fork_masks
from gobblin_py.runtime.execute.job_settings import ReplaySettings
from gobblin_py.runtime.execute.row_checker import RowChecker
from gobblin_py.runtime.execute.task_settings import TaskSettings
from gobblin_py.sdk.branches import MAX_BRANCHES, branch_key, fork_key
from gobblin_py.sdk.contracts import (
    Closeable,
    DataWriterBuilder,
    Extractor,
    ForkBranchMismatchError,
    ForkOperator,
    Initializable,
    ProgressReporting,
    RecordForkOperator,
    Source,
    TimestampFiltering,
)
from gobblin_py.sdk.errors import DataError, UsageError
from gobblin_py.sdk.interrupts import check_cancelled
from gobblin_py.sdk.locating import RecordLocating
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.plugins import instantiate
from gobblin_py.sdk.states import TaskState, WorkUnitState
from gobblin_py.store.progress import record_progress
from gobblin_py.store.startpoints import TIMESTAMP_KEY

log = get_logger(__name__)

ACCOUNTING_KEY = "gpy.records.accounting"


class BranchFailures(Exception):
    """Several branches of a task failed."""


class TaskPipeline:
    """The parts of one task attempt, opened in order and closed together."""

    def __init__(self, task: TaskState) -> None:
        self.task = task
        self.settings = TaskSettings.load(task)
        self.extracted = 0

    def run(self) -> None:
        """Run the attempt to its commit; raises on failure (with nothing of the attempt left staged)."""
        task = self.task
        with ExitStack() as stack:
            stack.callback(lambda: task.set_prop("qualitychecker.rows.extracted", self.extracted))
            source: Source = instantiate(task.get_prop("source.class") or "", "source.class", Source)  # type: ignore[assignment]
            extractor: Extractor = source.get_extractor(task)
            stack.callback(extractor.close)
            converters = ConverterChain.build(task, "converter.classes")
            stack.callback(converters.close)
            checker = RowChecker.build(task, task.task_id, -1)
            if checker is not None:
                stack.callback(self._close_checker, checker)
            operator = self._fork_operator(stack)
            count = operator.get_branches(task)
            if not 1 <= count <= MAX_BRANCHES:
                raise UsageError(f"fork.operator.class: {count} branches; a task has 1 to {MAX_BRANCHES}")
            task.set_prop("fork.branches", count)
            branches = self._branches(stack, operator, converters.schema(extractor.get_schema()), count)
            live = [b for b in branches if b is not None]
            stack.push(lambda kind, exc, tb: self._discard(live) if kind is not None else None)
            if count > 1:
                for branch in live:
                    branch.start(self.settings.queue_capacity, self.settings.queue_timeout_ms / 1000)
            self._replay_filter(extractor)
            try:
                self._stream(extractor, converters, checker, operator, branches)
            finally:
                for branch in live:
                    branch.finish()
            task.set_prop("qualitychecker.rows.expected", extractor.get_expected_record_count())
            failures = [b for b in live if b.failure is not None]
            if len(failures) == 1:
                raise failures[0].failure  # type: ignore[misc]
            if failures:
                raise BranchFailures("; ".join(f"branch {b.name}: {type(b.failure).__name__}: {b.failure}" for b in failures))
            if isinstance(extractor, ProgressReporting):
                record_progress(task, extractor.partition_progress())
            self._reconcile(converters, checker, live)
            commit_branches(task, branches)

    def _reconcile(self, converters: ConverterChain, checker: RowChecker | None, branches: list[Branch]) -> None:
        """Every row read is written or accounted for (Gearpump's loss detection by counts): converters change
        row counts only where they say they may (each branch's writer is checked when it commits, see
        :func:`~gobblin_py.runtime.execute.branch_commit.commit_branches`). Fails the task, with the numbers, if not."""
        converters.check_counts()
        for branch in branches:
            branch.converters.check_counts()
        self.task.set_prop(ACCOUNTING_KEY, json.dumps({
            "extracted": self.extracted, "converters": converters.counts(),
            "row_policies_dropped": checker.dropped() if checker is not None else 0,
            "branches": {b.name: {"routed": b.routed, "dropped": b.dropped()} for b in branches},
        }, separators=(",", ":")))

    def _replay_filter(self, extractor: Extractor) -> None:
        """A work unit replayed from a time drops the records before it (Gearpump's timestamp filter)."""
        start = self.task.get_prop(TIMESTAMP_KEY)
        if start is None or not ReplaySettings.load(self.task).timestamp_filter:
            return
        if isinstance(extractor, TimestampFiltering):
            extractor.filter_before(int(start))
        else:
            log.warning("replay_not_filtered", task=self.task.task_id, extractor=type(extractor).__name__,
                        note="the source knows no event time: records older than the startpoint are kept")

    def _stream(self, extractor: Extractor, converters: ConverterChain, checker: RowChecker | None, operator: Any,
                branches: list[Branch | None]) -> None:
        """Every batch of the extractor through the pre-fork stream and into its branches."""
        count = len(branches)
        route_all = count == 1 and isinstance(operator, ForkOperator) and operator.routes_everything
        progress = task_progress.reporter(self.task)  # None unless a live display listens
        for batch in extractor.read_batches():
            check_cancelled()
            self.extracted += batch.num_rows
            for out in _located(converters.apply(batch), extractor):
                if checker is not None:
                    out = checker.apply(out)
                if out.num_rows == 0:
                    continue
                masks = [True] if route_all else fork_masks(operator, self.task, out, count)
                for branch, mask in zip(branches, masks, strict=True):
                    if branch is None or mask is False:
                        continue
                    routed = out if mask is True else out.filter(mask)
                    if routed.num_rows:
                        branch.feed(routed)
            if progress is not None:
                progress.batch(self.extracted, branches)

    def _close_checker(self, checker: RowChecker) -> None:
        checker.close()
        self.task.set_prop("qualitychecker.row.policy.results", json.dumps(checker.results()))

    def _fork_operator(self, stack: ExitStack) -> Any:
        name = self.settings.fork_operator
        operator = instantiate(name, "fork.operator.class")
        if not isinstance(operator, (ForkOperator, RecordForkOperator)):
            raise UsageError(f"fork.operator.class={name}: not a ForkOperator (it has no get_branches)")
        if isinstance(operator, Initializable):
            operator.init(self.task)
        if isinstance(operator, Closeable):
            stack.callback(operator.close)
        return operator

    def _branches(self, stack: ExitStack, operator: Any, schema: pa.Schema, count: int) -> list[Branch | None]:
        task = self.task
        routes = operator.fork_schema(task, schema)
        if len(routes) != count:
            raise ForkBranchMismatchError(operator, "schemas", len(routes), count)
        branches: list[Branch | None] = []
        for index in range(count):
            if not routes[index]:  # no schema, no branch: its records are dropped, it writes nothing
                branches.append(None)
                continue
            state = WorkUnitState(task.workunit, {"fork.branch.id": str(index)}, job_state=task, id=task.task_id)
            converters = ConverterChain.build(state, fork_key("converter.classes", index))
            stack.callback(converters.close)
            checker = RowChecker.build(state, task.task_id, index)
            if checker is not None:
                stack.callback(checker.close)
            builder_name = TaskSettings.load(task, branches=count, branch=index).writer_builder
            builder = instantiate(builder_name, branch_key("writer.builder.class", count, index), DataWriterBuilder)
            branches.append(Branch(index, count, state, converters, converters.schema(schema), checker,
                                   builder, f"{task.task_id}_0"))  # type: ignore[arg-type]
        return branches

    @staticmethod
    def _discard(branches: list[Branch]) -> None:
        """A failed attempt leaves nothing staged."""
        for branch in branches:
            if branch.writer is not None:
                branch.writer.cleanup()


def _located(batches: Iterator[pa.RecordBatch], extractor: Extractor) -> Iterator[pa.RecordBatch]:
    """``batches``; a value they could not be converted for is named with the file and line its extractor read
    it from, when it can tell (:class:`~gobblin_py.sdk.locating.RecordLocating`)."""
    try:
        yield from batches
    except DataError as exc:
        if exc.where is not None or exc.row is None or not isinstance(extractor, RecordLocating):
            raise
        raise exc.located(extractor.locate(exc.row)) from exc
