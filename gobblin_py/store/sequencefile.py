"""Hadoop SequenceFile reader and writer (format version 6), in pure Python.

Supports the three compression modes (NONE, RECORD, BLOCK) with Hadoop's zlib-family codecs
(``DefaultCodec`` — what Gobblin writes — plus ``DeflateCodec`` and ``GzipCodec``), file metadata, sync markers
and sync escapes. The reader streams: it holds one record (NONE/RECORD) or one block (BLOCK) in memory at a
time, so a large file is never loaded whole; and it refuses a file whose records would inflate to more than a
limit (``MAX_INFLATED_BYTES`` unless told otherwise) before it spends the memory. Keys and values are handled
as their serialised bytes; the caller decodes them (``Text`` for keys, Gobblin Writables for values).

Reading also accepts format versions 4 and 5 (no metadata; version 4 has no codec name and implies
``DefaultCodec``). Anything else, and any codec outside the zlib family, is refused with a clear error.
"""

from __future__ import annotations

import enum
import gzip
import os
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import BinaryIO

from gobblin_py.sdk.errors import CorruptFileError
from gobblin_py.store.hadoop_io import (
    DataOutput,
    StreamInput,
    decode_vlong,
    encode_text,
    encode_vlong,
)

MAGIC = b"SEQ"
VERSION = 6
SYNC_ESCAPE = b"\xff\xff\xff\xff"  # int -1
SYNC_SIZE = 16
# Hadoop 2.x inserts a sync entry every 100 sync-entry sizes in NONE/RECORD files (Gobblin builds on 2.x).
DEFAULT_SYNC_INTERVAL = 100 * (4 + SYNC_SIZE)
# io.seqfile.compress.blocksize: a block is flushed once its raw keys + values reach this many bytes.
DEFAULT_BLOCK_SIZE = 1_000_000

TEXT_CLASS = "org.apache.hadoop.io.Text"
DEFAULT_CODEC = "org.apache.hadoop.io.compress.DefaultCodec"
DEFLATE_CODEC = "org.apache.hadoop.io.compress.DeflateCodec"
GZIP_CODEC = "org.apache.hadoop.io.compress.GzipCodec"


class Compression(enum.Enum):
    """How a SequenceFile compresses its records."""

    NONE = "NONE"
    RECORD = "RECORD"
    BLOCK = "BLOCK"


# The most bytes a file's records may inflate to, all blocks together, unless the reader is told otherwise. A
# dataset state is far smaller: gpy's state of a 10,000-partition Kafka topic is about 22 MB (2.2 KB per
# partition), Gobblin's, which copies the job's configuration into every task, about 100-300 MB; and Hadoop's
# own reader cannot hold a buffer of 2 GiB. Anything larger is a decompression bomb or a corrupt file.
MAX_INFLATED_BYTES = 1 << 30
# Deflate turns one byte into at most 1032: data shorter than limit / 1032 cannot inflate past the limit.
_DEFLATE_MAX_RATIO = 1032
_MEASURE_STEP = 1 << 20  # bytes inflated (and dropped) at a time while measuring


class _TooLarge(Exception):
    """Data inflates to more than the limit it was given."""


def _inflate_stream(data: bytes, wbits: int, limit: int, keep: bool = True) -> bytes:
    """Inflate one complete stream, never producing more than ``limit`` + 1 bytes (raises _TooLarge past it).

    With ``keep`` false the output is only counted, ``_MEASURE_STEP`` bytes at a time, and b"" returned: memory
    stays small whatever the stream inflates to.
    """
    decompressor = zlib.decompressobj(wbits)
    pieces, size, pending = [], 0, data
    while True:
        step = limit + 1 - size if keep else min(_MEASURE_STEP, limit + 1 - size)
        piece = decompressor.decompress(pending, step)
        size += len(piece)
        if size > limit:
            raise _TooLarge()
        if keep:
            pieces.append(piece)
        pending = decompressor.unconsumed_tail
        if decompressor.eof or (not pending and len(piece) < step):
            break
    if not decompressor.eof:
        raise zlib.error("compressed stream is incomplete")
    if decompressor.unused_data:
        raise zlib.error(f"{len(decompressor.unused_data)} stray bytes after the compressed stream")
    return b"".join(pieces)


def _raw_deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(6, zlib.DEFLATED, -15)
    return compressor.compress(data) + compressor.flush()


# codec class name -> (compress, the zlib window bits that decompress it); each call handles one complete stream.
_CODECS: dict[str, tuple[Callable[[bytes], bytes], int]] = {
    DEFAULT_CODEC: (zlib.compress, 15),
    DEFLATE_CODEC: (_raw_deflate, -15),
    GZIP_CODEC: (lambda data: gzip.compress(data, mtime=0), 31),
}


def _codec(name: str, path: str) -> tuple[Callable[[bytes], bytes], int]:
    try:
        return _CODECS[name]
    except KeyError:
        supported = ", ".join(sorted(_CODECS))
        raise CorruptFileError(
            path, f"unsupported compression codec {name!r} (supported: {supported})"
        ) from None


@dataclass(frozen=True)
class SequenceFileHeader:
    """The header of a SequenceFile: class names, compression, metadata and the sync marker."""

    version: int
    key_class: str
    value_class: str
    compression: Compression
    codec: str | None
    metadata: dict[str, str] = field(default_factory=dict)
    sync: bytes = b""
    length: int = 0  # header size in bytes

    def encode(self) -> bytes:
        out = DataOutput()
        out.write(MAGIC)
        out.write(bytes([self.version]))
        out.write_text(self.key_class)
        out.write_text(self.value_class)
        out.write_boolean(self.compression is not Compression.NONE)
        out.write_boolean(self.compression is Compression.BLOCK)
        if self.compression is not Compression.NONE:
            out.write_text(self.codec or DEFAULT_CODEC)
        out.write_int(len(self.metadata))
        for key in sorted(self.metadata):  # Hadoop keeps metadata in a TreeMap
            out.write_text(key)
            out.write_text(self.metadata[key])
        out.write(self.sync)
        return out.getvalue()


def _read_header(inp: StreamInput) -> SequenceFileHeader:
    magic = inp.read_up_to(3)
    if magic != MAGIC:
        if len(magic) < 3:
            raise CorruptFileError(inp.name, "not a SequenceFile: the file is empty or shorter than its header", 0)
        raise CorruptFileError(inp.name, f"not a SequenceFile: starts with {magic!r} instead of b'SEQ'", 0)
    version = inp.read_exact(1, "version")[0]
    if not 4 <= version <= VERSION:
        raise CorruptFileError(
            inp.name, f"unsupported SequenceFile version {version} (versions 4 to 6 are supported)", 3
        )
    key_class = inp.read_text("key class name")
    value_class = inp.read_text("value class name")
    compressed = inp.read_boolean("compression flag")
    block = inp.read_boolean("block-compression flag")
    if block and not compressed:
        raise CorruptFileError(inp.name, "header says block-compressed but not compressed", inp.offset - 1)
    codec: str | None = None
    if compressed:
        codec = inp.read_text("codec class name") if version >= 5 else DEFAULT_CODEC
        _codec(codec, inp.name)
    metadata: dict[str, str] = {}
    if version >= 6:
        count_at = inp.offset
        count = inp.read_int("metadata entry count")
        if count < 0:
            raise CorruptFileError(inp.name, f"negative metadata entry count {count}", count_at)
        for _ in range(count):
            key = inp.read_text("metadata key")
            metadata[key] = inp.read_text("metadata value")
    sync = inp.read_exact(SYNC_SIZE, "sync marker")
    compression = Compression.BLOCK if block else Compression.RECORD if compressed else Compression.NONE
    return SequenceFileHeader(version, key_class, value_class, compression, codec, metadata, sync, inp.offset)


class SequenceFileReader:
    """Streams the records of a SequenceFile as ``(key_bytes, value_bytes)`` pairs.

    ``name`` is used in error messages (a path, typically). Errors are :class:`CorruptFileError` carrying the
    byte offset and the reason. The header is read on construction. The records of the whole file may take at
    most ``max_bytes`` once inflated (keys, values and a block's length buffers): every length read from the
    file is checked against it before anything is read, and compressed data that could inflate past it is
    measured, in small steps, before it is kept. ``limit_key`` names the setting that raises the limit.
    """

    def __init__(self, stream: BinaryIO, name: str = "<stream>", max_bytes: int = MAX_INFLATED_BYTES,
                 limit_key: str | None = None) -> None:
        self._inp = StreamInput(stream, name)
        self.name = name
        self.max_bytes = max_bytes
        self._limit_hint = f" ({limit_key} sets the limit)" if limit_key else ""
        self._inflated = 0  # bytes of records (and length buffers) produced so far
        self.header = _read_header(self._inp)
        self._wbits = _codec(self.header.codec, name)[1] if self.header.codec else None

    def __iter__(self) -> Iterator[tuple[bytes, bytes]]:
        if self.header.compression is Compression.BLOCK:
            return self._iter_blocks()
        return self._iter_records()

    def _fail(self, reason: str, offset: int) -> CorruptFileError:
        return CorruptFileError(self.name, reason, offset)

    def _check_length(self, length: int, what: str, at: int) -> None:
        """Refuse a length read from the file before reading that many bytes."""
        if length < 0:
            raise self._fail(f"negative {what} length {length}", at)
        if length > self.max_bytes:
            raise self._fail(f"{what} length {length} is longer than the {self.max_bytes} bytes this file's records "
                             f"may take: the file is corrupt{self._limit_hint}", at)

    def _spend(self, size: int, what: str, at: int) -> None:
        self._inflated += size
        if self._inflated > self.max_bytes:
            raise self._too_large(what, at)

    def _too_large(self, what: str, at: int) -> CorruptFileError:
        return self._fail(f"{what} inflates to more than {self.max_bytes} bytes, the most this file's records may "
                          f"take: a decompression bomb or a corrupt file{self._limit_hint}", at)

    def _check_sync(self, at: int) -> None:
        marker = self._inp.read_exact(SYNC_SIZE, "sync marker")
        if marker != self.header.sync:
            raise self._fail("sync marker does not match the header's: the file is corrupt", at)

    def _read_int_or_eof(self, field: str) -> bytes | None:
        at = self._inp.offset
        raw = self._inp.read_up_to(4)
        if not raw:
            return None
        if len(raw) < 4:
            raise self._fail(f"unexpected end of file inside {field}: the file is truncated", at)
        return raw

    def _iter_records(self) -> Iterator[tuple[bytes, bytes]]:
        inp = self._inp
        while True:
            at = inp.offset
            raw = self._read_int_or_eof("record length")
            if raw is None:
                return
            if raw == SYNC_ESCAPE:
                self._check_sync(at)
                at = inp.offset
                raw = self._read_int_or_eof("record length")
                if raw is None:
                    return
            record_len = int.from_bytes(raw, "big", signed=True)
            key_len = inp.read_int("key length")
            if record_len < 0 or key_len < 0 or key_len > record_len:
                raise self._fail(f"bad record lengths (record {record_len}, key {key_len})", at)
            self._check_length(record_len, "record", at)
            self._spend(record_len if self._wbits is None else key_len, "record", at)
            key = inp.read_exact(key_len, "record key")
            value_at = inp.offset
            value = inp.read_exact(record_len - key_len, "record value")
            if self._wbits is not None:
                value = self._inflate(value, "record value", value_at)
            yield key, value

    def _inflate(self, data: bytes, what: str, at: int) -> bytes:
        assert self._wbits is not None  # only a compressed file's records and blocks are inflated
        left = self.max_bytes - self._inflated
        try:
            if len(data) * _DEFLATE_MAX_RATIO > left:  # could be a bomb: measure it without keeping it
                _inflate_stream(data, self._wbits, left, keep=False)
            out = _inflate_stream(data, self._wbits, left)
        except _TooLarge:
            raise self._too_large(what, at) from None
        except zlib.error as exc:
            raise self._fail(f"{what} does not decompress ({exc})", at) from None
        self._spend(len(out), what, at)
        return out

    def _read_buffer(self, what: str) -> bytes:
        at = self._inp.offset
        length = self._inp.read_vint(f"{what} length")
        self._check_length(length, what, at)
        data_at = self._inp.offset
        return self._inflate(self._inp.read_exact(length, what), what, data_at)

    def _split(self, lengths_buf: bytes, data: bytes, count: int, what: str, at: int) -> list[bytes]:
        pieces, pos, start = [], 0, 0
        try:
            for _ in range(count):
                length, pos = decode_vlong(lengths_buf, pos)
                if length < 0:
                    raise ValueError(f"negative {what} length")
                pieces.append(data[start : start + length])
                start += length
        except ValueError as exc:
            raise self._fail(f"{what} lengths of the block are corrupt ({exc})", at) from None
        if pos != len(lengths_buf) or start != len(data):
            raise self._fail(
                f"block {what} lengths do not add up ({start} of {len(data)} bytes, "
                f"{pos} of {len(lengths_buf)} length bytes used)",
                at,
            )
        return pieces

    def _iter_blocks(self) -> Iterator[tuple[bytes, bytes]]:
        inp = self._inp
        while True:
            at = inp.offset
            raw = self._read_int_or_eof("block sync escape")
            if raw is None:
                return
            if raw != SYNC_ESCAPE:
                raise self._fail("expected a sync entry before the block", at)
            self._check_sync(at)
            block_at = inp.offset
            count = inp.read_vint("block record count")
            if count < 0:
                raise self._fail(f"negative block record count {count}", block_at)
            key_lengths = self._read_buffer("key-lengths buffer")
            if count > len(key_lengths):  # each record's key length takes at least one byte
                raise self._fail(f"block record count {count} is more than its key-lengths buffer holds", block_at)
            keys = self._read_buffer("keys buffer")
            value_lengths = self._read_buffer("value-lengths buffer")
            values = self._read_buffer("values buffer")
            key_list = self._split(key_lengths, keys, count, "key", block_at)
            value_list = self._split(value_lengths, values, count, "value", block_at)
            yield from zip(key_list, value_list, strict=True)


class SequenceFileWriter:
    """Writes a SequenceFile to a binary stream, laid out exactly as Hadoop's ``SequenceFile.Writer`` does.

    ``append`` takes the serialised key and value; :meth:`append_text` serialises a ``Text`` key for you.
    Call :meth:`close` (or use as a context manager) to flush the last block; the stream itself is left open.
    """

    def __init__(
        self,
        stream: BinaryIO,
        key_class: str = TEXT_CLASS,
        value_class: str = TEXT_CLASS,
        compression: Compression = Compression.BLOCK,
        codec: str = DEFAULT_CODEC,
        metadata: Mapping[str, str] | None = None,
        sync_marker: bytes | None = None,
        block_size: int = DEFAULT_BLOCK_SIZE,
        sync_interval: int = DEFAULT_SYNC_INTERVAL,
    ) -> None:
        sync = sync_marker if sync_marker is not None else os.urandom(SYNC_SIZE)
        if len(sync) != SYNC_SIZE:
            raise ValueError("a sync marker is 16 bytes")
        self.header = SequenceFileHeader(
            VERSION,
            key_class,
            value_class,
            compression,
            codec if compression is not Compression.NONE else None,
            dict(metadata or {}),
            sync,
        )
        self._compress = _codec(codec, "<writer>")[0] if compression is not Compression.NONE else None
        self._stream = stream
        self._pos = 0
        self._last_sync = 0
        self._block_size = block_size
        self._sync_interval = sync_interval
        self._block: list[tuple[bytes, bytes]] = []
        self._block_bytes = 0
        self._closed = False
        self._write(self.header.encode())

    def _write(self, data: bytes) -> None:
        self._stream.write(data)
        self._pos += len(data)

    def _sync(self) -> None:
        if self._last_sync != self._pos:
            self._write(SYNC_ESCAPE + self.header.sync)
            self._last_sync = self._pos

    def append_text(self, key: str, value: bytes) -> None:
        """Append a record whose key is a Hadoop ``Text``."""
        self.append(encode_text(key), value)

    def append(self, key: bytes, value: bytes) -> None:
        """Append one record from its serialised key and value."""
        if self._closed:
            raise ValueError("the writer is closed")
        if self.header.compression is Compression.BLOCK:
            self._block.append((key, value))
            self._block_bytes += len(key) + len(value)
            if self._block_bytes >= self._block_size:
                self._flush_block()
            return
        if self._pos >= self._last_sync + self._sync_interval:
            self._sync()
        if self._compress is not None:
            value = self._compress(value)
        self._write((len(key) + len(value)).to_bytes(4, "big") + len(key).to_bytes(4, "big") + key + value)

    def _flush_block(self) -> None:
        if not self._block:
            return
        self._sync()
        assert self._compress is not None  # block compression always has a codec
        out = bytearray(encode_vlong(len(self._block)))
        for buffer in (
            b"".join(encode_vlong(len(k)) for k, _ in self._block),
            b"".join(k for k, _ in self._block),
            b"".join(encode_vlong(len(v)) for _, v in self._block),
            b"".join(v for _, v in self._block),
        ):
            packed = self._compress(buffer)
            out += encode_vlong(len(packed)) + packed
        self._write(bytes(out))
        self._block.clear()
        self._block_bytes = 0

    def close(self) -> None:
        if not self._closed:
            self._flush_block()
            self._closed = True

    def __enter__(self) -> SequenceFileWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
