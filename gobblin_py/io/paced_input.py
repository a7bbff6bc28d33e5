"""Paced input: a stream Arrow's streaming CSV and JSON readers read only a few blocks ahead of their consumer.

Arrow's streaming readers read their input on a background thread, up to 32 blocks ahead of the batches taken
from them (Arrow's own read-ahead; pyarrow gives no option to set it): 32 MB of a file at a 1 MB block, held
whether or not the task that reads it is busy elsewhere (writing a Parquet row group, say). Read through a
:class:`PacedInput`, a file is read at most ``ahead`` blocks beyond the batches taken while the consumer is
busy. Each block gives one batch (an empty one for a block of blank lines); should a batch ever need more
blocks than that, the consumer waiting on it for :data:`STALL_S` lets the read through rather than stall.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Generator
from typing import Any

import pyarrow as pa

AHEAD = 3  # blocks read ahead of the batches taken: one being parsed, one parsed ahead, one to spare
POLL_S = 0.1  # how often a held read looks whether its file was closed (batches never taken)
STALL_S = 0.05  # a consumer waiting this long for a batch gets the read it waits on, whatever was read ahead


class PacedInput:
    """A readable stream over ``raw`` whose reads wait while ``ahead`` blocks are read and not yet taken.

    Give it to a streaming reader in place of ``raw`` and take the batches through :meth:`batches`. Closing it
    (or the batches' end) lets every waiting read through; ``raw`` stays its opener's to close.
    """

    def __init__(self, raw: Any, ahead: int = AHEAD) -> None:
        self._raw = raw
        self._ahead = max(1, ahead)
        self._native = isinstance(raw, pa.NativeFile)
        self._unread = 0  # blocks read and not yet given back as batches
        self._waiting_since: float | None = None  # when the consumer began to wait for a batch
        self._done = False
        self._turn = threading.Condition()

    def read(self, nbytes: int = -1) -> Any:
        with self._turn:
            while self._unread >= self._ahead and not self._done and not self.closed:
                if self._waiting_since is None:  # the consumer is busy: it gives the turn back when it takes one
                    self._turn.wait(POLL_S)
                    continue
                waited = time.monotonic() - self._waiting_since
                if waited >= STALL_S:  # it waits on this read: let it through, one read a stall
                    self._waiting_since = time.monotonic()
                    break
                self._turn.wait(STALL_S - waited)
            self._unread += 1
        # an Arrow buffer, not bytes: Arrow takes it without a copy
        return self._raw.read_buffer(nbytes) if self._native else self._raw.read(nbytes)

    def batches(self, reader: pa.RecordBatchReader) -> Generator[pa.RecordBatch, None, None]:
        """``reader``'s batches, each one taken letting one more block be read."""
        try:
            while True:
                self._wait(True)
                try:
                    batch = reader.read_next_batch()
                except StopIteration:
                    return
                finally:
                    self._wait(False)
                yield batch
        finally:
            self.close()

    def _wait(self, waiting: bool) -> None:
        with self._turn:
            self._waiting_since = time.monotonic() if waiting else None
            if not waiting:
                self._unread = max(0, self._unread - 1)
            self._turn.notify_all()

    def close(self) -> None:
        with self._turn:
            self._done = True
            self._turn.notify_all()

    @property
    def closed(self) -> bool:
        return bool(getattr(self._raw, "closed", False))

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False
