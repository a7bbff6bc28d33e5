"""The CSV writer (pyarrow.csv): Arrow batches into one CSV file (RFC 4180 quoting), staged then committed.

- ``writer.csv.delimiter[.i]``: one character, default ``,`` (``\\t`` or ``tab`` for tabs);
- ``writer.csv.header[.i]``: write a header line of column names, default ``true``;
- ``writer.codec.type[.i]``: ``none`` (default) or ``gzip`` (file name ends ``.gz``).

Values as pyarrow writes them: strings quoted when needed, a null is an empty unquoted field and an empty
string is ``""`` (read with ``strings_can_be_null`` / ``quoted_strings_can_be_null=False`` to tell them apart);
timestamps ``2024-01-02 03:04:05.123456`` (tz-aware ones in UTC with a ``Z``); decimals exact; binary as
base64. Lists, structs and maps have no CSV form: the build fails naming the column.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.csv as pcsv

from gobblin_py.formats.base import StagedFileWriter, codec_for
from gobblin_py.formats.jsonl import TEXT_CODECS, base64_strings
from gobblin_py.formats.settings import WriterSettings
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.states import State


def valid_delimiter(delimiter: str) -> bool:
    """One character that is neither a quote nor a line break."""
    return len(delimiter) == 1 and delimiter not in "\"\r\n"


def _is_binary(t: pa.DataType) -> bool:
    return pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t) \
        or pa.types.is_binary_view(t)


def csv_type(t: pa.DataType, column: str) -> pa.DataType:
    """The type the CSV writer is given for a column of type ``t``."""
    if pa.types.is_dictionary(t):
        return csv_type(t.value_type, column)
    if pa.types.is_nested(t) or pa.types.is_interval(t) or pa.types.is_duration(t):
        raise UsageError(f"column '{column}': CSV has no form for {t} (use JSON, Avro, ORC or Parquet, "
                         f"or flatten it with a converter)")
    if _is_binary(t):
        return pa.large_string()
    if pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_timestamp(t) and t.tz is not None:
        return pa.timestamp(t.unit, "UTC")
    return t


class CsvDataWriter(StagedFileWriter):
    """Streams batches into one CSV file with an optional header line."""

    codecs = TEXT_CODECS
    extension = "csv"

    def __init__(self, fs, staging_path: str, output_path: str, schema: pa.Schema, codec: str = "none",
                 delimiter: str = ",", header: bool = True, **kwargs: Any) -> None:
        self.delimiter = delimiter
        self.header = header
        self.csv_schema = pa.schema([pa.field(f.name, csv_type(f.type, f.name), f.nullable) for f in schema])
        if codec == "gzip":
            kwargs.setdefault("gzip_level", 6)
        super().__init__(fs, staging_path, output_path, schema, codec=codec, **kwargs)

    @classmethod
    def options(cls, settings: WriterSettings, state: State, schema: pa.Schema) -> dict[str, Any]:
        codec = codec_for(cls, "CSV", "writer.codec.type", settings.codec, "none")
        if not valid_delimiter(settings.delimiter):
            raise UsageError(f"writer.csv.delimiter={settings.csv_delimiter!r}: expected one character other than a "
                             "quote or a line break (\\t or tab for a tab)")
        for field in schema or ():
            csv_type(field.type, field.name)
        return {"codec": codec, "delimiter": settings.delimiter, "header": settings.csv_header}

    @staticmethod
    def name_suffix(options: dict[str, Any]) -> str:
        return ".gz" if options.get("codec") == "gzip" else ""

    def _open(self, sink) -> None:
        options = pcsv.WriteOptions(include_header=self.header, delimiter=self.delimiter)
        self._writer = pcsv.CSVWriter(sink, self.csv_schema, write_options=options)

    def _write(self, batch: pa.RecordBatch) -> None:
        if batch.schema != self.csv_schema:
            columns = []
            for column, field in zip(batch.columns, self.csv_schema, strict=True):
                if pa.types.is_dictionary(column.type):
                    column = column.dictionary_decode()
                if _is_binary(column.type):
                    column = base64_strings(column)
                columns.append(column.cast(field.type) if column.type != field.type else column)
            batch = pa.RecordBatch.from_arrays(columns, schema=self.csv_schema)
        self._writer.write_batch(batch)

    def _finish(self) -> None:
        self._writer.close()
