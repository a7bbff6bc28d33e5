"""Gobblin's byte writer (``SimpleDataWriterBuilder``): each record's bytes, optionally framed, into one file.

A record is the value of one column of a batch: the only column, else the column named by
``simple.writer.column`` (gpy's key), else a column named ``value`` (what the Kafka source gives) — a batch of
several columns and none of these is refused, naming its columns (project the one to write with a converter).
Binary values are written as they are, strings as UTF-8; a null value fails the task (Gobblin's writer
refuses null records too). Per record, Gobblin's layout:

    [8-byte big-endian length]  (simple.writer.prepend.size=true; the length counts the delimiter)
    the record's bytes
    [delimiter]                 (simple.writer.delimiter: the first byte of its UTF-8 encoding, after every record)

The file is ``part.<writer id>[.<writer.output.format>]`` (``writer.output.format=txt`` gives ``.txt``; unset: no
extension) with ``.gzip`` appended under ``writer.codec.type=gzip``. Framing is built with Arrow kernels for a
whole batch; nothing runs per record in Python.
"""

from __future__ import annotations

import sys
from array import array
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from gobblin_py.connectors.files.builder import FsDataWriterBuilder
from gobblin_py.formats.base import StagedFileWriter
from gobblin_py.formats.settings import FileWriterSettings
from gobblin_py.sdk.errors import GobblinPyError, UsageError
from gobblin_py.sdk.settings import Scope, setting
from gobblin_py.sdk.states import State

DELIMITER_KEY = "simple.writer.delimiter"
COLUMN_KEY = "simple.writer.column"
CODECS = {"none": "none", "uncompressed": "none", "gzip": "gzip"}


@dataclass(frozen=True)
class SimpleWriterSettings(FileWriterSettings):
    """The keys of :class:`SimpleDataWriterBuilder` (``.N`` suffixed per branch when a job has several)."""

    format: str | None = setting("writer.output.format", scope=Scope.BRANCH, example="txt",
                                 doc="only names the file extension (txt gives part.<id>.txt)")
    delimiter: str | None = setting(DELIMITER_KEY, scope=Scope.BRANCH,
                                    doc="written after every record: the first byte of its UTF-8 encoding "
                                        "(\\n for lines); unset: nothing")
    prepend_size: bool = setting("simple.writer.prepend.size", default=False, scope=Scope.BRANCH,
                                 doc="write each record's length (with the delimiter) first, as 8 bytes big-endian")
    column: str | None = setting(COLUMN_KEY, scope=Scope.BRANCH, default_doc="the only column, else value",
                                 doc="the column whose values are the records (gpy)")
    codec: str = setting("writer.codec.type", default="none", choices=tuple(CODECS), scope=Scope.BRANCH,
                         doc="none, or gzip (the file name ends .gzip)")


def record_column(schema: pa.Schema, wanted: str | None, key: str) -> int:
    """The index of the column whose values are the records; UsageError naming the columns when unclear."""
    if wanted:
        index = schema.get_field_index(wanted)
        if index < 0:
            raise UsageError(f"{key}={wanted}: the records have no such column (they have {', '.join(schema.names)})")
    elif len(schema) == 1:
        index = 0
    elif "value" in schema.names:
        index = schema.get_field_index("value")
    else:
        raise UsageError(f"the byte writer writes one column, and the records have {len(schema)} "
                         f"({', '.join(schema.names)}): name one with {key}, or project it with a converter")
    kind = schema.field(index).type
    if not (pa.types.is_binary(kind) or pa.types.is_large_binary(kind) or pa.types.is_string(kind)
            or pa.types.is_large_string(kind)):
        raise UsageError(f"column {schema.names[index]!r} is {kind}: the byte writer writes binary or string values "
                         "(cast it with converter.cast.fields, or use another writer.output.format)")
    return index


def framed(values: pa.Array, delimiter: bytes, prepend: bool) -> pa.Array:
    """Each value with its length before it and the delimiter after it, as one large_binary array."""
    data = values.cast(pa.large_binary())
    parts: list[Any] = [data]
    if prepend:
        lengths = pc.add(pc.binary_length(data), len(delimiter)).cast(pa.int64())
        packed = array("q")
        packed.frombytes(bytes(lengths.buffers()[1])[lengths.offset * 8:(lengths.offset + len(lengths)) * 8])
        if sys.byteorder == "little":
            packed.byteswap()  # Java's ByteBuffer.putLong: big-endian
        prefixes = pa.FixedSizeBinaryArray.from_buffers(pa.binary(8), len(data), [None, pa.py_buffer(packed.tobytes())])
        parts.insert(0, prefixes.cast(pa.large_binary()))
    if delimiter:
        parts.append(pa.scalar(delimiter, pa.large_binary()))
    if len(parts) == 1:
        return data
    return pc.binary_join_element_wise(*parts, pa.scalar(b"", pa.large_binary()))


def data_bytes(values: pa.Array) -> pa.Buffer | None:
    """The concatenated bytes of a large_binary array's values (a view of its data buffer, no copy)."""
    _, offsets, data = values.buffers()
    if data is None or len(values) == 0:
        return None
    view = memoryview(offsets).cast("q")
    start, end = view[values.offset], view[values.offset + len(values)]
    return data.slice(start, end - start)


class SimpleDataWriter(StagedFileWriter):
    """Streams one column's values, framed as Gobblin's SimpleDataWriter frames records, into one file."""

    codecs = CODECS

    def __init__(self, fs, staging_path: str, output_path: str, schema: pa.Schema, column: int = 0,
                 delimiter: bytes = b"", prepend: bool = False, codec: str = "none", **kwargs: Any) -> None:
        self.column = column
        self.delimiter = delimiter
        self.prepend = prepend
        if codec == "gzip":
            kwargs.setdefault("gzip_level", 6)
        super().__init__(fs, staging_path, output_path, schema, codec=codec, **kwargs)

    @classmethod
    def options(cls, settings: SimpleWriterSettings, state: State, schema: pa.Schema | None) -> dict[str, Any]:
        # the delimiter is read as written: it is usually whitespace (a newline)
        column = record_column(schema, settings.column, COLUMN_KEY) if schema is not None else 0
        return {"column": column, "delimiter": (settings.delimiter or "").encode("utf-8")[:1],
                "prepend": settings.prepend_size, "codec": settings.codec}

    @staticmethod
    def name_suffix(options: dict[str, Any]) -> str:
        return ".gzip" if options.get("codec") == "gzip" else ""

    def _open(self, sink) -> None:
        self._out = sink
        self._framed_bytes = 0

    def _write(self, batch: pa.RecordBatch) -> None:
        values = batch.column(self.column)
        if values.null_count:
            row = pc.index(pc.is_null(values), True).as_py()
            raise GobblinPyError(f"the byte writer cannot write a null record (column {batch.schema.names[self.column]!r}, "
                                 f"row {row} of a batch): drop nulls with a row quality policy")
        data = data_bytes(framed(values, self.delimiter, self.prepend))
        if data is not None:
            self._out.write(data)
            self._framed_bytes += data.size

    def _finish(self) -> None:
        pass


class SimpleDataWriterBuilder(FsDataWriterBuilder):
    """Gobblin's SimpleDataWriterBuilder: the byte writer, whatever ``writer.output.format`` says (it only names
    the file extension)."""

    default_format = ""
    settings_class = SimpleWriterSettings

    @classmethod
    def writer_for(cls, settings: Any) -> tuple[type[StagedFileWriter], str]:
        return SimpleDataWriter, (settings.format or "").strip()
