"""How many records a written file holds, read back from the file itself (reconciliation before publishing).

Parquet and ORC say it in their footers, Avro in its block headers; JSON lines are counted by their line breaks
(one record per line: JSON escapes line breaks inside values); CSV is parsed, since a quoted value may hold line
breaks (a header line is not a record). A gzip file is read through. Other files (the byte writer's) cannot be counted: None.
"""

from __future__ import annotations

import gzip
from typing import Any

from gobblin_py.io.fs import is_local
from gobblin_py.io.native_io import open_input
from gobblin_py.io.object_store import read_tail

CHUNK = 8 << 20
FOOTER_READ = 64 << 10  # bytes read from a remote Parquet file's end: its footer, unless it has many columns


def count_records(fs: Any, path: str, csv_header: bool = True, text_formats: bool = True,
                  csv_delimiter: str = ",") -> int | None:
    """The records in ``path`` on ``fs``; None when its format cannot be counted (or ``text_formats`` is off)."""
    name = path[:-3] if path.endswith(".gz") else path
    if name.endswith(".parquet"):
        import pyarrow.parquet as pq

        if not is_local(fs) and not path.endswith(".gz"):
            return _parquet_rows(fs, path)
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
    if name.endswith(".csv"):
        return _csv_records(fs, path, csv_header, csv_delimiter)
    return _lines(fs, path)


def _parquet_rows(fs: Any, path: str) -> int:
    """A Parquet file's row count from its footer, read with the file's end (one ranged request on S3, where
    opening the file would first look up its size); a footer longer than that end takes one more read."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    tail = read_tail(fs, path, FOOTER_READ)
    if len(tail) == FOOTER_READ and tail[-4:] == b"PAR1":
        footer = int.from_bytes(tail[-8:-4], "little") + 8
        if footer > len(tail):
            tail = read_tail(fs, path, footer)
    return pq.read_metadata(pa.BufferReader(tail)).num_rows


def _csv_records(fs: Any, path: str, header: bool, delimiter: str) -> int:
    import pyarrow as pa
    import pyarrow.csv as csv

    # only the first column is converted (as text): the parser still finds every record's end
    read = csv.ReadOptions(autogenerate_column_names=True, skip_rows=1 if header else 0, block_size=CHUNK)
    parse = csv.ParseOptions(delimiter=delimiter, newlines_in_values=True)
    convert = csv.ConvertOptions(include_columns=["f0"], column_types={"f0": pa.string()})
    count = 0
    with fs.open(path, "rb") as raw:
        stream = gzip.GzipFile(fileobj=raw) if path.endswith(".gz") else raw
        try:
            reader = csv.open_csv(stream, read_options=read, parse_options=parse, convert_options=convert)
        except pa.ArrowInvalid as error:
            if "Empty CSV file" in str(error):
                return 0
            raise
        for batch in reader:
            count += batch.num_rows
    return count


def _lines(fs: Any, path: str) -> int:
    count, last = 0, b"\n"
    with fs.open(path, "rb") as raw:
        stream = gzip.GzipFile(fileobj=raw) if path.endswith(".gz") else raw
        while chunk := stream.read(CHUNK):
            count += chunk.count(b"\n")
            last = chunk[-1:]
    return count + (0 if last == b"\n" else 1)  # a last line without its line break is a record too
