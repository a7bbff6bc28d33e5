"""The Parquet writer: Arrow batches into one Parquet file (pyarrow), staged then committed.

Row groups are sized, not one per incoming batch: batches are held until they add up to ``parquet.block.size``
bytes of Arrow data (default 32 MiB; Gobblin's writer reads ``writer.file.block.size``, accepted too) or
1,048,576 rows (pyarrow's own cap), then written as one row group. A source that reads in small batches
(a database cursor, a CSV block) so gets files like ``pyarrow.parquet.write_table``'s: few large row groups,
one dictionary per column chunk, smaller and faster to read. Memory stays bounded: at most one row group's
worth of batches is held per open file. With ``writer.target.file.size`` a row group is at most that size, and
:attr:`ParquetDataWriter.size` counts the held batches (scaled by the file's compression so far), so rolling
still sees a file grow.

Dictionary encoding is chosen per column from the first row group's first 65,536 records (a file whose first row
group is smaller keeps pyarrow's default), as Polars and DuckDB do: a flat column whose sampled values are mostly
distinct (an id, a timestamp) is written plain, the others with a dictionary. pyarrow's default dictionary-encodes every column until a dictionary passes 1 MiB in each row group,
which costs a third more encoding time for id-like columns and saves nothing. A nested schema keeps the default.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from gobblin_py.formats.base import StagedFileWriter, codec_for
from gobblin_py.formats.settings import DEFAULT_PARQUET_BLOCK_SIZE, WriterSettings
from gobblin_py.sdk.states import State

# writer.codec.type -> Parquet compression; "deflate" (Gobblin's Avro default) maps to gzip, its Parquet kin
CODECS = {"snappy": "snappy", "gzip": "gzip", "deflate": "gzip", "zstd": "zstd", "lz4": "lz4", "brotli": "brotli",
          "none": "none", "uncompressed": "none"}
MAX_ROW_GROUP_ROWS = 1 << 20  # pyarrow's default (write_table's row_group_size)
DICTIONARY_SAMPLE_ROWS = 1 << 16  # records sampled to choose the columns dictionary-encoded
DICTIONARY_MAX_DISTINCT = 0.5  # a sampled column with more distinct values than this share of them is plain


class ParquetDataWriter(StagedFileWriter):
    """Streams batches into ``<staging>/<P>/<name>``, in row groups of ``row_group_bytes`` / ``row_group_rows``."""

    codecs = CODECS
    extension = "parquet"
    default_codec = "snappy"

    def __init__(self, fs, staging_path: str, output_path: str, schema: pa.Schema,
                 row_group_bytes: int = DEFAULT_PARQUET_BLOCK_SIZE, row_group_rows: int = MAX_ROW_GROUP_ROWS,
                 **kwargs: Any) -> None:
        self.row_group_bytes = max(1, row_group_bytes)
        self.row_group_rows = max(1, row_group_rows)
        self._held: list[pa.RecordBatch] = []
        self._held_bytes = 0
        self._held_rows = 0
        self._written_arrow_bytes = 0  # Arrow bytes of the row groups written, to scale the held ones by
        super().__init__(fs, staging_path, output_path, schema, **kwargs)

    @classmethod
    def options(cls, settings: WriterSettings, state: State, schema: pa.Schema) -> dict[str, Any]:
        return {"codec": codec_for(cls, "Parquet", "writer.codec.type", settings.codec, "snappy"),
                "row_group_bytes": settings.parquet_block_size}

    def _open(self, sink) -> None:
        self._sink_stream = sink
        self._writer: pq.ParquetWriter | None = None  # made with the first row group, whose records choose

    def _parquet_writer(self, first: pa.Table | None) -> pq.ParquetWriter:
        if self._writer is None:
            dictionary = dictionary_columns(first) if first is not None else True
            self._writer = pq.ParquetWriter(self._sink_stream, self.schema, compression=self.codec,
                                            use_dictionary=dictionary)
        return self._writer

    def _write(self, batch: pa.RecordBatch) -> None:
        self._held.append(batch)
        self._held_bytes += batch.nbytes
        self._held_rows += batch.num_rows
        if self._held_bytes >= self.row_group_bytes or self._held_rows >= self.row_group_rows:
            self._flush(final=False)

    def _group_rows(self) -> int:
        """Rows per row group: the row cap, or fewer when that many rows would pass the byte size."""
        per_row = self._held_bytes / max(self._held_rows, 1)
        by_bytes = int(self.row_group_bytes / per_row) if per_row > 0 else self.row_group_rows
        return max(1, min(self.row_group_rows, by_bytes))

    def _flush(self, final: bool) -> None:
        """Write the held batches as whole row groups; unless ``final``, keep a remainder smaller than one."""
        if not self._held_rows:
            return
        table = pa.Table.from_batches(self._held, schema=self.schema)
        group = self._group_rows()
        take = table.num_rows if final else table.num_rows - table.num_rows % group
        if take:
            written = table.slice(0, take) if take < table.num_rows else table
            self._parquet_writer(written).write_table(written, row_group_size=group)
            self._written_arrow_bytes += written.nbytes
            # Arrow's allocator (mimalloc) keeps freed pages for reuse: give back what encoding the row group
            # took, or each task's peak stays resident while the next row group is gathered
            pa.default_memory_pool().release_unused()
        rest = table.slice(take).to_batches() if take < table.num_rows else []
        self._held = [b for b in rest if b.num_rows]
        self._held_rows = sum(b.num_rows for b in self._held)
        self._held_bytes = sum(b.nbytes for b in self._held)

    @property
    def size(self) -> int:
        """Bytes in the staging file, plus the held batches at the compression the file has shown so far."""
        written = super().size
        if not self._held_bytes:
            return written
        ratio = written / self._written_arrow_bytes if self._written_arrow_bytes else 1.0
        return written + int(self._held_bytes * ratio)

    def _drop(self) -> None:
        self._held, self._held_bytes, self._held_rows = [], 0, 0

    def _finish(self) -> None:
        try:
            self._flush(final=True)
        finally:
            self._drop()
            self._parquet_writer(None).close()  # a file of no records still gets its schema and footer


def dictionary_columns(first: pa.Table) -> bool | list[str]:
    """The columns to dictionary-encode (see the module), judged on ``first``'s first records; True (all) for a
    nested schema or a first row group of fewer records than the sample."""
    if first.num_rows < DICTIONARY_SAMPLE_ROWS or any(pa.types.is_nested(field.type) for field in first.schema):
        return True  # a small file encodes in no time either way, and need not load Arrow's compute kernels
    sample = first.slice(0, DICTIONARY_SAMPLE_ROWS)
    limit = DICTIONARY_MAX_DISTINCT * sample.num_rows
    return [field.name for field, column in zip(sample.schema, sample.columns, strict=True)
            if pa.types.is_dictionary(field.type) or _distinct(column) <= limit]


def _distinct(column: pa.ChunkedArray) -> int:
    """How many distinct values ``column`` holds (0 for a type Arrow cannot count: it keeps the dictionary)."""
    import pyarrow.compute as pc  # Arrow's kernels load only for a file with records (a start-up cost otherwise)

    try:
        return int(pc.count_distinct(column, mode="all").as_py())
    except pa.ArrowNotImplementedError:
        return 0
