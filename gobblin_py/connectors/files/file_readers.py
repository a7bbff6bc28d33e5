"""Opening one data file of the file source as a stream of Arrow batches, read to the dataset's schema if it has one.

CSV files are parsed with the schema's column types and JSON lines with it as their explicit schema, so a file is
converted straight to the dataset's types rather than inferred and cast; Parquet and Avro files keep their own
types and are cast batch by batch (:mod:`gobblin_py.connectors.files.file_extractor`). The errors a user can act on — a
row longer than a block, a value that is not of its column's type, bytes that are not UTF-8 in a text column —
name the file, the column, the types, the record and the key or fix.

CSV and JSON lines read to a schema that types every column are parsed :data:`READ_BLOCK` bytes at a time, not the
configured block: the configured block only bounds the longest row, and a smaller block keeps a task's memory small
(each block and what is parsed from it is a fresh allocation). A row longer than the read block reopens the file
with the configured block, going on after the records already read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.json as pa_json
import pyarrow.parquet as pq

from gobblin_py.connectors.files.file_settings import MAX_BLOCK, SCHEMA_CHANGE_KEY, FileSourceSettings, file_format
from gobblin_py.connectors.files.record_lines import json_records, record_place
from gobblin_py.formats.bad_values import first_bad_row, shown
from gobblin_py.io.native_io import open_input
from gobblin_py.io.paced_input import AHEAD as PACED_AHEAD
from gobblin_py.io.paced_input import PacedInput
from gobblin_py.sdk.errors import DataError, GobblinPyError, UsageError

_CSV_CONVERSION = re.compile(r"In CSV column #(\d+): .*CSV conversion error to (.+?): invalid (?:value|UTF8)")
_JSON_CHANGE = re.compile(r"Column\(/([^)]*)\) changed from (\w+) to (\w+) in row (\d+)")
_JSON_UNEXPECTED = "unexpected field"
SMALL_FILE_BLOCK = 64 << 10  # the block a file smaller than its configured block is read in, when it fits
READ_BLOCK = 1 << 20  # Arrow's own default block: bytes of CSV or JSON parsed at a time when the schema is known


@dataclass
class OpenFile:
    """A data file opened for reading: its schema (the dataset's types where it has them) and its batches."""

    path: str
    fmt: str
    schema: pa.Schema
    batches: Iterator[pa.RecordBatch]
    stream: Any


class _Streams:
    """Streams closed as one."""

    def __init__(self, *streams: Any) -> None:
        self.streams = streams

    def close(self) -> None:
        for stream in self.streams:
            stream.close()


def typed_columns(reference: pa.Schema | None) -> dict[str, pa.DataType]:
    """The columns whose type the dataset's schema knows (a ``null`` column is not known yet)."""
    return {} if reference is None else {f.name: f.type for f in reference if not pa.types.is_null(f.type)}


def open_file(fs: Any, path: str, settings: FileSourceSettings, reference: pa.Schema | None = None,
              origin: str = "", block_size: int | None = None) -> OpenFile:
    """``path`` opened for reading (``reference``: the dataset's schema, learnt from ``origin``).

    ``block_size`` bounds what CSV and JSON types are inferred from, below the configured block (which is used
    when a row does not fit it); CSV and JSON lines whose every column ``reference`` types are read
    :data:`READ_BLOCK` bytes at a time unless it says otherwise.
    """
    fmt = file_format(path, settings.format)
    _, configured = settings.block_size_key(fmt)
    if fmt in ("csv", "json") and block_size is None and _types_all(reference):
        block_size = READ_BLOCK
    smaller = block_size is not None and block_size < configured
    stream = open_input(fs, path)
    try:
        schema, batches = _open(stream, path, fmt, settings, reference, block_size)
    except (pa.ArrowException, OSError) as exc:
        if smaller and "straddling" in str(exc):  # a row longer than the smaller block
            try:
                retried = open_file(fs, path, settings, reference, origin, configured)
            except BaseException:
                stream.close()
                raise
            # closed with the file read in its place: Arrow may still be reading ahead from it on a thread of its
            # own, and a read landing after the close would take bytes from whatever file reuses its descriptor
            retried.stream = _Streams(retried.stream, stream)
            return retried
        stream.close()
        raise_for(exc, fs, path, settings, reference, origin)
        raise GobblinPyError(f"{path}: cannot read as {fmt}: {exc}") from exc
    except BaseException:
        stream.close()
        raise
    if smaller and fmt in ("csv", "json"):
        batches = _regrown(batches, fs, path, lambda again: _open(again, path, fmt, settings, reference, configured)[1])
    opened = OpenFile(path, fmt, schema, batches, stream)
    if fmt == "csv":
        check_text(fs, opened, settings)
    return opened


def _types_all(reference: pa.Schema | None) -> bool:
    """Whether ``reference`` gives every column a type: a CSV or JSON file's are then not inferred from its block."""
    return reference is not None and len(typed_columns(reference)) == len(reference) > 0


def _regrown(batches: Iterator[pa.RecordBatch], fs: Any, path: str,
             reopen: Callable[[Any], Iterator[pa.RecordBatch]]) -> Iterator[pa.RecordBatch]:
    """``batches``, and after a row longer than their block, the rest of ``path`` as ``reopen(stream)`` reads it
    (with the configured block): the file is parsed again from its start and the records already given are
    skipped, so each comes once."""
    given = 0
    while True:
        try:
            batch = next(batches)
        except StopIteration:
            return
        except pa.ArrowInvalid as exc:
            if "straddling" not in str(exc):
                raise
            break
        given += batch.num_rows
        yield batch
    with open_input(fs, path) as stream:
        for batch in reopen(stream):
            if given >= batch.num_rows:
                given -= batch.num_rows
                continue
            yield batch.slice(given) if given else batch
            given = 0


def _open(stream: Any, path: str, fmt: str, settings: FileSourceSettings, reference: pa.Schema | None,
          block_size: int | None) -> tuple[pa.Schema, Iterator[pa.RecordBatch]]:
    known = typed_columns(reference)
    if fmt == "parquet":
        parquet = pq.ParquetFile(stream)
        return parquet.schema_arrow, parquet.iter_batches(batch_size=settings.batch_size)
    if fmt == "avro":
        from gobblin_py.formats.avro_read import read_avro  # the Avro codec only for Avro files

        return read_avro(stream, path, settings.avro_schema, settings.batch_size)
    if block_size is not None:
        block_size = min(block_size, settings.block_size_key(fmt)[1])
    block_size = _whole_file_block(stream, block_size or settings.block_size_key(fmt)[1])
    if _within_read_ahead(stream, block_size):  # nothing to pace: Arrow reads it natively, all at once
        reader = _text_reader(stream, fmt, settings, block_size, known)
        return reader.schema, iter(reader)
    paced = PacedInput(stream)  # Arrow would read 32 blocks ahead of the batches taken
    try:
        reader = _text_reader(paced, fmt, settings, block_size, known)
    except BaseException:
        paced.close()
        raise
    return reader.schema, paced.batches(reader)


def _text_reader(stream: Any, fmt: str, settings: FileSourceSettings, block_size: int,
                 known: dict[str, pa.DataType]) -> Any:
    if fmt == "json":
        explicit = pa.schema(list(known.items())) if known else None
        return pa_json.open_json(stream, read_options=pa_json.ReadOptions(block_size=block_size),
                                 parse_options=pa_json.ParseOptions(explicit_schema=explicit))
    return _csv(stream, settings, block_size, pa_csv.ConvertOptions(column_types=known))


def _within_read_ahead(stream: Any, block_size: int) -> bool:
    """Whether ``stream`` is a local file no longer than the blocks a paced read lets Arrow read ahead."""
    return isinstance(stream, pa.OSFile) and stream.size() <= block_size * PACED_AHEAD


def _whole_file_block(stream: Any, block_size: int) -> int:
    """``block_size``, or for a local file smaller than that block a block just large enough to hold it: the
    types are inferred from the same bytes (the whole file) and the file is parsed the same, but a file of a few
    bytes no longer has a block of megabytes allocated (and returned to the system) for it."""
    size = stream.size() if isinstance(stream, pa.OSFile) else None
    return block_size if size is None or size >= block_size else max(size + 1, SMALL_FILE_BLOCK)


def _csv(stream: Any, settings: FileSourceSettings, block_size: int | None,
         convert: pa_csv.ConvertOptions) -> Any:
    header, names = settings.csv_header, list(settings.csv_columns) or None
    return pa_csv.open_csv(
        stream,
        read_options=pa_csv.ReadOptions(autogenerate_column_names=not header and not names, column_names=names,
                                        block_size=block_size or settings.csv_block_size),
        # RFC 4180: a quoted value may hold line breaks; without this Arrow cuts blocks at any line break, and a
        # block boundary inside such a value fails as a row with too few columns (about 5 % more parsing CPU)
        parse_options=pa_csv.ParseOptions(delimiter=settings.delimiter, newlines_in_values=True),
        convert_options=convert,
    )


def raise_for(exc: BaseException, fs: Any, path: str, settings: FileSourceSettings, reference: pa.Schema | None,
              origin: str, rows: int = 0, schema: pa.Schema | None = None) -> None:
    """Raise the UsageError that says what to do about ``exc``, when it is one a user can act on (``rows``: the
    records of ``path`` read before it; ``schema``: the fields they were read with)."""
    fmt = file_format(path, settings.format)
    text = str(exc)
    if fmt in ("csv", "json") and ("straddling" in text or "block size" in text):
        key, size = settings.block_size_key(fmt)
        row = "line" if fmt == "json" else "row"
        where = f" (the {row} after its record {rows})" if rows else ""
        quote = (" (a quoted value runs on, line breaks and all, to its closing quote: check for a quote never "
                 "closed)") if fmt == "csv" else ""
        raise UsageError(f"{path}: a {fmt.upper()} {row}{where} is longer than {key} ({size} bytes){quote}: raise "
                         f"{key} above the longest {row} (at most {MAX_BLOCK >> 20}MB), or split the {row}") from exc
    if fmt in ("csv", "json") and isinstance(exc, pa.ArrowMemoryError):
        key, size = settings.block_size_key(fmt)
        where = f"after its record {rows}" if rows else "in its first block"
        raise GobblinPyError(f"{path}: out of memory reading it {size} bytes at a time ({key}), {where}: {text}; "
                             f"lower {key} (a task holds a few blocks at once), or give the task more memory") from exc
    conversion = _CSV_CONVERSION.search(text) if fmt == "csv" else None
    if conversion is not None:
        names = _csv_schema(fs, path, settings).names
        index = int(conversion.group(1))
        if index < len(names):
            _raise_mismatch(fs, path, settings, names[index], reference, origin, exc)
    change = _JSON_CHANGE.search(text) if fmt == "json" else None
    if change is not None:
        column, before, found, row = change.groups()
        line, value = _json_value(fs, path, rows + int(row), column)
        where = f"line {line} holds {shown(value)}" if value is not None else f"line {line} does not"
        if reference is not None and column in reference.names:
            raise UsageError(
                f"{path}: column '{column}' is {reference.field(column).type} in this dataset (its schema learnt "
                f"from {origin}) but a {found} in this file ({where}): the files of a dataset share one schema; fix "
                f"the file, or set {SCHEMA_CHANGE_KEY}=allow to publish each file with its own") from exc
        if before == "null":  # only nulls where its type was learnt: a larger block sees its values
            key, size = settings.block_size_key("json")
            raise UsageError(f"{path}: field '{column}' is null in every line of the first {key}={size} bytes, "
                             f"that its type is learnt from, but {where}: raise {key} to reach that line") from exc
        raise UsageError(f"{path}: field '{column}' is a {before} in the lines before, a {found} where {where}: a "
                         f"field of a JSON-lines file keeps one type; fix that line") from exc
    if fmt == "json" and _JSON_UNEXPECTED in text:
        _raise_late_field(fs, path, settings, reference, origin, rows, schema, exc)


def _csv_schema(fs: Any, path: str, settings: FileSourceSettings) -> pa.Schema:
    """The columns and types of CSV ``path`` as it reads on its own (inferred from its first block)."""
    with open_input(fs, path) as stream:
        return _csv(stream, settings, None, pa_csv.ConvertOptions()).schema


def _raise_mismatch(fs: Any, path: str, settings: FileSourceSettings, column: str, reference: pa.Schema | None,
                    origin: str, cause: BaseException) -> None:
    """The record of CSV ``path`` whose ``column`` does not convert to the dataset's type (or, where the dataset
    has none yet, to the type the file's first block gave it), as a UsageError."""
    known = reference.field(column).type if reference is not None and column in reference.names else None
    own_schema = _csv_schema(fs, path, settings)
    own = own_schema.field(column).type if column in own_schema.names else pa.string()
    target = known if known is not None else own
    row, value = _locate_csv(fs, path, settings, column, target)
    where = f"record {row + 1} holds {shown(value)}" if row is not None else "a record does not fit"
    place = record_place(fs, path, settings, row) if row is not None else path
    if pa.types.is_binary(own) and pa.types.is_string(target):
        raise DataError(f"column '{column}' holds bytes that are not UTF-8 text ({where}): a text column cannot "
                        f"hold them; re-save the file as UTF-8 or fix that record", where=place) from cause
    if known is None:  # the file's own first block typed it, and a later block holds what does not fit
        key, size = settings.block_size_key("csv")
        raise DataError(
            f"column '{column}' is {own} in the first {key}={size} bytes of the file, that its type is learnt "
            f"from, but {where}: a column keeps one type; fix that record, or raise {key} to reach it (the column "
            f"is then read as text)", where=place) from cause
    found = f"{own} in this file: {where}" if own != known else where
    raise DataError(
        f"column '{column}' is {known} in this dataset (its schema learnt from {origin}) but {found}; the files "
        f"of a dataset share one schema: fix the file, or set {SCHEMA_CHANGE_KEY}=allow to publish each file "
        f"with its own", where=place) from cause


def _locate_csv(fs: Any, path: str, settings: FileSourceSettings, column: str,
                target: pa.DataType) -> tuple[int | None, object]:
    """The first record (0-based) of ``path`` whose ``column`` does not cast to ``target``, and its value."""
    seen = 0
    with open_input(fs, path) as stream:
        raw = pa_csv.ConvertOptions(include_columns=[column], column_types={column: pa.binary()})
        for batch in _csv(stream, settings, None, raw):
            values = batch.column(0)
            if not pa.types.is_binary(target) and not pa.types.is_string(target):
                values = values.cast(pa.string(), safe=False)  # the text a number or a date is parsed from
            bad = first_bad_row(values, target)
            if bad is not None:
                return seen + bad, values[bad].as_py()
            seen += batch.num_rows
    return None, None


def check_text(fs: Any, opened: OpenFile, settings: FileSourceSettings) -> None:
    """A CSV column inferred as binary holds bytes that are not UTF-8: a UsageError naming the first record."""
    for field in opened.schema:
        if pa.types.is_binary(field.type):
            row, value = _locate_csv(fs, opened.path, settings, field.name, pa.string())
            where = f"record {row + 1} holds {shown(value)}" if row is not None else "a record holds them"
            place = record_place(fs, opened.path, settings, row) if row is not None else opened.path
            opened.stream.close()
            raise DataError(f"column '{field.name}' holds bytes that are not UTF-8 text ({where}): a text column "
                            "cannot hold them; re-save the file as UTF-8 or fix that record", where=place)


def _json_value(fs: Any, path: str, record: int, column: str) -> tuple[int | None, object]:
    """The line number of record ``record`` (0-based) of ``path``, and its value of ``column`` (a ``/`` path)."""
    for number, line in json_records(fs, path, record):
        try:
            value: object = json.loads(line)
        except ValueError:
            return number, None
        for part in column.split("/"):
            value = value.get(part) if isinstance(value, dict) else None
        return number, value
    return None, None


def _unknown(record: dict, fields: pa.Schema | pa.StructType, prefix: str = "") -> list[str]:
    """The fields of ``record`` (``a.b`` inside objects) that ``fields`` does not have."""
    types = {f.name: f.type for f in fields}
    out = []
    for key, value in record.items():
        if key not in types:
            out.append(prefix + key)
        elif isinstance(value, dict) and pa.types.is_struct(types[key]):
            out += _unknown(value, types[key], f"{prefix}{key}.")
    return out


def late_field(fs: Any, path: str, schema: pa.Schema, rows: int) -> tuple[int, list[str]] | None:
    """The first line of ``path``, from record ``rows`` (0-based) on, with fields ``schema`` lacks, and those."""
    for number, line in json_records(fs, path, rows):
        try:
            record = json.loads(line)
        except ValueError:
            continue  # Arrow names a line that is no JSON on its own
        new = _unknown(record, schema) if isinstance(record, dict) else []
        if new:
            return number, new
    return None


def _raise_late_field(fs: Any, path: str, settings: FileSourceSettings, reference: pa.Schema | None, origin: str,
                      rows: int, schema: pa.Schema | None, cause: BaseException) -> None:
    """A field first seen after the lines a JSON-lines reader learnt its fields from, as a UsageError."""
    key, size = settings.block_size_key("json")
    found = late_field(fs, path, schema, rows) if schema is not None else None
    what = (f"line {found[0]} has field{'s' if len(found[1]) > 1 else ''} {', '.join(map(repr, found[1]))}"
            if found else "a line has a field")
    if reference is not None:
        raise UsageError(f"{path}: {what}, which this dataset's schema (learnt from {origin}) does not have: the files "
                         f"of a dataset share one schema; fix the file, or set {SCHEMA_CHANGE_KEY}=allow to publish "
                         f"each file with its own") from cause
    if found and settings.schema_change == "allow" and any("." in name for name in found[1]):
        raise UsageError(f"{path}: {what}, inside an object whose fields the file's first {key}={size} bytes "
                         f"fixed: a field new inside an object cannot be added later; raise {key} above the file's "
                         f"size") from cause
    raise UsageError(f"{path}: {what}, which the lines before it (the first {key}={size} bytes, that a JSON-lines "
                     f"file's fields are learnt from) do not have: set {SCHEMA_CHANGE_KEY}=allow to publish every "
                     f"field, or raise {key} above the file's size") from cause


def json_schema(fs: Any, path: str, settings: FileSourceSettings) -> pa.Schema:
    """Every field of JSON-lines ``path``: its first block's, then those first seen in later blocks, typed as
    Arrow infers them from a block's worth of lines from there (the file is parsed once more for each)."""
    explicit: pa.Schema | None = None
    size = settings.json_block_size
    while True:
        rows = 0
        with open_input(fs, path) as stream:
            reader = pa_json.open_json(stream, read_options=pa_json.ReadOptions(block_size=size),
                                       parse_options=pa_json.ParseOptions(explicit_schema=explicit))
            schema = reader.schema
            try:
                for batch in reader:
                    rows += batch.num_rows
                return schema
            except pa.ArrowInvalid as exc:
                if _JSON_UNEXPECTED not in str(exc):
                    return schema  # reading the file names the error
        found = late_field(fs, path, schema, rows)
        if found is None or any("." in name for name in found[1]):
            return schema
        block = bytearray()
        for number, line in json_records(fs, path, rows):
            if number >= found[0]:
                if len(block) + len(line) >= size:
                    break
                block += line + b"\n"
        try:
            inferred = pa_json.read_json(pa.py_buffer(bytes(block)), read_options=pa_json.ReadOptions(block_size=size),
                                         parse_options=pa_json.ParseOptions(explicit_schema=schema)).schema
        except pa.ArrowInvalid:
            return schema
        added = [f.with_type(pa.string()) if pa.types.is_null(f.type) else f  # a null column would be dropped
                 for f in inferred if f.name not in schema.names]
        if not added:
            return schema
        explicit = pa.schema(list(schema) + added)
