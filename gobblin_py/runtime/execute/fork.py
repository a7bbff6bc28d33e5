"""The branches of a forked task: each with its converters, row policies, writer and task policies.

With several branches each runs in its own thread behind a bounded queue of record batches
(``fork.record.queue.capacity`` batches, put/get timeout ``fork.record.queue.timeout`` ms, a blocked put is
retried while the branch is alive): a slow branch holds the producer back instead of filling memory. Queue
statistics (size, fill ratio, put/get counts and rates, puts that found the queue full) are logged at DEBUG. A
single branch runs inline.

Failure: a failing branch stops taking batches; the others go on; the task waits for all of them and fails if
any failed — and then commits no branch at all.
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Any

import pyarrow as pa

from gobblin_py.runtime.execute.converter_chain import ConverterChain
from gobblin_py.runtime.execute.row_checker import RowChecker
from gobblin_py.sdk.branches import branch_name
from gobblin_py.sdk.contracts import BatchForkOperator, DataWriter, DataWriterBuilder, ForkBranchMismatchError
from gobblin_py.sdk.errors import RecordsLost
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.states import WorkUnitState

log = get_logger(__name__)

_END = object()


class BoundedBatchQueue:
    """A bounded FIFO of batches between the task and one branch, with the statistics Gobblin logs."""

    def __init__(self, capacity: int, timeout_s: float, name: str) -> None:
        self.capacity = max(1, capacity)
        self.timeout_s = timeout_s
        self.name = name
        self._queue: queue.Queue = queue.Queue(maxsize=self.capacity)
        self.put_count = 0
        self.get_count = 0
        self.max_size = 0
        self.put_blocked_s = 0.0  # time the producer waited for room: the back pressure this branch exerted
        self.puts_blocked = 0  # items the producer found no room for at once (it waited for the branch)
        self._started = time.monotonic()
        self._last_log = self._started

    def put(self, item: Any, alive) -> bool:
        """Block until there is room (retrying each timeout while ``alive()``); False if the branch died."""
        try:
            self._queue.put_nowait(item)
        except queue.Full:
            self.puts_blocked += 1
        else:
            self.put_count += 1
            self.max_size = max(self.max_size, self._queue.qsize())
            self._maybe_log()
            return True
        while True:
            self.put_count += 1
            began = time.monotonic()
            try:
                self._queue.put(item, timeout=self.timeout_s)
                self.max_size = max(self.max_size, self._queue.qsize())
                self._maybe_log()
                return True
            except queue.Full:
                if not alive():
                    return False
            finally:
                self.put_blocked_s += time.monotonic() - began

    def get(self) -> Any:
        while True:
            self.get_count += 1
            try:
                return self._queue.get(timeout=self.timeout_s)
            except queue.Empty:
                continue

    def stats(self) -> dict[str, float]:
        elapsed = max(time.monotonic() - self._started, 1e-9)
        size = self._queue.qsize()
        return {
            "queue_size": size,
            "fill_ratio": round(size / self.capacity, 3),
            "put_attempts": self.put_count,
            "get_attempts": self.get_count,
            "put_rate_per_s": round(self.put_count / elapsed, 2),
            "get_rate_per_s": round(self.get_count / elapsed, 2),
            "max_size": self.max_size,
            "put_blocked_s": round(self.put_blocked_s, 3),
            "puts_blocked": self.puts_blocked,
        }

    def _maybe_log(self) -> None:
        now = time.monotonic()
        if now - self._last_log >= 5:
            self._last_log = now
            log.debug("fork_queue_stats", branch=self.name, **self.stats())


class Branch:
    """One branch of a task: converters → row policies → writer, fed batch by batch."""

    def __init__(self, index: int, branches: int, state: WorkUnitState, converters: ConverterChain,
                 schema: pa.Schema, row_checker: RowChecker | None, builder: DataWriterBuilder, writer_id: str) -> None:
        self.index = index
        self.branches = branches
        self.name = branch_name(state, index)
        self.state = state
        self.converters = converters
        self.schema = schema
        self.row_checker = row_checker
        self.builder = builder
        self.writer_id = writer_id
        self.writer: DataWriter | None = None
        self.failure: BaseException | None = None
        self.routed = 0  # rows the fork sent this branch
        self._queue: BoundedBatchQueue | None = None
        self._thread: threading.Thread | None = None

    # -- processing
    def process(self, batch: pa.RecordBatch) -> None:
        self.routed += batch.num_rows
        for out in self.converters.apply(batch):
            if self.row_checker is not None:
                out = self.row_checker.apply(out)
            if out.num_rows == 0:
                continue
            if self.writer is None:  # lazily: a branch that gets no rows writes no file
                self.schema = out.schema
                self.writer = self.builder.build(self.state, self.schema, self.branches, self.index, self.writer_id)
            self.writer.write(out if out.schema == self.schema else out.cast(self.schema))

    # -- threaded mode
    def start(self, capacity: int, timeout_s: float) -> None:
        self._queue = BoundedBatchQueue(capacity, timeout_s, self.name)
        self._thread = threading.Thread(target=self._run, name=f"gpy-fork-{self.name}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        assert self._queue is not None
        while True:
            item = self._queue.get()
            if item is _END:
                return
            if self.failure is not None:
                continue  # a failed branch stops processing; it only drains what was already queued
            try:
                self.process(item)
            except BaseException as exc:  # noqa: BLE001 - recorded, re-raised by the task
                self.failure = exc
                log.warning("fork_branch_failed", branch=self.name, error=f"{type(exc).__name__}: {exc}")

    def alive(self) -> bool:
        return self.failure is None and self._thread is not None and self._thread.is_alive()

    def feed(self, batch: pa.RecordBatch) -> None:
        if self._queue is None:
            if self.failure is None:
                try:
                    self.process(batch)
                except BaseException as exc:  # noqa: BLE001
                    self.failure = exc
            return
        if self.failure is None:
            self._queue.put(batch, self.alive)

    def finish(self) -> None:
        """Signal the end of input and wait for the branch to drain."""
        if self._queue is None or self._thread is None:
            return
        while not self._queue.put(_END, lambda: self._thread.is_alive()):
            if not self._thread.is_alive():
                break
        self._thread.join()
        log.debug("fork_queue_stats", branch=self.name, final=True, **self._queue.stats())

    def dropped(self) -> int:
        """Rows the branch's converters and row policies took out of what reached it."""
        return self.converters.dropped() + (self.row_checker.dropped() if self.row_checker is not None else 0)

    def check_written(self) -> None:
        """The branch's writer wrote every row that reached it and was not taken out; RecordsLost if not."""
        written = self.writer.records_written if self.writer is not None else 0
        if self.routed - self.dropped() != written:
            raise RecordsLost(f"branch {self.name}: {self.routed} rows reached it and its converters and row policies "
                              f"took out {self.dropped()}, so {self.routed - self.dropped()} should be written, but "
                              f"its writer wrote {written}")

    def close(self) -> None:
        """Release the branch's converters and row checker (its writer is committed or cleaned up apart)."""
        self.converters.close()
        if self.row_checker is not None:
            self.row_checker.close()


def fork_masks(operator: Any, state: WorkUnitState, batch: pa.RecordBatch, branches: int) -> list:
    """One mask (or a plain bool) per branch from the fork operator, checked against the batch and branches."""
    if isinstance(operator, BatchForkOperator):
        masks = operator.fork_batch(state, batch)
    else:  # a per-record operator without the ForkOperator base
        rows = [operator.fork_data_record(state, r) for r in batch.to_pylist()]
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
