"""read_ahead: the order kept, errors raised after what preceded them, bounded memory, and an early stop joined."""

from __future__ import annotations

import threading
import time

import pytest

from gobblin_py.read_ahead import read_ahead


class Source:
    """An iterator that records how far it was read, in which thread, and whether (and where) it was closed."""

    def __init__(self, count: int, fail_at: int | None = None) -> None:
        self.count, self.fail_at = count, fail_at
        self.produced = 0
        self.threads: set[str] = set()
        self.closed_in: str | None = None

    def __iter__(self):
        return self

    def __next__(self) -> int:
        self.threads.add(threading.current_thread().name)
        if self.produced == self.fail_at:
            raise ValueError(f"broken at {self.produced}")
        if self.produced >= self.count:
            raise StopIteration
        self.produced += 1
        return self.produced - 1

    def close(self) -> None:
        self.closed_in = threading.current_thread().name


def test_every_item_in_order_from_a_helper_thread():
    source = Source(1000)
    assert list(read_ahead(source, depth=3, name="helper")) == list(range(1000))
    assert source.threads == {"helper"} and source.closed_in == "helper"


def test_depth_zero_reads_in_the_callers_thread():
    source = Source(5)
    assert list(read_ahead(source, depth=0)) == list(range(5))
    assert source.threads == {threading.current_thread().name}


def test_an_error_comes_after_the_items_read_before_it():
    got = []
    with pytest.raises(ValueError, match="broken at 7"):
        for item in read_ahead(Source(100, fail_at=7), depth=2):
            got.append(item)
    assert got == list(range(7))


def test_reads_at_most_depth_items_ahead():
    source = Source(100)
    stream = read_ahead(source, depth=2)
    assert next(stream) == 0
    time.sleep(0.3)  # the helper fills the queue, then waits for room
    assert source.produced <= 1 + 2 + 1  # the one taken, the queue's two, one held while waiting to be put
    stream.close()


def test_a_consumer_that_stops_early_stops_and_joins_the_reader():
    source = Source(10_000)
    stream = read_ahead(source, depth=2, name="early")
    assert [next(stream) for _ in range(3)] == [0, 1, 2]
    stream.close()
    assert source.closed_in == "early"  # closed in its own thread before close() returned
    assert not any(t.name == "early" for t in threading.enumerate())
    assert source.produced < 10_000
