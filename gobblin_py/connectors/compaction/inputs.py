"""Reading a dataset's files as Arrow batches of one schema, whatever their format (Avro, Parquet, ORC).

As Gobblin's compaction does, the newest file's schema (by modification time) is the schema of the whole dataset:
Avro files are read with it as their reader schema (Avro's schema resolution: a field added since takes its
default), Parquet and ORC columns are matched by name (a missing column is null, a column the newest file lacks
is dropped). One dataset holds one format: a mix is refused, naming a file of each.
"""

from __future__ import annotations

import posixpath
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

import pyarrow as pa

from gobblin_py.connectors.compaction.finder import InputFile
from gobblin_py.formats.avro_read import arrow_schema_for, avro_schema_of_file, read_avro
from gobblin_py.sdk.errors import GobblinPyError, PermanentError

FORMATS = {"avro": "avro", "parquet": "parquet", "parq": "parquet", "orc": "orc"}
BATCH_ROWS = 65536
READ_AHEAD = 4  # files read at once
READ_AHEAD_BYTES = 64 << 20  # a file larger than this is streamed, not read ahead whole


def format_of(files: Sequence[InputFile]) -> str:
    """``avro``, ``parquet`` or ``orc``: the one format of a dataset's files, by their extension."""
    seen: dict[str, str] = {}
    for f in files:
        ext = posixpath.basename(f.path).rpartition(".")[2].lower()
        fmt = FORMATS.get(ext)
        if fmt is None:
            raise GobblinPyError(f"{f.path}: not an Avro, Parquet or ORC file (by its extension); compaction reads "
                                 "those")
        seen.setdefault(fmt, f.path)
    if len(seen) > 1:
        shown = ", ".join(f"{fmt} ({path})" for fmt, path in sorted(seen.items()))
        raise GobblinPyError(f"a dataset holds files of several formats: {shown}; compaction writes one")
    return next(iter(seen), "avro")


def newest(files: Sequence[InputFile]) -> InputFile:
    """The newest file (the greatest modification time; of equals, the last by path)."""
    return max(files, key=lambda f: (f.mtime_ms, f.path))


def unreadable(path: str, fmt: str, exc: Exception) -> PermanentError:
    """The error of a file its format's reader rejects (cut short, not of its format): it names the file, and no
    retry reads it better."""
    return PermanentError(f"{path}: not a readable {fmt} file ({type(exc).__name__}: {exc})")


def dataset_schema(fs, files: Sequence[InputFile], fmt: str) -> pa.Schema:
    """The schema of a dataset's records: its newest file's (Avro: carrying the Avro schema itself)."""
    source = newest(files)
    with fs.open(source.path, "rb") as stream:
        if fmt == "avro":
            return arrow_schema_for(avro_schema_of_file(stream, source.path), source.path)
        try:
            if fmt == "parquet":
                import pyarrow.parquet as pq

                return pq.read_schema(stream)
            from pyarrow import orc

            return orc.ORCFile(stream).schema
        except pa.ArrowInvalid as exc:
            raise unreadable(source.path, fmt, exc) from exc


def conform(batch: pa.RecordBatch, schema: pa.Schema, where: str) -> pa.RecordBatch:
    """``batch`` with ``schema``'s columns, by name: a missing one null, a differing type cast."""
    if batch.schema.equals(schema, check_metadata=False):
        return pa.RecordBatch.from_arrays(batch.columns, schema=schema)
    arrays = []
    for field in schema:
        index = batch.schema.get_field_index(field.name)
        if index < 0:
            arrays.append(pa.nulls(batch.num_rows, field.type))
            continue
        column = batch.column(index)
        try:
            arrays.append(column if column.type == field.type else column.cast(field.type))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise PermanentError(f"{where}: column {field.name} ({column.type}) does not fit the dataset's newest "
                                 f"schema ({field.type}): {exc}") from None
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def read_file(fs, f: InputFile, fmt: str, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """The records of one file as batches of ``schema``."""
    with fs.open(f.path, "rb") as stream:
        if fmt == "avro":
            reader_schema = (schema.metadata or {}).get(b"avro.schema")
            _, batches = read_avro(stream, f.path, reader_schema.decode() if reader_schema else None, BATCH_ROWS)
            for batch in batches:
                yield pa.RecordBatch.from_arrays(batch.columns, schema=schema)
        else:
            try:
                yield from _columnar(stream, f.path, fmt, schema)
            except pa.ArrowInvalid as exc:
                raise unreadable(f.path, fmt, exc) from exc
            except OSError as exc:  # named, and judged by its own words (a corrupt file, or a read to retry)
                raise GobblinPyError(f"{f.path}: {type(exc).__name__}: {exc}") from exc


def _columnar(stream, path: str, fmt: str, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    if fmt == "parquet":
        import pyarrow.parquet as pq

        for batch in pq.ParquetFile(stream).iter_batches(batch_size=BATCH_ROWS):
            yield conform(batch, schema, path)
        return
    from pyarrow import orc

    reader = orc.ORCFile(stream)
    for stripe in range(reader.nstripes):
        for batch in pa.Table.from_batches([reader.read_stripe(stripe)]).to_batches(BATCH_ROWS):
            yield conform(batch, schema, path)


def _whole(fs, f: InputFile, fmt: str, schema: pa.Schema) -> list[pa.RecordBatch]:
    return list(read_file(fs, f, fmt, schema))


def read_files(fs, files: Sequence[InputFile], fmt: str, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """Every record of the files, file by file in the given order. Files of at most :data:`READ_AHEAD_BYTES` are
    read ahead, :data:`READ_AHEAD` at a time on threads (decoding releases the GIL: an hour of small files reads
    about twice as fast on two cores); a larger file is streamed batch by batch when its turn comes, so at most
    ``READ_AHEAD`` small files wait in memory."""
    pending: deque[Future[list[pa.RecordBatch]]] = deque()
    with ThreadPoolExecutor(READ_AHEAD, thread_name_prefix="compaction-read") as pool:
        for f in files:
            if f.size > READ_AHEAD_BYTES:
                while pending:
                    yield from pending.popleft().result()
                yield from read_file(fs, f, fmt, schema)
                continue
            pending.append(pool.submit(_whole, fs, f, fmt, schema))
            if len(pending) > READ_AHEAD:
                yield from pending.popleft().result()
        while pending:
            yield from pending.popleft().result()
