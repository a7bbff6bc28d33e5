"""Where a record of a data file is: the line it starts on (CSV, JSON lines) or its number (Parquet, Avro).

Only an error asks (a value that does not fit its column): the file is read again from its start up to the
record, so a good run pays nothing for it. A CSV record may run over several lines (a quoted value holding line
breaks), so its line is counted as a CSV parser reads the file, blank lines skipped as Arrow skips them.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from typing import Any

from gobblin_py.connectors.files.file_settings import FileSourceSettings, file_format
from gobblin_py.io.native_io import open_input


def csv_line(fs: Any, path: str, settings: FileSourceSettings, record: int) -> int | None:
    """The line (1-based) CSV ``path``'s record ``record`` (0-based, after the header) starts on."""
    header = 1 if settings.csv_header and not settings.csv_columns else 0
    with open_input(fs, path) as stream:
        text = io.TextIOWrapper(stream, encoding="utf-8", errors="replace", newline="")
        reader = csv.reader(text, delimiter=settings.delimiter)
        seen, ended = -header, 0  # records read (the header counts below 0), and the line the last one ended on
        try:
            for row in reader:
                start, ended = ended + 1, reader.line_num
                if not row:
                    continue  # a blank line holds no record
                if seen == record:
                    return start
                seen += 1
        except csv.Error:
            return None
    return None


def json_records(fs: Any, path: str, skip: int = 0) -> Iterator[tuple[int, bytes]]:
    """The lines of JSON-lines ``path`` that hold a record (Arrow skips blank ones) with their 1-based numbers,
    from the record ``skip`` (0-based) on."""
    seen, number, rest = 0, 0, b""
    with open_input(fs, path) as stream:
        while True:
            chunk = stream.read(1 << 20)
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop() if chunk else b""
            for line in lines:
                number += 1
                if line.strip():
                    seen += 1
                    if seen > skip:
                        yield number, line
            if not chunk:
                return


def record_place(fs: Any, path: str, settings: FileSourceSettings, record: int) -> str:
    """``<path> line N`` for a record (0-based) of a CSV or JSON-lines file, ``<path> record N`` (1-based)
    otherwise or when its line cannot be told."""
    fmt = file_format(path, settings.format)
    line: int | None = None
    if fmt == "csv":
        line = csv_line(fs, path, settings, record)
    elif fmt == "json":
        line = next((number for number, _ in json_records(fs, path, record)), None)
    return f"{path} line {line}" if line is not None else f"{path} record {record + 1}"
