"""Opening one data file of the file source as a stream of Arrow batches, read to the dataset's schema if it has one.

CSV files are parsed with the schema's column types and JSON lines with it as their explicit schema, so a file is
converted straight to the dataset's types rather than inferred and cast; Parquet and Avro files keep their own
types and are cast batch by batch (:mod:`gobblin_py.connectors.files.file_extractor`). The errors a user can act on — a
row longer than a block, a value that is not of its column's type, bytes that are not UTF-8 in a text column —
name the file, the column, the types, the record and the key or fix.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.json as pa_json
import pyarrow.parquet as pq

from gobblin_py.sdk.errors import GobblinPyError, UsageError
from gobblin_py.io.native_io import open_input
from gobblin_py.connectors.files.file_schema import first_bad_row, shown
from gobblin_py.connectors.files.file_settings import SCHEMA_CHANGE_KEY, FileSourceSettings, file_format

_CSV_CONVERSION = re.compile(r"In CSV column #(\d+): .*CSV conversion error to (.+?): invalid (?:value|UTF8)")
_JSON_CHANGE = re.compile(r"Column\(/([^)]*)\) changed from (\w+) to (\w+) in row (\d+)")


@dataclass
class OpenFile:
    """A data file opened for reading: its schema (the dataset's types where it has them) and its batches."""

    path: str
    fmt: str
    schema: pa.Schema
    batches: Iterator[pa.RecordBatch]
    stream: Any


def typed_columns(reference: pa.Schema | None) -> dict[str, pa.DataType]:
    """The columns whose type the dataset's schema knows (a ``null`` column is not known yet)."""
    return {} if reference is None else {f.name: f.type for f in reference if not pa.types.is_null(f.type)}


def open_file(fs: Any, path: str, settings: FileSourceSettings, reference: pa.Schema | None = None,
              origin: str = "", block_size: int | None = None) -> OpenFile:
    """``path`` opened for reading (``reference``: the dataset's schema, learnt from ``origin``).

    ``block_size`` bounds what CSV and JSON types are inferred from, below the configured block (which is used
    when a row does not fit it).
    """
    fmt = file_format(path, settings.format)
    stream = open_input(fs, path)
    try:
        schema, batches = _open(stream, path, fmt, settings, reference, block_size)
    except (pa.ArrowException, OSError) as exc:
        stream.close()
        if block_size is not None and "straddling" in str(exc):  # a row longer than the smaller block asked for
            return open_file(fs, path, settings, reference, origin)
        raise_for(exc, fs, path, settings, reference, origin)
        raise GobblinPyError(f"{path}: cannot read as {fmt}: {exc}") from exc
    except BaseException:
        stream.close()
        raise
    opened = OpenFile(path, fmt, schema, batches, stream)
    if fmt == "csv":
        check_text(fs, opened, settings)
    return opened


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
        block_size = min(block_size, settings.json_block_size if fmt == "json" else settings.csv_block_size)
    if fmt == "json":
        explicit = pa.schema(list(known.items())) if known else None
        reader = pa_json.open_json(stream,
                                   read_options=pa_json.ReadOptions(block_size=block_size or settings.json_block_size),
                                   parse_options=pa_json.ParseOptions(explicit_schema=explicit))
        return reader.schema, iter(reader)
    reader = _csv(stream, settings, block_size, pa_csv.ConvertOptions(column_types=known))
    return reader.schema, iter(reader)


def _csv(stream: Any, settings: FileSourceSettings, block_size: int | None,
         convert: pa_csv.ConvertOptions) -> Any:
    header, names = settings.csv_header, list(settings.csv_columns) or None
    return pa_csv.open_csv(
        stream,
        read_options=pa_csv.ReadOptions(autogenerate_column_names=not header and not names, column_names=names,
                                        block_size=block_size or settings.csv_block_size),
        parse_options=pa_csv.ParseOptions(delimiter=settings.delimiter),
        convert_options=convert,
    )


def raise_for(exc: BaseException, fs: Any, path: str, settings: FileSourceSettings, reference: pa.Schema | None,
              origin: str) -> None:
    """Raise the UsageError that says what to do about ``exc``, when it is one a user can act on."""
    fmt = file_format(path, settings.format)
    text = str(exc)
    if fmt in ("csv", "json") and ("straddling" in text or "block size" in text):
        key, size = settings.block_size_key(fmt)
        row = "line" if fmt == "json" else "row"
        raise UsageError(f"{path}: a {fmt.upper()} {row} is longer than {key} ({size} bytes): raise {key} "
                         f"above the longest {row}") from exc
    conversion = _CSV_CONVERSION.search(text) if fmt == "csv" else None
    if conversion is not None:
        names = _csv_schema(fs, path, settings).names
        index = int(conversion.group(1))
        if index < len(names):
            _raise_mismatch(fs, path, settings, names[index], reference, origin, exc)
    change = _JSON_CHANGE.search(text) if fmt == "json" else None
    if change is not None and reference is not None and change.group(1) in reference.names:
        column, _, found, row = change.groups()
        raise UsageError(
            f"{path}: column '{column}' is {reference.field(column).type} in this dataset (its schema learnt from "
            f"{origin}) but a {found} in this file (row {int(row) + 1} of a block of its lines): the files of a "
            f"dataset share one schema; fix the file, or set {SCHEMA_CHANGE_KEY}=allow to publish each file with "
            f"its own") from exc


def _csv_schema(fs: Any, path: str, settings: FileSourceSettings) -> pa.Schema:
    """The columns and types of CSV ``path`` as it reads on its own (inferred from its first block)."""
    with open_input(fs, path) as stream:
        return _csv(stream, settings, None, pa_csv.ConvertOptions()).schema


def _raise_mismatch(fs: Any, path: str, settings: FileSourceSettings, column: str, reference: pa.Schema | None,
                    origin: str, cause: BaseException) -> None:
    """The record of CSV ``path`` whose ``column`` does not convert to the dataset's type, as a UsageError."""
    target = reference.field(column).type if reference is not None and column in reference.names else pa.string()
    own_schema = _csv_schema(fs, path, settings)
    own = own_schema.field(column).type if column in own_schema.names else pa.string()
    row, value = _locate_csv(fs, path, settings, column, target)
    where = f"record {row + 1} holds {shown(value)}" if row is not None else "a record does not fit"
    if pa.types.is_binary(own) and pa.types.is_string(target):
        raise UsageError(f"{path}: column '{column}' holds bytes that are not UTF-8 text ({where}): a text column "
                         f"cannot hold them; re-save the file as UTF-8 or fix that record") from cause
    raise UsageError(
        f"{path}: column '{column}' is {target} in this dataset (its schema learnt from {origin}) but {own} in "
        f"this file: {where}; the files of a dataset share one schema: fix the file, or set "
        f"{SCHEMA_CHANGE_KEY}=allow to publish each file with its own") from cause


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
            opened.stream.close()
            raise UsageError(f"{opened.path}: column '{field.name}' holds bytes that are not UTF-8 text ({where}): "
                             f"a text column cannot hold them; re-save the file as UTF-8 or fix that record")
