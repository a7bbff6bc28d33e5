"""Paced input: a stream Arrow's streaming CSV and JSON readers read only a few blocks ahead of their consumer.

Arrow's streaming readers read their input on a background thread, up to 32 blocks ahead of the batches taken
from them (Arrow's own read-ahead; pyarrow gives no option to set it): 32 MB of a file at a 1 MB block, held
whether or not the task that reads it is busy elsewhere (writing a Parquet row group, say). Read through a
:class:`PacedInput`, a file is read at most ``ahead`` blocks beyond the batches taken.

A read is held only once the reader is open (opening reads as far as Arrow needs, a first row longer than
``ahead`` blocks included), while ``ahead`` blocks are read and not taken, and not while the consumer waits on
the reader: when the consumer waits for a batch and Arrow holds at most one block it has read (every other one
parsed and freed), the batch waits on the next read, which passes at once (a row longer than ``ahead`` blocks
costs no wait). While the consumer waits on Arrow's parse of blocks already read, reads stay held: that wait is
the moment Arrow would otherwise run its 32 blocks ahead. Closing the batches or the file lets every read through.

A held read keeps one of Arrow's IO threads (a pool of 8, shared by every Arrow read in the process): each read
held adds one to the pool, so files paced at once never leave the other readers of the process without a thread.
When the process exits, reads of files still open fail at once rather than call into a finalizing interpreter.
"""

from __future__ import annotations

import atexit
import threading
import time
import weakref
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

AHEAD = 3  # blocks read ahead of the batches taken: one being parsed, one parsed ahead, one to spare
POLL_S = 0.1  # how often a held read looks whether its file was closed under it
# A reader that neither frees the blocks it has read nor gives a batch while its consumer waits (no Arrow reader
# does so: a batch needs its own block and the ones before) gets a held read after this: a wait, never a hang.
STALL_S = 0.05

_live: weakref.WeakSet[PacedInput] = weakref.WeakSet()
_pool = threading.Lock()
_held = 0  # reads held, across every paced file
_spare = pa.io_thread_count()  # Arrow's IO threads left to its other reads, whatever the paced files hold


class PacedInput:
    """A readable stream over ``raw`` whose reads wait while ``ahead`` blocks are read and not yet taken, unless
    the consumer waits for a batch that needs them.

    Give it to a streaming reader in place of ``raw``, then take the batches through :meth:`batches`. Closing it
    (or the batches, or their end) lets every waiting read through; ``raw`` stays its opener's to close.
    """

    def __init__(self, raw: Any, ahead: int = AHEAD) -> None:
        self._raw = raw
        self._ahead = max(1, ahead)
        self._native = isinstance(raw, pa.NativeFile)
        self._read = 0  # blocks read
        self._taken = 0  # batches taken
        self._freed = 0  # blocks read that the reader has let go of (parsed, or dropped)
        # when the consumer began to wait for a batch: from the start, as it waits for the reader to open
        self._waiting_since: float | None = time.monotonic()
        self._done = False
        self._exiting = False
        self._inside = 0  # reads under way
        self._turn = threading.Condition()  # a reentrant lock: a block may be freed by a thread that holds it
        self.stalls = 0  # held reads let through by STALL_S
        _live.add(self)

    def read(self, nbytes: int = -1) -> Any:
        with self._turn:
            self._inside += 1
        try:
            with self._turn:
                if (wait := self._hold()) > 0:
                    _holding(1)
                    try:
                        while wait > 0:
                            self._turn.wait(wait)
                            wait = self._hold()
                    finally:
                        _holding(-1)
                if self._exiting:
                    raise OSError("the process is exiting: the file is no longer read")
                self._read += 1
            # an Arrow buffer, not bytes: Arrow takes it without a copy, and lets it go once the block is parsed
            block = self._raw.read_buffer(nbytes) if self._native else pa.py_buffer(self._raw.read(nbytes))
            weakref.finalize(block, self._free).atexit = False
            return block
        finally:
            with self._turn:
                self._inside -= 1
                self._turn.notify_all()

    def _hold(self) -> float:
        """How long a read waits before it looks again; 0: it passes."""
        if self._done or self.closed or self._read - self._taken < self._ahead:
            return 0
        if self._waiting_since is None:  # the consumer is busy: it notifies when it takes a batch or waits
            return POLL_S
        if self._read - self._freed <= 1:  # what the consumer waits on needs this read
            return 0
        stalled = time.monotonic() - self._waiting_since
        if stalled >= STALL_S:
            self.stalls += 1
            self._waiting_since = time.monotonic()
            return 0
        return STALL_S - stalled

    def _free(self) -> None:
        with self._turn:
            self._freed += 1
            self._turn.notify_all()

    def batches(self, reader: pa.RecordBatchReader) -> PacedBatches:
        """``reader``'s batches, each one taken letting one more block be read; call it once ``reader`` is open."""
        self.waiting(False)  # open: busy until it asks for a batch
        return PacedBatches(self, reader)

    def waiting(self, waiting: bool, took: bool = False) -> None:
        """The consumer begins (``True``) or ends waiting for a batch, having ``took`` one."""
        with self._turn:
            self._waiting_since = time.monotonic() if waiting else None
            self._taken += took
            self._turn.notify_all()

    def close(self) -> None:
        with self._turn:
            self._done = True
            self._turn.notify_all()

    def _exit(self, bound_s: float) -> None:
        """Fail every read from now on, and wait (up to ``bound_s``) for those under way to end."""
        with self._turn:
            self._exiting = self._done = True
            self._turn.notify_all()
            end = time.monotonic() + bound_s
            while self._inside and (left := end - time.monotonic()) > 0:
                self._turn.wait(left)

    @property
    def closed(self) -> bool:
        return bool(getattr(self._raw, "closed", False))

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False


def _holding(change: int) -> None:
    """Count a read held (``1``) or let through (``-1``), growing Arrow's IO pool to keep its spare threads."""
    global _held
    with _pool:
        _held += change
        if change > 0 and pa.io_thread_count() < _spare + _held:
            pa.set_io_thread_count(_spare + _held)


def held_reads() -> int:
    """Reads held now, across every paced file (what a test waits on to see a reader stopped ahead)."""
    with _pool:
        return _held


@atexit.register
def _exiting() -> None:
    # Arrow's read-ahead thread of a file still open would call into the interpreter as it finalizes (a fatal
    # error that aborts the process): its reads end here, while the interpreter still runs them
    for paced in list(_live):
        paced._exit(1.0)


class PacedBatches(Iterator[pa.RecordBatch]):
    """The batches of a reader over a :class:`PacedInput`. Closing them, or dropping them, first lets the reader's
    held reads through: Arrow's reader waits for its reads in flight when it is closed or freed."""

    def __init__(self, paced: PacedInput, reader: pa.RecordBatchReader) -> None:
        self._paced = paced
        self._reader: pa.RecordBatchReader | None = reader

    def __next__(self) -> pa.RecordBatch:
        if self._reader is None:
            raise StopIteration
        self._paced.waiting(True)
        took = False
        try:
            batch = self._reader.read_next_batch()
            took = True
        except BaseException:
            self.close()
            raise
        finally:
            self._paced.waiting(False, took)
        return batch

    def close(self) -> None:
        self._paced.close()
        self._reader = None  # freed after its reads are let through

    def __del__(self) -> None:
        self._paced.close()
