"""State files that claim or inflate to more than any state holds: refused with exit 2, naming file and offset.

The bomb is a real SequenceFile: a valid header and one block whose values buffer is 2 MB of deflate that
inflates to 2 GiB of zeros. The CLI runs under an address-space limit of 1 GiB, so a reader that inflated
it whole would die of MemoryError; a bounded reader refuses it with one line.
"""

from __future__ import annotations

import io
import os
import resource
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from gobblin_py.sdk.errors import CorruptFileError
from gobblin_py.store import FsDatasetStateStore
from gobblin_py.store.hadoop_io import encode_text, encode_vlong
from gobblin_py.store.sequencefile import (
    DEFAULT_CODEC,
    SYNC_ESCAPE,
    TEXT_CLASS,
    Compression,
    SequenceFileHeader,
    SequenceFileReader,
    SequenceFileWriter,
)
from gobblin_py.store.state_files import read_state_file
from gobblin_py.store.writable import DATASET_STATE_CLASS
from tests.support.states import make_state

MIB = 1 << 20
BOMB_MIB = 2048  # inflates to 2 GiB: past the default limit, and past what the 1 GiB address space can hold
AS_LIMIT = 1 << 30


def zlib_zeros(mib: int) -> bytes:
    """A zlib stream of ``mib`` MiB of zeros, built without inflating them: one fully flushed deflate block of
    1 MiB of zeros repeated (full flushes make each copy independent), and the Adler-32 of n zeros."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    piece = compressor.compress(bytes(MIB)) + compressor.flush(zlib.Z_FULL_FLUSH)
    body = piece * mib + compressor.flush(zlib.Z_FINISH)
    size = mib * MIB
    return b"\x78\xda" + body + struct.pack(">I", ((size % 65521) << 16) | 1)


def block_file(buffers: list[bytes], count: int = 1) -> tuple[bytes, list[int]]:
    """A BLOCK SequenceFile of dataset states with one block made of ``buffers`` (each written as vint length +
    bytes); returns its bytes and the file offset of each buffer's data."""
    sync = bytes(range(16))
    data = bytearray(SequenceFileHeader(6, TEXT_CLASS, DATASET_STATE_CLASS, Compression.BLOCK, DEFAULT_CODEC,
                                        {}, sync).encode())
    data += SYNC_ESCAPE + sync + encode_vlong(count)
    offsets = []
    for buffer in buffers:
        data += encode_vlong(len(buffer))
        offsets.append(len(data))
        data += buffer
    return bytes(data), offsets


def bomb() -> tuple[bytes, int]:
    """The bomb file and the offset of its values buffer."""
    key = encode_text("")
    data, offsets = block_file([zlib.compress(encode_vlong(len(key))), zlib.compress(key),
                                zlib.compress(encode_vlong(BOMB_MIB * MIB)), zlib_zeros(BOMB_MIB)])
    return data, offsets[3]


def run_limited(*args: str) -> subprocess.CompletedProcess:
    """The real CLI, its address space limited to 1 GiB."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))

    return subprocess.run([sys.executable, "-m", "gobblin_py.cli", *args], capture_output=True, text=True,
                          timeout=300, preexec_fn=limit, env=os.environ.copy())


def file_job(root: Path, state_dir: Path, *extra: str) -> Path:
    data = root / "data"
    data.mkdir(parents=True)
    (data / "a.csv").write_text("id\n1\n2\n")
    job = root / "bomb.pull"
    job.write_text("\n".join([
        "job.name=Events", "source.class=FileBasedSource", f"source.filebased.data.directory={data}",
        "extract.table.name=events", "writer.file.pathType=TABLENAME", f"task.data.root.dir={root / 'work'}",
        f"data.publisher.final.dir={root / 'published'}", f"state.store.dir={state_dir}", "task.maxretries=0",
        *extra,
    ]) + "\n")
    return job


def assert_refused(result: subprocess.CompletedProcess, path: Path, offset: int) -> None:
    assert result.returncode == 2, result.stderr[-3000:]
    assert "Traceback" not in result.stderr and "MemoryError" not in result.stderr
    [line] = [line for line in result.stderr.splitlines() if line.startswith("gpy: error:")]
    assert str(path) in line and f"offset {offset}" in line and "inflates to more than" in line, line


def test_a_decompression_bomb_is_refused_by_state_show_import_and_run_in_bounded_memory(tmp_path):
    data, values_at = bomb()
    assert len(data) < 3 * MIB
    current = tmp_path / "state" / "Events" / "current.jst"
    current.parent.mkdir(parents=True)
    current.write_bytes(data)
    # the default limit (1 GiB) on the store folder; a lower one in the jobs, which makes refusing quicker
    assert_refused(run_limited("state", "show", str(tmp_path / "state")), current, values_at)
    lower = f"state.store.max.state.bytes={64 * MIB}"
    job = file_job(tmp_path / "job", tmp_path / "state", lower)
    assert_refused(run_limited("run", str(job), "--engine", "local"), current, values_at)
    assert not (tmp_path / "job" / "published").exists()

    importer = file_job(tmp_path / "importer", tmp_path / "importer-state", lower)
    assert_refused(run_limited("state", "import", str(importer), str(tmp_path / "state")), current, values_at)
    assert not (tmp_path / "importer-state" / "Events").exists()


def test_a_length_read_from_the_file_is_capped_before_anything_is_read(tmp_path):
    # a compressed buffer that says it is 2**62 bytes long, in a 200-byte file
    data, offsets = block_file([zlib.compress(b"\x00")])
    liar = data[: offsets[0] - 1] + encode_vlong(2**62) + data[offsets[0]:]
    with pytest.raises(CorruptFileError) as caught:
        read_state_file(liar, "liar.jst")
    assert caught.value.path == "liar.jst" and caught.value.offset == offsets[0] - 1
    assert "longer than" in caught.value.reason

    # an uncompressed record that says it is 2 GiB long, read from a real file
    header = SequenceFileHeader(6, TEXT_CLASS, DATASET_STATE_CLASS, Compression.NONE, None, {}, bytes(16)).encode()
    path = tmp_path / "record.jst"
    path.write_bytes(header + struct.pack(">ii", 2**31 - 1, 1) + b"\x00" * 10)
    with open(path, "rb") as stream, pytest.raises(CorruptFileError) as caught:
        list(SequenceFileReader(stream, str(path)))
    assert caught.value.offset == len(header) and "longer than" in caught.value.reason


def test_a_block_claiming_more_records_than_its_lengths_hold_is_corrupt():
    data, offsets = block_file([zlib.compress(b"\x00"), zlib.compress(b""), zlib.compress(b"\x00"),
                                zlib.compress(b"")], count=10**15)
    with pytest.raises(CorruptFileError) as caught:
        read_state_file(data, "many.jst")
    assert "record count" in caught.value.reason


def big_state():
    state = make_state("big")
    for index in range(200):  # about 60 KB of properties that compress well
        state.set_prop(f"gpy.test.property.{index}", f"value {index} " * 20)
    return state


def test_the_limit_is_the_key_state_store_max_state_bytes(tmp_path):
    FsDatasetStateStore(str(tmp_path)).persist_dataset_state(big_state())
    path = tmp_path / "Pull" / "big-current.jst"
    assert os.path.getsize(path) < 8_000
    small = FsDatasetStateStore.from_properties({"state.store.dir": str(tmp_path), "state.store.max.state.bytes": "20000"})
    with pytest.raises(CorruptFileError) as caught:
        small.get_latest_dataset_state("Pull", "big")
    assert caught.value.path == str(path) and "state.store.max.state.bytes" in caught.value.reason
    # the limit is measured before the state is kept, yet a state within it reads whole
    roomy = FsDatasetStateStore.from_properties({"state.store.dir": str(tmp_path), "state.store.max.state.bytes": "200000"})
    assert roomy.get_latest_dataset_state("Pull", "big") == big_state()
    assert FsDatasetStateStore(str(tmp_path)).get_latest_dataset_state("Pull", "big") == big_state()


def test_records_of_several_blocks_count_together():
    data = io.BytesIO()
    with SequenceFileWriter(data, block_size=100) as writer:  # one block per record
        for index in range(20):
            writer.append_text(f"k{index}", encode_text("x" * 1000))
    reader = SequenceFileReader(io.BytesIO(data.getvalue()), "many-blocks", max_bytes=10_000)
    with pytest.raises(CorruptFileError) as caught:
        list(reader)
    assert "inflates to more than 10000 bytes" in caught.value.reason
    assert len(list(SequenceFileReader(io.BytesIO(data.getvalue()), "many-blocks", max_bytes=30_000))) == 20
