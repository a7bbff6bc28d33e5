"""Read ahead: an iterator's next items made by a thread of their own while the caller works on the current one.

A database driver decoding rows into Arrow and a Parquet writer encoding them both run in native code that
lets go of Python's interpreter lock, so reading the next batch while the last one is converted and written
keeps two cores busy where one loop would wait on each in turn. At most ``depth`` items wait in between
(memory stays bounded); an error of the source reaches the caller where the item would have; a caller that
stops early stops the source too, and the source is always closed on its own thread.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Generator, Iterator
from typing import TypeVar

T = TypeVar("T")
_END = object()
POLL_S = 0.1  # how often a blocked reader looks whether the caller has gone


def prefetched(source: Iterator[T], depth: int = 2, name: str = "gpy-prefetch") -> Generator[T, None, None]:
    """The items of ``source``, read up to ``depth`` ahead by a thread of their own."""
    items: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def produce() -> None:
        try:
            for item in source:
                while not stop.is_set():
                    try:
                        items.put((item, None), timeout=POLL_S)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            items.put((_END, None))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller, who raises it
            items.put((_END, exc))
        finally:
            close = getattr(source, "close", None)
            if close is not None:
                close()

    thread = threading.Thread(target=produce, name=name, daemon=True)
    thread.start()
    try:
        while True:
            item, error = items.get()
            if item is _END:
                if error is not None:
                    raise error
                return
            yield item
    finally:
        stop.set()
        while thread.is_alive():  # let a reader blocked on a full queue see the stop
            try:
                items.get_nowait()
            except queue.Empty:
                pass
            thread.join(POLL_S)
