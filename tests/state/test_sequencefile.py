"""SequenceFile container: every compression mode, metadata, syncs, and corrupt or truncated input."""

import io
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gobblin_py.sdk.errors import CorruptFileError
from gobblin_py.store.hadoop_io import encode_text
from gobblin_py.store.sequencefile import (
    DEFAULT_CODEC,
    DEFLATE_CODEC,
    GZIP_CODEC,
    SYNC_ESCAPE,
    Compression,
    SequenceFileReader,
    SequenceFileWriter,
)
from tests.support.paths import GOBBLIN_DATA

SYNC = bytes(range(16))
records_strategy = st.lists(st.tuples(st.binary(max_size=300), st.binary(max_size=3000)), max_size=40)


def write(records, compression, codec=DEFAULT_CODEC, **kwargs):
    buffer = io.BytesIO()
    with SequenceFileWriter(buffer, compression=compression, codec=codec, sync_marker=SYNC, **kwargs) as writer:
        for key, value in records:
            writer.append(key, value)
    return buffer.getvalue()


def read(data):
    return list(SequenceFileReader(io.BytesIO(data), "f.seq"))


@pytest.mark.parametrize("compression", list(Compression))
@given(records=records_strategy)
def test_round_trip_every_mode(compression, records):
    assert read(write(records, compression)) == records


@pytest.mark.parametrize("codec", [DEFAULT_CODEC, DEFLATE_CODEC, GZIP_CODEC])
@pytest.mark.parametrize("compression", [Compression.RECORD, Compression.BLOCK])
def test_zlib_family_codecs(codec, compression):
    records = [(encode_text(f"k{i}"), encode_text("v" * i)) for i in range(50)]
    data = write(records, compression, codec)
    reader = SequenceFileReader(io.BytesIO(data))
    assert reader.header.codec == codec
    assert list(reader) == records


def test_header_fields_and_metadata():
    data = write([], Compression.BLOCK, metadata={"b": "2", "a": "1"})
    header = SequenceFileReader(io.BytesIO(data)).header
    assert header.version == 6
    assert header.key_class == header.value_class == "org.apache.hadoop.io.Text"
    assert header.compression is Compression.BLOCK and header.codec == DEFAULT_CODEC
    assert header.metadata == {"a": "1", "b": "2"}
    assert header.sync == SYNC
    assert data.endswith(SYNC) and len(data) == header.length  # an empty table: header only


def test_none_mode_inserts_syncs_every_interval_and_reader_skips_them():
    records = [(encode_text(f"key{i}"), b"x" * 100) for i in range(200)]
    data = write(records, Compression.NONE, sync_interval=2000)
    assert data.count(SYNC_ESCAPE + SYNC) >= 200 * 110 // 2000 - 1
    assert read(data) == records


def test_block_mode_rolls_blocks_at_block_size_each_behind_a_sync():
    records = [(encode_text(str(i)), bytes([i % 256]) * 500) for i in range(100)]
    data = write(records, Compression.BLOCK, block_size=5000)
    header_len = SequenceFileReader(io.BytesIO(data)).header.length
    assert data[header_len : header_len + 20] == SYNC_ESCAPE + SYNC
    assert data.count(SYNC_ESCAPE + SYNC) >= 10
    assert read(data) == records


def test_block_layout_matches_hadoop_for_one_record():
    """One block: sync, vint count, then four zlib buffers (key lengths, keys, value lengths, values)."""
    key, value = encode_text(""), b"\x00\x01\x02"
    data = write([(key, value)], Compression.BLOCK)
    body = data[SequenceFileReader(io.BytesIO(data)).header.length :]
    assert body[:20] == SYNC_ESCAPE + SYNC
    assert body[20] == 1
    pos, buffers = 21, []
    for _ in range(4):
        length = body[pos]
        buffers.append(zlib.decompress(body[pos + 1 : pos + 1 + length]))
        pos += 1 + length
    assert buffers == [b"\x01", b"\x00", b"\x03", value]
    assert pos == len(body)


@pytest.mark.parametrize("compression", [Compression.BLOCK, Compression.RECORD])
def test_truncation_anywhere_is_an_error_with_offset(compression):
    data = write([(encode_text("urn"), b"v" * 200)], compression)
    for cut in range(1, len(data)):
        if cut == SequenceFileReader(io.BytesIO(data)).header.length:
            continue  # a header-only file is a valid empty table
        with pytest.raises(CorruptFileError) as err:
            read(data[:cut])
        assert err.value.path == "f.seq"
        assert err.value.offset is not None or "shorter than its header" in str(err.value)


def test_none_mode_truncation_inside_a_record_is_an_error():
    records = [(encode_text("a"), b"1" * 50), (encode_text("b"), b"2" * 50)]
    data = write(records, Compression.NONE)
    with pytest.raises(CorruptFileError, match="truncated"):
        read(data[:-10])


def test_empty_and_foreign_files():
    with pytest.raises(CorruptFileError, match="empty or shorter than its header"):
        read(b"")
    with pytest.raises(CorruptFileError, match="not a SequenceFile"):
        read(b"PAR1 something else entirely")


def test_unsupported_version_and_codec_are_named():
    data = bytearray(write([], Compression.BLOCK))
    data[3] = 3
    with pytest.raises(CorruptFileError, match="unsupported SequenceFile version 3"):
        read(bytes(data))
    header = b"SEQ\x06" + encode_text("org.apache.hadoop.io.Text") * 2 + b"\x01\x01"
    header += encode_text("org.apache.hadoop.io.compress.SnappyCodec") + b"\x00\x00\x00\x00" + SYNC
    with pytest.raises(CorruptFileError, match="unsupported compression codec 'org.apache.hadoop.io.compress.SnappyCodec'"):
        read(header)


def test_wrong_sync_marker_is_corruption():
    data = bytearray(write([(b"\x01k", b"v")], Compression.BLOCK))
    header_len = SequenceFileReader(io.BytesIO(bytes(data))).header.length
    data[header_len + 5] ^= 0xFF
    with pytest.raises(CorruptFileError, match="sync marker does not match"):
        read(bytes(data))


def test_corrupt_compressed_buffer_is_reported():
    data = bytearray(write([(b"\x01k", b"value" * 20)], Compression.BLOCK))
    data[-3] ^= 0xFF
    with pytest.raises(CorruptFileError, match="does not decompress"):
        read(bytes(data))


def test_streaming_reader_does_not_read_ahead():
    """Records come out one block at a time: the stream is consumed lazily."""
    records = [(encode_text(str(i)), b"z" * 1000) for i in range(60)]
    data = write(records, Compression.BLOCK, block_size=10_000)
    stream = io.BytesIO(data)
    reader = iter(SequenceFileReader(stream))
    next(reader)
    assert stream.tell() < len(data) // 3


def test_reads_gobblins_own_state_table():
    data = (GOBBLIN_DATA / "testTable").read_bytes()
    reader = SequenceFileReader(io.BytesIO(data))
    assert reader.header.value_class == "gobblin.configuration.State"
    assert [key for key, _ in reader] == [encode_text(k) for k in ("s1", "s2", "s3")]
