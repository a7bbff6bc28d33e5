"""The file source's extractor: a work unit's CSV, JSON-lines, Parquet or Avro files, read in order as batches."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.json as pa_json
import pyarrow.parquet as pq

from gobblin_py import fs as fsutil
from gobblin_py.api import Extractor, PartitionProgress
from gobblin_py.errors import GobblinPyError, UsageError
from gobblin_py.logs import get_logger
from gobblin_py.native_io import open_input
from gobblin_py.sources.file_settings import (
    FILE_MTIMES_KEY,
    FILES_TO_PULL_KEY,
    SCHEMA_FILE_KEY,
    FileSourceSettings,
    file_format,
)
from gobblin_py.state import LongWatermark, WorkUnitState
from gobblin_py.state.startpoints import FILTERED_KEY

log = get_logger(__name__)


class FileExtractor(Extractor):
    """Reads a work unit's files in order, as record batches; later files are cast to the first's schema."""

    def __init__(self, state: WorkUnitState) -> None:
        self.state = state
        self.settings = FileSourceSettings.load(state)
        self.paths = state.get_prop_as_list(FILES_TO_PULL_KEY)
        self.fs, _ = fsutil.open_fs(self.settings.directory, self.settings.fs_uri)
        self._schema: pa.Schema | None = None
        self._first: tuple | None = None  # the first file's reader, opened for its schema, read from then on
        self._open: list = []
        self._complete = False
        self._since: int | None = None
        self._filtered = 0
        self._records = 0
        self._min_event: int | None = None
        self._max_event: int | None = None

    def _reader(self, path: str):
        fmt = file_format(path, self.settings.format)
        stream = open_input(self.fs, path)
        self._open.append(stream)
        try:
            if fmt == "parquet":
                parquet = pq.ParquetFile(stream)
                return (parquet.schema_arrow, parquet.iter_batches(batch_size=self.settings.batch_size),
                        parquet.metadata.num_rows)
            if fmt == "avro":
                from gobblin_py.sources.avro_read import read_avro  # the Avro codec only for Avro files

                schema, batches = read_avro(stream, path, self.settings.avro_schema, self.settings.batch_size)
                return schema, batches, -1
            if fmt == "json":
                options = pa_json.ReadOptions(block_size=self.settings.json_block_size)
                reader = pa_json.open_json(stream, read_options=options)
                return reader.schema, iter(reader), -1
            header, names = self.settings.csv_header, list(self.settings.csv_columns) or None
            reader = pa_csv.open_csv(
                stream,
                read_options=pa_csv.ReadOptions(autogenerate_column_names=not header and not names, column_names=names,
                                                block_size=self.settings.csv_block_size),
                parse_options=pa_csv.ParseOptions(delimiter=self.settings.delimiter),
            )
            return reader.schema, iter(reader), -1
        except (pa.ArrowException, OSError) as exc:
            self._raise_too_long(exc, path, fmt)
            raise GobblinPyError(f"{path}: cannot read as {fmt}: {exc}") from exc

    def get_schema(self) -> pa.Schema:
        if self._schema is None:
            first = self.paths[0] if self.paths else self.state.get_prop(SCHEMA_FILE_KEY)
            if first and self.paths:
                self._first = self._reader(first)
                self._schema = self._first[0]
            else:
                self._schema = self._reader(first)[0] if first else pa.schema([])
        return self._schema

    def filter_before(self, timestamp_ms: int) -> None:
        if not self.settings.event_column:
            log.warning("replay_not_filtered", note="source.event.time.column is not set: records older than the "
                        "startpoint's time are kept")
            return
        self._since = timestamp_ms

    def partition_progress(self) -> dict[str, PartitionProgress]:
        """The unit's files as one stretch of the dataset: their modification times and their records' event times."""
        mtimes = [int(m) for m in self.state.get_prop_as_list(FILE_MTIMES_KEY)]
        if not mtimes:
            return {}
        return {"": PartitionProgress(min(mtimes), max(mtimes), self._records, self._min_event, self._max_event)}

    def get_expected_record_count(self) -> int:
        """Known for Parquet (from file footers); -1 for CSV and JSON, as Gobblin's file extractors say."""
        if not self.paths or any(file_format(p, self.settings.format) != "parquet" for p in self.paths):
            return -1
        total = 0
        for path in self.paths:
            with open_input(self.fs, path) as stream:
                total += pq.ParquetFile(stream).metadata.num_rows
        return total

    def read_batches(self) -> Iterator[pa.RecordBatch]:
        schema = self.get_schema()
        self._complete = False
        for index, path in enumerate(self.paths):
            if index == 0 and self._first is not None:  # its first block was parsed for the schema: go on from there
                (file_schema, batches, _), self._first = self._first, None
            else:
                file_schema, batches, _ = self._reader(path)
            try:
                for batch in batches:
                    if file_schema != schema:
                        batch = _conform(batch, schema, path)
                    yield self._observe(batch)
            except pa.ArrowException as exc:
                self._raise_too_long(exc, path, file_format(path, self.settings.format))
                raise GobblinPyError(f"{path}: {exc}") from exc
        self._complete = True

    def _raise_too_long(self, exc: BaseException, path: str, fmt: str) -> None:
        """A UsageError naming the key to raise when Arrow could not fit a row of ``path`` in one block."""
        if fmt not in ("csv", "json") or not ("straddling" in str(exc) or "block size" in str(exc)):
            return
        key, size = self.settings.block_size_key(fmt)
        row = "line" if fmt == "json" else "row"
        raise UsageError(f"{path}: a {fmt.upper()} {row} is longer than {key} ({size} bytes): raise {key} "
                         f"above the longest {row}") from exc

    def _observe(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """Count the batch, note its event times, and drop what a replay from a time does not want."""
        self._records += batch.num_rows
        column = self.settings.event_column
        if not column or batch.num_rows == 0:
            return batch
        from gobblin_py.sources.event_time import at_or_after, min_max_millis  # Arrow's kernels only with event times

        if column not in batch.schema.names:
            raise UsageError(f"source.event.time.column={column}: the records have no such column "
                             f"(they have {', '.join(batch.schema.names)})")
        low, high = min_max_millis(batch.column(column), column)
        if low is not None:
            self._min_event = low if self._min_event is None else min(self._min_event, low)
            self._max_event = high if self._max_event is None else max(self._max_event, high)
        if self._since is None:
            return batch
        kept = batch.filter(at_or_after(batch.column(column), column, self._since))
        self._filtered += batch.num_rows - kept.num_rows
        return kept

    def close(self) -> None:
        self.state.set_prop(FILTERED_KEY, self._filtered)
        if self._complete:
            expected = self.state.workunit.expected_high_watermark(LongWatermark)
            if expected is not None:
                self.state.set_actual_high_watermark(expected)
        for stream in self._open:
            stream.close()
        self._open.clear()


def _conform(batch: pa.RecordBatch, schema: pa.Schema, path: str) -> pa.RecordBatch:
    if batch.schema.names != schema.names:
        raise GobblinPyError(
            f"{path}: columns {batch.schema.names} differ from the work unit's first file's {schema.names}"
        )
    return batch.cast(schema)
