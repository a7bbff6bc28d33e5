"""Read-ahead: the same items in order, errors where they happen, a bounded lead, and a source that is always
closed, on its own thread, when the caller stops early."""

from __future__ import annotations

import queue
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gobblin_py.io import prefetch
from gobblin_py.io.prefetch import prefetched


@given(st.lists(st.integers()), st.integers(min_value=1, max_value=4))
def test_the_same_items_in_the_same_order(items, depth):
    assert list(prefetched(iter(items), depth=depth)) == items


def test_an_error_of_the_source_comes_after_the_items_before_it():
    def source():
        yield 1
        yield 2
        raise ValueError("row 3 cannot be read")

    got = []
    with pytest.raises(ValueError, match="row 3"):
        for item in prefetched(source()):
            got.append(item)
    assert got == [1, 2]


def test_the_source_runs_at_most_depth_items_ahead(monkeypatch):
    made = []
    full = threading.Event()

    class Queue(queue.Queue):
        """The read-ahead's queue, telling when the reader found it full (and so waits with its next item)."""

        def put(self, item, block=True, timeout=None):
            try:
                super().put(item, block, timeout)
            except queue.Full:
                full.set()
                raise

    monkeypatch.setattr(prefetch.queue, "Queue", Queue)

    def source():
        for i in range(100):
            made.append(i)
            yield i

    reader = prefetched(source(), depth=2)
    assert next(reader) == 0
    assert full.wait(30), "the reader never waited on a full queue"  # a deadline against a hang only
    assert made == [0, 1, 2, 3]  # the one taken, two waiting, one held by the reader until there is room
    reader.close()


def test_stopping_early_closes_the_source_on_its_own_thread():
    closed_on = []

    def source():
        try:
            for i in range(1000):
                yield i
        finally:
            closed_on.append(threading.current_thread().name)

    reader = prefetched(source(), depth=1, name="reader-thread")
    assert [next(reader) for _ in range(3)] == [0, 1, 2]
    reader.close()
    assert closed_on == ["reader-thread"]
    assert not [t for t in threading.enumerate() if t.name == "reader-thread"]
