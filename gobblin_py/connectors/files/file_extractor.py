"""The file source's extractor: a work unit's CSV, JSON-lines, Parquet or Avro files, read in order as batches."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from gobblin_py.connectors.files import file_schema
from gobblin_py.connectors.files.file_readers import OpenFile, json_schema, open_file, raise_for
from gobblin_py.connectors.files.file_schema import DATASET_SCHEMA_KEY, SCHEMA_SOURCE_KEY
from gobblin_py.connectors.files.file_settings import (
    FILE_MTIMES_KEY,
    FILES_TO_PULL_KEY,
    REPLAYED_FILES_KEY,
    SCHEMA_CHANGE_KEY,
    SCHEMA_FILE_KEY,
    FileSourceSettings,
    file_format,
)
from gobblin_py.connectors.files.record_lines import record_place
from gobblin_py.formats.bad_values import first_bad_row, shown
from gobblin_py.io import fs as fsutil
from gobblin_py.io.native_io import open_input
from gobblin_py.sdk.contracts import Extractor, PartitionProgress
from gobblin_py.sdk.errors import DataError, GobblinPyError, UsageError
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.states import WorkUnitState
from gobblin_py.sdk.watermarks import LongWatermark
from gobblin_py.store.startpoints import FILTERED_KEY

log = get_logger(__name__)


class FileExtractor(Extractor):
    """Reads a work unit's files in order, as record batches, each file read to its dataset's schema.

    The schema is the one the source planned for the dataset (:mod:`gobblin_py.connectors.files.file_schema`), else the
    unit's first file's; a file that differs from it fails the task naming the file, the column, the types and
    the record, unless ``source.filebased.schema.change=allow`` (each file is then published with its own, and
    the change is logged).
    """

    def __init__(self, state: WorkUnitState) -> None:
        self.state = state
        self.settings = FileSourceSettings.load(state)
        self.paths = state.get_prop_as_list(FILES_TO_PULL_KEY)
        self.fs, _ = fsutil.open_fs(self.settings.directory, self.settings.fs_uri)
        recorded = state.get_prop(DATASET_SCHEMA_KEY)
        self.reference: pa.Schema | None = file_schema.decode(recorded) if recorded else None
        self.origin = state.get_prop(SCHEMA_SOURCE_KEY) or "the dataset's first file"
        self.strict = self.settings.schema_change == "fail"
        self._schema: pa.Schema | None = None
        self._first: OpenFile | None = None  # the first file, opened for its schema, read from then on
        self._open: list = []
        self._complete = False
        self._since: int | None = None
        # a replay: how many of the unit's files (its first) were pulled before and are filtered (None: all)
        self._replayed = state.get_prop_as_int(REPLAYED_FILES_KEY) if state.get_prop(REPLAYED_FILES_KEY) else None
        self._filtering = True  # the file being read is one of those
        self._filtered = 0
        self._records = 0
        self._min_event: int | None = None
        self._max_event: int | None = None
        self._last: tuple[str, int | None] | None = None  # the file of the batch given last, and its rows before it

    def _reader(self, path: str) -> OpenFile:
        own = None
        if not self.strict and file_format(path, self.settings.format) == "json" \
                and self.fs.size(path) > self.settings.json_block_size:
            own = json_schema(self.fs, path, self.settings)  # with the fields first seen after its first block
        opened = open_file(self.fs, path, self.settings, self.reference if self.strict else own, self.origin)
        self._open.append(opened.stream)
        if self.reference is not None:
            # strict: a type that differs is cast, batch by batch, and fails naming the first record that does not fit
            changes = file_schema.differences(self.reference, opened.schema, types=not self.strict)
            if changes and self.strict:
                raise UsageError(f"{path}: its columns differ from this dataset's schema (learnt from {self.origin}): "
                                 f"{'; '.join(changes)}; the files of a dataset share one schema: fix the file, or "
                                 f"set {SCHEMA_CHANGE_KEY}=allow to publish each file with its own")
            if changes:
                log.warning("schema_changed", file=path, schema_from=self.origin, changes=changes)
        return opened

    def get_schema(self) -> pa.Schema:
        if self._schema is None:
            first = self.paths[0] if self.paths else self.state.get_prop(SCHEMA_FILE_KEY)
            if self.paths:
                self._first = self._reader(first)
                self._schema = self._first.schema
            elif self.reference is not None:
                self._schema = self.reference
            else:
                self._schema = self._reader(first).schema if first else pa.schema([])
            if self.reference is not None and self.strict:
                # the dataset's schema, its columns of unknown (null) type typed by this file where it types them,
                # with what the file's schema carries beside its columns (an Avro schema, a Gobblin schema string)
                own = self._schema
                dataset_schema = file_schema.merged([self.reference, own])
                assert dataset_schema is not None  # merged from two schemas
                self._schema = dataset_schema.with_metadata(own.metadata)
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
            self._filtering = self._replayed is None or index < self._replayed
            if index == 0 and self._first is not None:  # its first block was parsed for the schema: go on from there
                opened, self._first = self._first, None
            else:
                opened = self._reader(path)
            rows = 0
            try:
                for batch in opened.batches:
                    if batch.schema != schema:
                        try:
                            batch = _conform(batch, schema, path, rows, self.origin if self.reference else self.paths[0])
                        except DataError as exc:
                            raise exc.located(record_place(self.fs, path, self.settings, rows + (exc.row or 0))) \
                                from exc
                    observed = self._observe(batch)
                    # where the rows of the batch about to be converted came from (rows a replay filtered out
                    # leave only the file known)
                    self._last = (path, rows if observed.num_rows == batch.num_rows else None)
                    rows += batch.num_rows
                    yield observed
            except pa.ArrowException as exc:
                raise_for(exc, self.fs, path, self.settings, self.reference if self.strict else None, self.origin,
                          rows, opened.schema)
                raise GobblinPyError(f"{path}: {exc}") from exc
        self._complete = True

    def locate(self, row: int) -> str | None:
        """The file and line (or record) of row ``row`` of the batch given last (see :mod:`gobblin_py.sdk.locating`)."""
        if self._last is None:
            return None
        path, before = self._last
        return path if before is None else record_place(self.fs, path, self.settings, before + row)

    def _observe(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """Count the batch, note its event times, and drop what a replay from a time does not want."""
        self._records += batch.num_rows
        column = self.settings.event_column
        if not column or batch.num_rows == 0:
            return batch
        from gobblin_py.connectors.files.event_time import (  # Arrow's kernels only with event times
            at_or_after,
            min_max_millis,
        )

        if column not in batch.schema.names:
            raise UsageError(f"source.event.time.column={column}: the records have no such column "
                             f"(they have {', '.join(batch.schema.names)})")
        low, high = min_max_millis(batch.column(column), column)
        if low is not None and high is not None:
            self._min_event = low if self._min_event is None else min(self._min_event, low)
            self._max_event = high if self._max_event is None else max(self._max_event, high)
        if self._since is None or not self._filtering:
            return batch
        kept = batch.filter(at_or_after(batch.column(column), column, self._since))
        self._filtered += batch.num_rows - kept.num_rows
        return kept

    def close(self) -> None:
        self.state.set_prop(FILTERED_KEY, self._filtered)
        if self._complete and self._schema is not None and self._schema.names:
            self.state.set_prop(DATASET_SCHEMA_KEY, file_schema.encode(self._schema))  # for the dataset's next run
        if self._complete:
            expected = self.state.workunit.expected_high_watermark(LongWatermark)
            if expected is not None:
                self.state.set_actual_high_watermark(expected)
        for stream in self._open:
            stream.close()
        self._open.clear()


def _conform(batch: pa.RecordBatch, schema: pa.Schema, path: str, rows_before: int, origin: str) -> pa.RecordBatch:
    """``batch`` of ``path`` as ``schema`` has it: its columns in that order, each cast to its type."""
    if sorted(batch.schema.names) != sorted(schema.names):
        raise UsageError(f"{path}: columns {batch.schema.names} differ from {schema.names}, those of {origin}: the "
                         f"files of a dataset share one schema")
    columns = []
    for field in schema:
        column = batch.column(field.name)
        if column.type != field.type:
            bad = first_bad_row(column, field.type)
            if bad is not None:
                raise DataError(
                    f"column '{field.name}' is {field.type} in this dataset (its schema learnt from {origin}) "
                    f"but {column.type} in this file: record {rows_before + bad + 1} holds "
                    f"{shown(column[bad].as_py())}, which is no {field.type}; the files of a dataset "
                    f"share one schema: fix the file, or set {SCHEMA_CHANGE_KEY}=allow to publish each file with "
                    f"its own", row=bad)
            column = column.cast(field.type)
        columns.append(column)
    return pa.RecordBatch.from_arrays(columns, schema=schema)
