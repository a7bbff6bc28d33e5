"""Hadoop's primitive wire encodings: big-endian ints, zero-compressed vints and ``Text``.

These are the building blocks of both the SequenceFile container and Gobblin's Writable state format.
All multi-byte integers are big-endian, as Java's ``DataOutput`` writes them.
"""

from __future__ import annotations

import struct
from typing import BinaryIO

from gobblin_py.sdk.errors import CorruptFileError

_INT = struct.Struct(">i")
_LONG = struct.Struct(">q")

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
_READ_STEP = 1 << 20  # larger reads go a MiB at a time: a buffered read of n bytes reserves n bytes first


def encode_vlong(value: int) -> bytes:
    """Hadoop ``WritableUtils.writeVLong``: 1 byte for -112..127, else a length byte and 1-8 value bytes."""
    if not LONG_MIN <= value <= LONG_MAX:
        raise ValueError(f"{value} does not fit in a Java long")
    if -112 <= value <= 127:
        return struct.pack(">b", value)
    base = -112
    if value < 0:
        value = ~value  # one's complement: the length byte carries the sign
        base = -120
    nbytes = (value.bit_length() + 7) // 8
    return struct.pack(">b", base - nbytes) + value.to_bytes(nbytes, "big")


encode_vint = encode_vlong


def vint_size(first_byte: int) -> int:
    """Total encoded size of a vint/vlong given its first byte (as an unsigned 0..255 value)."""
    signed = first_byte - 256 if first_byte > 127 else first_byte
    if signed >= -112:
        return 1
    if signed >= -120:
        return 1 + (-112 - signed)
    return 1 + (-120 - signed)


def decode_vlong(buf: bytes | memoryview, pos: int = 0) -> tuple[int, int]:
    """Decode a vlong at ``buf[pos]``; returns ``(value, next_pos)``. Raises ValueError when cut short."""
    if pos >= len(buf):
        raise ValueError("vint runs past the end of the data")
    first = buf[pos]
    signed = first - 256 if first > 127 else first
    if signed >= -112:
        return signed, pos + 1
    negative = signed < -120
    nbytes = (-120 - signed) if negative else (-112 - signed)
    end = pos + 1 + nbytes
    if end > len(buf):
        raise ValueError("vint runs past the end of the data")
    value = int.from_bytes(buf[pos + 1 : end], "big")
    return (~value if negative else value), end


def encode_text(value: str) -> bytes:
    """Hadoop ``Text`` serialisation: vint byte length, then UTF-8 (unpaired surrogates become '?', as in Java)."""
    data = value.encode("utf-8", "replace")
    return encode_vlong(len(data)) + data


class DataOutput:
    """An in-memory ``java.io.DataOutput`` with the Hadoop extras (vint, Text)."""

    __slots__ = ("_buf",)

    def __init__(self) -> None:
        self._buf = bytearray()

    def write(self, data: bytes) -> None:
        self._buf += data

    def write_int(self, value: int) -> None:
        self._buf += _INT.pack(value)

    def write_long(self, value: int) -> None:
        self._buf += _LONG.pack(value)

    def write_boolean(self, value: bool) -> None:
        self._buf.append(1 if value else 0)

    def write_text(self, value: str) -> None:
        data = value.encode("utf-8", "replace")
        if len(data) < 128:  # the common case: a one-byte length (what encode_vlong gives for 0..127)
            self._buf.append(len(data))
        else:
            self._buf += encode_vlong(len(data))
        self._buf += data

    def getvalue(self) -> bytes:
        return bytes(self._buf)

    def __len__(self) -> int:
        return len(self._buf)


class DataInput:
    """Reads ``java.io.DataInput`` values from a byte buffer; running short raises CorruptFileError.

    ``base_offset`` is added to positions in error messages, so that an error inside a decompressed value
    still points near the right place of the file.
    """

    __slots__ = ("_buf", "pos", "_what", "_base")

    def __init__(self, buf: bytes | memoryview, what: str = "data", base_offset: int = 0) -> None:
        self._buf = memoryview(buf)
        self.pos = 0
        self._what = what
        self._base = base_offset

    def _take(self, n: int, field: str) -> memoryview:
        end = self.pos + n
        if n < 0 or end > len(self._buf):
            raise CorruptFileError(
                self._what,
                f"{field} runs past the end of the {len(self._buf)}-byte {self._what} (truncated or corrupt)",
                self._base + self.pos,
            )
        chunk = self._buf[self.pos : end]
        self.pos = end
        return chunk

    def read_int(self, field: str = "int") -> int:
        return _INT.unpack(self._take(4, field))[0]

    def read_long(self, field: str = "long") -> int:
        return _LONG.unpack(self._take(8, field))[0]

    def read_boolean(self, field: str = "boolean") -> bool:
        return self._take(1, field)[0] != 0

    def read_vint(self, field: str = "vint") -> int:
        try:
            value, self.pos = decode_vlong(self._buf, self.pos)
        except ValueError:
            raise CorruptFileError(
                self._what, f"{field} runs past the end of the {self._what}", self._base + self.pos
            ) from None
        return value

    def read_text(self, field: str = "Text") -> str:
        buf, start = self._buf, self.pos
        if start < len(buf) and buf[start] < 128:  # a one-byte length (0..127), and within the buffer
            end = start + 1 + buf[start]
            if end <= len(buf):
                self.pos = end
                return str(buf[start + 1 : end], "utf-8", "replace")
        length = self.read_vint(field + " length")
        if length < 0:
            raise CorruptFileError(self._what, f"negative {field} length {length}", self._base + start)
        return bytes(self._take(length, field)).decode("utf-8", "replace")

    def remaining(self) -> int:
        return len(self._buf) - self.pos


class StreamInput:
    """Reads exact byte counts from a binary stream, tracking the offset for error messages.

    Used by the SequenceFile reader so that large files are streamed, never loaded whole.
    """

    def __init__(self, stream: BinaryIO, name: str) -> None:
        self._stream = stream
        self.name = name
        self.offset = 0

    def read_exact(self, n: int, field: str) -> bytes:
        if n > _READ_STEP:  # a length that lies costs what the file holds, not what it claims
            parts, wanted = [], n
            while wanted and (part := self._stream.read(min(wanted, _READ_STEP))):
                parts.append(part)
                wanted -= len(part)
            data = b"".join(parts)
        else:
            data = self._stream.read(n) if n else b""
        if len(data) != n:
            raise CorruptFileError(
                self.name,
                f"unexpected end of file while reading {field} (wanted {n} bytes, found {len(data)}): "
                "the file is truncated",
                self.offset,
            )
        self.offset += n
        return data

    def read_up_to(self, n: int) -> bytes:
        """Read at most ``n`` bytes; fewer only at end of file."""
        data = self._stream.read(n)
        self.offset += len(data)
        return data

    def read_int(self, field: str) -> int:
        return _INT.unpack(self.read_exact(4, field))[0]

    def read_boolean(self, field: str) -> bool:
        return self.read_exact(1, field)[0] != 0

    def read_vint(self, field: str) -> int:
        first = self.read_exact(1, field)
        rest = self.read_exact(vint_size(first[0]) - 1, field)
        return decode_vlong(first + rest)[0]

    def read_text(self, field: str) -> str:
        start = self.offset
        length = self.read_vint(field + " length")
        if length < 0 or length > 1 << 24:
            raise CorruptFileError(self.name, f"implausible {field} length {length}", start)
        return self.read_exact(length, field).decode("utf-8", "replace")
