"""Read ahead: an iterator of Arrow batches drained by a helper thread into a small bounded queue.

A task reads and writes in one thread: while the writer encodes a batch (Parquet compression, say) the database
or file waits, and while the driver fetches the writer waits. Both release the interpreter lock (Arrow's C++,
the drivers' C code), so reading the next batches in a second thread overlaps the two on a second core.

Memory stays bounded: at most ``depth`` batches wait in the queue, plus the one being read. The order of
batches is kept. An error in the reader is raised in the consumer, after the batches read before it. When the
consumer stops early (an error downstream, a closed generator), the reader is told to stop and joined: the
source iterator is closed in the thread that ran it, before the consumer goes on (to close the connection).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import TypeVar

T = TypeVar("T")

_DONE = object()
_POLL = 0.1  # seconds between checks of the stop flag while the queue is full


class _Failed:
    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


def read_ahead(source: Iterator[T], depth: int = 2, name: str = "gpy-read-ahead") -> Iterator[T]:
    """Yield what ``source`` yields, in order, reading up to ``depth`` items ahead in a helper thread."""
    if depth < 1:
        yield from source
        return
    items: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item: object) -> bool:
        while not stop.is_set():
            try:
                items.put(item, timeout=_POLL)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in source:
                if not put(item):
                    return
            put(_DONE)
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer, who raises it
            put(_Failed(exc))
        finally:
            close = getattr(source, "close", None)
            if close is not None:
                try:
                    close()
                except Exception:  # noqa: BLE001 - closing after the outcome was handed over
                    pass

    thread = threading.Thread(target=produce, name=name, daemon=True)
    thread.start()
    try:
        while True:
            item = items.get()
            if item is _DONE:
                return
            if isinstance(item, _Failed):
                raise item.error
            yield item
    finally:
        stop.set()
        while thread.is_alive():  # a reader blocked on a full queue sees the flag; drain so it can leave at once
            try:
                items.get_nowait()
            except queue.Empty:
                thread.join(_POLL)
