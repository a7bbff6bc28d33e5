"""How many records a written file holds, read back from the file itself (reconciliation before publishing).

Parquet and ORC say it in their footers, Avro in its block headers; JSON lines and CSV are counted by their line
breaks (one record per line: gpy's writers escape line breaks inside values; a CSV header line is not a
record). A gzip file is read through. Other files (the byte writer's) cannot be counted: None.
"""

from __future__ import annotations

import gzip
from typing import Any

from gobblin_py.native_io import open_input

CHUNK = 8 << 20


def count_records(fs: Any, path: str, csv_header: bool = True, text_formats: bool = True) -> int | None:
    """The records in ``path`` on ``fs``; None when its format cannot be counted (or ``text_formats`` is off)."""
    name = path[:-3] if path.endswith(".gz") else path
    if name.endswith(".parquet"):
        import pyarrow.parquet as pq

        with open_input(fs, path) as stream:
            return pq.ParquetFile(stream).metadata.num_rows
    if name.endswith(".orc"):
        import pyarrow.orc as orc

        with open_input(fs, path) as stream:
            return orc.ORCFile(stream).nrows
    if name.endswith(".avro"):
        from fastavro import block_reader

        with fs.open(path, "rb") as stream:
            return sum(block.num_records for block in block_reader(stream))
    if not text_formats or not (name.endswith(".json") or name.endswith(".csv")):
        return None
    lines = _lines(fs, path)
    return max(0, lines - 1) if name.endswith(".csv") and csv_header else lines


def _lines(fs: Any, path: str) -> int:
    count, last = 0, b"\n"
    with fs.open(path, "rb") as raw:
        stream = gzip.GzipFile(fileobj=raw) if path.endswith(".gz") else raw
        while chunk := stream.read(CHUNK):
            count += chunk.count(b"\n")
            last = chunk[-1:]
    return count + (0 if last == b"\n" else 1)  # a last line without its line break is a record too
