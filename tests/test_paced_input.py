"""A paced stream: read a few blocks ahead of the batches taken, never stalled by a batch that needs more."""

from __future__ import annotations

import io
import threading

import pyarrow as pa

from gobblin_py.io.paced_input import AHEAD, PacedInput

SCHEMA = pa.schema([("n", pa.int64())])


def test_a_batch_needing_more_blocks_than_read_ahead_still_comes():
    raw = io.BytesIO(b"x" * 100)
    paced = PacedInput(raw)

    def made() -> object:  # each batch takes AHEAD + 2 reads of the stream
        for n in range(2):
            for _ in range(AHEAD + 2):
                paced.read(1)
            yield pa.record_batch([pa.array([n])], schema=SCHEMA)

    reader = pa.RecordBatchReader.from_batches(SCHEMA, made())
    assert [b.column(0)[0].as_py() for b in paced.batches(reader)] == [0, 1]
    assert raw.tell() == 2 * (AHEAD + 2)


def test_a_read_held_for_batches_never_taken_ends_when_the_file_is_closed():
    raw = io.BytesIO(b"x" * 100)
    paced = PacedInput(raw)
    for _ in range(AHEAD):
        paced.read(1)

    def read_one() -> None:
        try:
            paced.read(1)
        except ValueError:  # the file closed under it
            pass

    held = threading.Thread(target=read_one)
    held.start()
    held.join(0.3)
    assert held.is_alive()  # read ahead as far as it may go
    raw.close()
    held.join(10)
    assert not held.is_alive()
