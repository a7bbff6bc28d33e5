"""The record of one file to copy, and reading a file's bytes through its decodings.

A descriptor holds the source path (on the source filesystem), the destination relative to the publish root
(``data.publisher.final.dir``), the size and modification time the source had when the run was planned, and the
decodings its bytes go through on the way (``gzip``), in order. Converters change the destination and add
decodings; writers open the source and read it through them in bounded chunks.
"""

from __future__ import annotations

import gzip
import json
import posixpath
import zlib
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any, BinaryIO, Protocol

import pyarrow as pa

from gobblin_py.sdk.errors import CorruptFileError, UsageError

SCHEMA = pa.schema([
    pa.field("source", pa.string(), nullable=False),
    pa.field("destination", pa.string(), nullable=False),
    pa.field("size", pa.int64(), nullable=False),
    pa.field("mtime_ms", pa.int64(), nullable=False),
    pa.field("decodings", pa.list_(pa.string()), nullable=False),
])
DECODINGS = ("gzip",)
BATCH_ROWS = 1024


@dataclass(frozen=True)
class FileCopy:
    """One file to copy (a row of :data:`SCHEMA`)."""

    source: str
    destination: str
    size: int
    mtime_ms: int
    decodings: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "decodings": list(self.decodings)}

    @classmethod
    def from_json(cls, item: dict[str, Any]) -> FileCopy:
        return cls(item["source"], item["destination"], int(item["size"]), int(item["mtime_ms"]),
                   tuple(item.get("decodings") or ()))


def to_json(files: list[FileCopy]) -> str:
    """A work unit's files as the text its ``gpy.copy.files`` key holds."""
    return json.dumps([f.as_json() for f in files], separators=(",", ":"))


def from_json(text: str | None) -> list[FileCopy]:
    """The files a work unit's ``gpy.copy.files`` key holds (none when unset)."""
    return [FileCopy.from_json(item) for item in json.loads(text)] if text else []


def batches(files: list[FileCopy], rows: int = BATCH_ROWS) -> Iterator[pa.RecordBatch]:
    """The files as record batches of :data:`SCHEMA`, ``rows`` at a time."""
    for start in range(0, len(files), rows):
        chunk = files[start:start + rows]
        yield pa.RecordBatch.from_pydict({
            "source": [f.source for f in chunk], "destination": [f.destination for f in chunk],
            "size": [f.size for f in chunk], "mtime_ms": [f.mtime_ms for f in chunk],
            "decodings": [list(f.decodings) for f in chunk]}, schema=SCHEMA)


def rows(batch: pa.RecordBatch) -> list[FileCopy]:
    """The files of a batch (a writer handles files one at a time: each is its own stream of bytes)."""
    check_schema(batch.schema, "the copy writer")
    columns = batch.to_pydict()
    return [FileCopy(s, d, z, m, tuple(c)) for s, d, z, m, c in zip(columns["source"], columns["destination"],
                                                                   columns["size"], columns["mtime_ms"],
                                                                   columns["decodings"], strict=True)]


def check_schema(schema: pa.Schema, who: str) -> None:
    """UsageError unless ``schema`` has the descriptor's columns: ``who`` handles files planned by CopySource."""
    missing = [name for name in SCHEMA.names if name not in schema.names]
    if missing:
        raise UsageError(f"{who} handles the files CopySource plans (columns {', '.join(SCHEMA.names)}); the records "
                         f"it got have {', '.join(schema.names) or 'no columns'} (source.class must be CopySource)")


def mtime_ms(info: dict[str, Any]) -> int:
    """A listing entry's modification time in epoch milliseconds (0 when the filesystem gives none)."""
    for key in ("mtime", "LastModified", "last_modified", "updated", "modificationTime"):
        value = info.get(key)
        if value is not None:
            if isinstance(value, datetime):
                return int(value.timestamp() * 1000)
            return int(float(value) * 1000) if key != "modificationTime" else int(value)
    return 0


class ByteSource(Protocol):
    """What a copy reads from: an open file, a gzip stream over one, or an archive member (seekable, as gzip needs)."""

    def read(self, size: int = -1, /) -> bytes: ...

    def seek(self, offset: int, /) -> object: ...


def open_decoded(fs, entry: FileCopy, stack: ExitStack) -> ByteSource:
    """The source of ``entry`` opened on ``fs`` and read through its decodings; ``stack`` closes all of it."""
    stream: ByteSource = stack.enter_context(fs.open(entry.source, "rb"))
    for decoding in entry.decodings:
        if decoding != "gzip":
            raise UsageError(f"{entry.source}: unknown decoding {decoding!r} (known: {', '.join(DECODINGS)})")
        stream = stack.enter_context(gzip.GzipFile(fileobj=stream, mode="rb"))
    return stream


def copy_stream(reader: ByteSource, writer: BinaryIO, chunk: int, what: str) -> int:
    """Copy ``reader`` to ``writer`` ``chunk`` bytes at a time; the bytes copied. A corrupt compressed stream
    fails naming ``what``."""
    copied = 0
    try:
        while data := reader.read(chunk):
            writer.write(data)
            copied += len(data)
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise CorruptFileError(what, f"cannot be decoded as gzip ({exc})") from exc
    return copied


def parent(relative: str) -> str:
    """The folder of a destination relative to the publish root ('' at the root)."""
    return posixpath.dirname(relative)
