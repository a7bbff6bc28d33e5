"""What the Kafka tasks of one process share while they fetch: turns at fetching, and the collector's pause."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_turn_lock = threading.Lock()
_turns: dict[int, threading.Semaphore] = {}


class FetchTurn:
    """One task's turn at fetching, out of ``source.kafka.fetch.parallelism`` per process.

    librdkafka keeps what it has fetched of a partition until it is consumed (up to ``queued.max.messages.kbytes``,
    or the whole rest of the partition from a broker that ignores fetch size limits), at several hundred bytes per
    message: tasks reading partitions at once in parallel threads multiply that, for little gain in speed, since
    turning messages into Arrow arrays holds the interpreter's lock.
    """

    def __init__(self, parallelism: int) -> None:
        with _turn_lock:
            self._slots = _turns.setdefault(parallelism, threading.Semaphore(parallelism))
        self._held = False

    def take(self) -> None:
        if not self._held:
            self._slots.acquire()
            self._held = True

    def give(self) -> None:
        if self._held:
            self._held = False
            self._slots.release()


_gc_lock = threading.Lock()
_gc_users = 0


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off while a batch of messages is turned into lists.

    confluent-kafka's messages are garbage-collected objects: thousands of them alive at once set the collector
    off again and again (a third of the time of a pull, measured), though they form no cycles and go with
    their last reference. Collection is process-wide, so tasks in parallel threads share one pause (counted).
    """
    global _gc_users
    with _gc_lock:
        _gc_users += 1
        if _gc_users == 1:
            gc.disable()
    try:
        yield
    finally:
        with _gc_lock:
            _gc_users -= 1
            if _gc_users == 0:
                gc.enable()
