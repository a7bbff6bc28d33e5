"""A paced stream: read a few blocks ahead of the batches taken while the consumer is busy, and never holding a
read its consumer waits on (while the reader opens, or for a batch that needs more blocks than that)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.json as pa_json
import pytest

from gobblin_py.io.paced_input import AHEAD, PacedBatches, PacedInput

SCHEMA = pa.schema([("n", pa.int64())])
BLOCK = 16 << 10
BOUND_S = 20  # a held read would hang for ever; all of these take milliseconds


def finished(work: Callable[[], object], bound_s: float = BOUND_S) -> object:
    """``work()``'s result (or what it raised), a failure (not a hang) when it has not finished in ``bound_s``."""
    out: list[object] = []

    def run() -> None:
        try:
            out.append(work())
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            out.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(bound_s)
    assert not thread.is_alive(), f"still reading after {bound_s} s: a read is held that the reader waits on"
    return out[0]


def test_a_batch_needing_many_more_blocks_than_read_ahead_comes_at_once():
    raw = io.BytesIO(b"x" * 1000)
    paced = PacedInput(raw)

    def made() -> Iterator[pa.RecordBatch]:  # each batch takes 200 reads of the stream, with the consumer waiting
        for n in range(2):
            for _ in range(200):
                paced.read(1)
            yield pa.record_batch([pa.array([n])], schema=SCHEMA)

    batches = paced.batches(pa.RecordBatchReader.from_batches(SCHEMA, made()))
    # a read waited on passes at once: 400 of them held for even 25 ms each would take the 10 s
    assert finished(lambda: [b.column(0)[0].as_py() for b in batches], 10) == [0, 1]
    assert raw.tell() == 400
    assert paced.stalls == 0


def csv_rows(long_at: int, length: int, count: int = 2000) -> bytes:
    return ("id,text\n" + "".join(f"{i},{'x' * length if i == long_at else f't{i}'}\n"
                                  for i in range(count))).encode()


def json_lines(long_at: int, length: int, count: int = 2000) -> bytes:
    return "".join(json.dumps({"id": i, "text": "x" * length if i == long_at else f"t{i}"}) + "\n"
                   for i in range(count)).encode()


def read_paced(data: bytes, fmt: str, block: int = BLOCK) -> list[int]:
    paced = PacedInput(io.BytesIO(data))
    if fmt == "csv":
        reader = pa_csv.open_csv(paced, read_options=pa_csv.ReadOptions(block_size=block))
    else:
        reader = pa_json.open_json(paced, read_options=pa_json.ReadOptions(block_size=block))
    return [i for b in paced.batches(reader) for i in b.column("id").to_pylist()]


@pytest.mark.parametrize("fmt", ["csv", "json"])
@pytest.mark.parametrize("long_at", [0, 1000], ids=["first-row", "mid-file"])
def test_a_row_longer_than_read_ahead_fails_as_arrow_says_and_never_hangs(fmt, long_at):
    # Arrow reads the blocks of a row longer than its block before it says so, while it opens or mid-file
    data = (csv_rows if fmt == "csv" else json_lines)(long_at, (AHEAD + 3) * BLOCK)
    failed = finished(lambda: read_paced(data, fmt))
    assert isinstance(failed, pa.ArrowInvalid) and "straddling" in str(failed)


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_small_rows_are_read_a_few_blocks_ahead_of_the_batches_taken(fmt):
    data = (csv_rows if fmt == "csv" else json_lines)(-1, 0, count=60_000)  # 40 to 60 blocks
    raw = io.BytesIO(data)
    paced = PacedInput(raw)
    if fmt == "csv":
        reader = pa_csv.open_csv(paced, read_options=pa_csv.ReadOptions(block_size=BLOCK))
    else:
        reader = pa_json.open_json(paced, read_options=pa_json.ReadOptions(block_size=BLOCK))
    batches = paced.batches(reader)
    ids: list[int] = []
    for taken in range(6):
        if taken:
            ids += next(batches).column("id").to_pylist()
        threading.Event().wait(0.2)  # busy elsewhere: time enough for Arrow to read its 32 blocks ahead
        # a wait of STALL_S on Arrow's parse lets one read through: a few on a loaded machine, never Arrow's 32
        allowed = (taken + AHEAD + 1 + paced.stalls) * BLOCK
        assert raw.tell() <= allowed, (taken, raw.tell() // BLOCK, paced.stalls)
    ids += [i for b in batches for i in b.column("id").to_pylist()]
    assert ids == list(range(60_000))


def test_batches_dropped_before_any_is_taken_let_the_reader_go():
    # Arrow's reader, when freed, waits for the read it has in flight: that read must not wait for batches
    raw = io.BytesIO(csv_rows(-1, 0, count=60_000))
    paced = PacedInput(raw)

    def dropped() -> int:
        reader = pa_csv.open_csv(paced, read_options=pa_csv.ReadOptions(block_size=BLOCK))
        batches = paced.batches(reader)
        threading.Event().wait(0.2)  # the reader runs up to the batches not taken
        del reader, batches
        return raw.tell()

    assert finished(dropped) < len(raw.getvalue())


def test_a_read_held_for_batches_never_taken_ends_when_the_file_is_closed():
    raw = io.BytesIO(b"x" * 100)
    paced = PacedInput(raw)
    batches = paced.batches(pa.RecordBatchReader.from_batches(SCHEMA, iter([])))
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
    batches.close()


def test_files_paced_at_once_leave_arrows_io_threads_to_the_process_other_reads():
    # each file read ahead as far as it may go holds one of Arrow's IO threads (8, shared by every read of the
    # process): a file more, or any other Arrow read, would otherwise wait for a thread until a batch is taken
    data = csv_rows(-1, 0, count=60_000)
    opened: list[PacedBatches] = []

    def read_while_others_held() -> int:
        for _ in range(pa.io_thread_count() + 1):
            paced = PacedInput(io.BytesIO(data))
            opened.append(paced.batches(pa_csv.open_csv(paced, read_options=pa_csv.ReadOptions(block_size=BLOCK))))
        threading.Event().wait(0.3)  # each reader runs up to its held read
        return pa_csv.open_csv(io.BytesIO(data), read_options=pa_csv.ReadOptions(block_size=BLOCK)).read_all().num_rows

    try:
        assert finished(read_while_others_held) == 60_000
    finally:
        for batches in opened:
            batches.close()


def test_a_process_exiting_with_a_file_half_read_exits_cleanly():
    # the held read of a file never closed would call into the interpreter as it finalizes: a fatal error
    script = f"""
import io
import pyarrow.csv as pa_csv
from gobblin_py.io.paced_input import PacedInput
paced = PacedInput(io.BytesIO(b"n\\n" + b"1\\n" * 60_000))
LEFT_OPEN = [paced.batches(pa_csv.open_csv(paced, read_options=pa_csv.ReadOptions(block_size={BLOCK})))]
next(LEFT_OPEN[0])
import time; time.sleep(0.3)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
