"""A file source: CSV, JSON-lines, Parquet and Avro files under a directory, pulled incrementally.

Like Gobblin's ``FileBasedSource`` it tracks files, not watermarks: the state of each dataset keeps a snapshot
of the files already pulled (``source.filebased.fs.snapshot``, entries ``<path>:::<mtime ms>``), and a run
pulls each listed file that is not in it — a new file, or one whose modification time changed. Files are
never compared by time against a watermark, so files with equal modification times are neither skipped nor
pulled twice. Work units of a previous run that did not commit are retried (``workunit.retry.policy``).

Its keys are declared in :class:`FileSourceSettings` (``gpy plugins`` and the README list them).
"""

from __future__ import annotations

import fnmatch
import os
from datetime import datetime
from typing import Any
import posixpath
from collections.abc import Iterator

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.json as pa_json
import pyarrow.parquet as pq

from dataclasses import dataclass

from gobblin_py import fs as fsutil
from gobblin_py.api import Extractor, PartitionProgress, Source
from gobblin_py.config.errors import ConfigError
from gobblin_py.config.settings import Kind, Settings, setting
from gobblin_py.errors import GobblinPyError, UsageError
from gobblin_py.logs import get_logger
from gobblin_py.native_io import open_input
from gobblin_py.sources.retry import workunits_to_retry
from gobblin_py.state.progress import replay_low
from gobblin_py.state.startpoints import (
    FILTERED_KEY,
    Startpoint,
    StartpointKind,
    filter_before_startpoint,
    mark_applied,
    parse_time_ms,
    startpoint_for,
)
from gobblin_py.state import Extract, LongWatermark, SourceState, WatermarkInterval, WorkUnit, WorkUnitState

log = get_logger(__name__)

DATA_DIRECTORY_KEY = "source.filebased.data.directory"
FORMAT_KEY = "source.filebased.format"
SNAPSHOT_KEY = "source.filebased.fs.snapshot"
FILES_TO_PULL_KEY = "source.filebased.files.to.pull"
FILE_MTIMES_KEY = "source.filebased.files.mtime"  # the modification times of the files to pull, in their order
SCHEMA_FILE_KEY = "source.filebased.schema.file"  # a unit that reads no file takes its schema from this one
SNAPSHOT_SEPARATOR = ":::"

FORMATS = {".csv": "csv", ".tsv": "csv", ".json": "json", ".jsonl": "json", ".ndjson": "json", ".parquet": "parquet",
           ".avro": "avro"}


@dataclass(frozen=True)
class FileSourceSettings(Settings):
    """The keys of :class:`FileBasedSource`."""

    directory: str = setting(DATA_DIRECTORY_KEY, required=True, doc="folder to list, recursively (a path or URL)")
    fs_uri: str | None = setting("source.filebased.fs.uri", default_doc="file:///",
                                 doc="filesystem of a bare directory path")
    pattern: str = setting("source.filebased.file.pattern", default="*", doc="glob the file name must match")
    format: str | None = setting(FORMAT_KEY, choices=("csv", "json", "jsonl", "parquet", "avro"), default_doc="by extension",
                                 doc="file format (jsonl = json: JSON lines)")
    urn_level: str = setting("source.filebased.dataset.urn.level", default="directory",
                             choices=("directory", "subdirectory"),
                             doc="directory: one dataset; subdirectory: each first-level sub-folder is a dataset")
    max_files: int | None = setting("source.filebased.maxFilesPerRun", minimum=1, default_doc="unlimited",
                                    doc="at most this many new files per dataset and run (oldest names first)")
    max_units: int | None = setting("source.max.number.of.partitions", minimum=1, default_doc="one per file",
                                    doc="at most this many work units per dataset")
    csv_delimiter: str = setting("source.filebased.csv.delimiter", default=",", doc="CSV field delimiter (one character)")
    csv_header: bool = setting("source.filebased.csv.header", default=True,
                               doc="the first CSV row holds the column names")
    csv_columns: tuple[str, ...] = setting("source.filebased.csv.column.names", default=(),
                                           doc="column names when the CSV has no header")
    csv_block_size: int = setting("source.filebased.csv.block.size", kind=Kind.SIZE, default=16 << 20, minimum=1 << 16,
                                  default_doc="16MB", doc="bytes of CSV parsed at a time; a row must fit in one block")
    batch_size: int = setting("source.filebased.batch.size", default=65536, minimum=1,
                              doc="rows per batch read from Parquet and Avro files")
    avro_schema: str | None = setting("source.schema", default_doc="each file's own",
                                      doc="Avro files: the reader schema (JSON) to read every file with")
    event_column: str | None = setting("source.event.time.column",
                                       doc="the column holding each record's event time (a timestamp, a date or epoch "
                                           "milliseconds): completeness and replay from a time follow it")

    @property
    def delimiter(self) -> str:
        return "\t" if self.csv_delimiter in ("\\t", "tab") else self.csv_delimiter

    def check(self) -> list[ConfigError]:
        if len(self.delimiter) != 1:
            return [ConfigError(f"{self.csv_delimiter!r} is not one character", key="source.filebased.csv.delimiter",
                                hint="use one character, or \\t or tab for a tab")]
        return []


def snapshot_entry(path: str, mtime_ms: int) -> str:
    return f"{path}{SNAPSHOT_SEPARATOR}{mtime_ms}"


def parse_snapshot(text: str | None) -> set[str]:
    return {entry.strip() for entry in (text or "").split(",") if entry.strip()}


class FileBasedSource(Source):
    """Lists data files, diffs them against each dataset's snapshot and makes one work unit per new file.

    Startpoints (per dataset): ``OLDEST`` pulls every listed file again, ``UPCOMING`` marks every listed file as
    pulled without reading it, ``SPECIFIC`` (a modification time: epoch milliseconds or ISO 8601) pulls again the
    files modified at or after it, ``TIMESTAMP`` pulls again the files of the earliest committed work unit whose
    records reach the time (``source.event.time.column`` names the records' event time) and everything after.
    """

    settings_class: type[FileSourceSettings] = FileSourceSettings
    startpoint_kinds = frozenset({"OLDEST", "UPCOMING", "SPECIFIC", "TIMESTAMP"})

    def get_workunits(self, state: SourceState) -> list[WorkUnit]:
        settings = FileSourceSettings.load(state)
        fs, root = fsutil.open_fs(settings.directory, settings.fs_uri)
        self._fs = fs
        if not fs.isdir(root):
            where = " (no object has this prefix)" if fsutil.is_object_store(fs) else ""
            raise GobblinPyError(f"{DATA_DIRECTORY_KEY}={settings.directory}: no such directory{where}")
        level = settings.urn_level
        listing = self._list(fs, root, settings.pattern)
        by_urn: dict[str, list[tuple[str, int]]] = {}
        default_urn = state.get_prop("dataset.urn", "")
        for path, mtime in listing:
            relative = posixpath.relpath(path, root)
            if level == "subdirectory":
                if "/" not in relative:
                    continue  # files directly in the root belong to no dataset at this level
                urn = relative.split("/", 1)[0]
            else:
                urn = default_urn
            by_urn.setdefault(urn, []).append((path, mtime))
        previous = state.previous_workunit_states_by_urn()
        units: list[WorkUnit] = []
        for urn in sorted(set(by_urn) | set(previous)):
            units.extend(self._dataset_workunits(state, settings, urn, by_urn.get(urn, []), previous.get(urn, [])))
        return units

    @staticmethod
    def _list(fs, root: str, pattern: str) -> list[tuple[str, int]]:
        found = []
        for path, info in sorted(fs.find(root, detail=True, withdirs=False).items()):
            name = posixpath.basename(path)
            relative_parts = posixpath.relpath(path, root).split("/")
            if any(part.startswith((".", "_")) for part in relative_parts):
                continue  # hidden files and folders, as Hadoop lists them (_SUCCESS, .crc, _tmp…)
            if fnmatch.fnmatchcase(name, pattern):
                found.append((path, _mtime_ms(info, fs, path)))
        return found

    def _dataset_workunits(self, state: SourceState, settings: FileSourceSettings, urn: str,
                           files: list[tuple[str, int]], previous: list[WorkUnitState]) -> list[WorkUnit]:
        level = settings.urn_level
        seen: set[str] = set()
        for wus in previous:
            seen |= parse_snapshot(wus.get_prop(SNAPSHOT_KEY))
        retries = workunits_to_retry(state, previous)
        retry_paths = set()
        retry_units = []
        current = {path: mtime for path, mtime in files}
        for old in retries:
            paths = [p for p in old.get_prop_as_list(FILES_TO_PULL_KEY) if p in current]
            missing = [p for p in old.get_prop_as_list(FILES_TO_PULL_KEY) if p not in current]
            if missing:
                log.warning("retried_files_missing", dataset=urn, files=missing)
            if paths:
                retry_paths.update(paths)
                retry_units.append(paths)
        startpoint = startpoint_for(state, urn)
        if startpoint is not None:
            seen = self._start(startpoint, seen, files, state.previous_dataset_states.get(urn), urn)
        new = [(p, m) for p, m in files if self.snapshot_entry(p, m) not in seen and p not in retry_paths]
        if settings.max_files is not None and len(new) > settings.max_files:
            new = sorted(new)[:settings.max_files]
        if not new and not retry_units and startpoint is None:
            return []
        snapshot = seen | {self.snapshot_entry(p, m) for p, m in new} | {
            self.snapshot_entry(p, current[p]) for p in retry_paths
        }
        groups = retry_units + self._group([p for p, _ in new], settings.max_units)
        if not groups:
            if not files:
                return []  # nothing listed: the startpoint waits for files to act on
            groups = [[]]  # a unit that reads nothing and carries the startpoint's snapshot to the commit
        table = urn if level == "subdirectory" else (
            state.get_prop("extract.table.name") or state.get_prop("source.entity") or state.get_prop("job.name", "files")
        )
        namespace = state.get_prop("extract.namespace") or ""
        table_type = state.get_prop("extract.table.type") or "APPEND_ONLY"
        # informational watermarks (the snapshot decides what is new): newest mtime pulled before → newest of the unit
        low = max((_entry_mtime(e) for e in seen), default=0)
        units = []
        for index, paths in enumerate(groups):
            high = max((current[p] for p in paths), default=low)
            unit = WorkUnit.create(
                Extract.create(table_type, namespace, table),
                WatermarkInterval.of(LongWatermark(min(low, high)), LongWatermark(high)),
            )
            unit.set_prop(FILES_TO_PULL_KEY, ",".join(paths))
            unit.set_prop(FILE_MTIMES_KEY, ",".join(str(current[p]) for p in paths))
            if not paths:
                unit.set_prop(SCHEMA_FILE_KEY, min(current))  # its schema is the dataset's, though it reads no row
            self.configure_unit(unit)
            if level == "subdirectory":
                unit.set_prop("dataset.urn", urn)
            if index == 0:  # the dataset's whole snapshot (and the startpoint it consumes) rides on its first unit
                unit.set_prop(SNAPSHOT_KEY, ",".join(sorted(snapshot)))
                if startpoint is not None:
                    mark_applied(unit, startpoint)
            if startpoint is not None:
                filter_before_startpoint(unit, startpoint)
            units.append(unit)
        log.info("files_planned", dataset=urn, new_files=len(new), retried_work_units=len(retry_units))
        return units

    def _start(self, startpoint: Startpoint, seen: set[str], files: list[tuple[str, int]], previous: Any,
               urn: str) -> set[str]:
        """The snapshot to plan from when a startpoint asks the dataset to start elsewhere."""
        kind = startpoint.kind
        if kind is StartpointKind.OLDEST:
            return set()
        if kind is StartpointKind.UPCOMING:
            return seen | {self.snapshot_entry(p, m) for p, m in files}
        if kind is StartpointKind.TIMESTAMP:
            found, low = replay_low(previous, "", startpoint.timestamp_ms)
            if not found:
                log.info("startpoint_nothing_to_replay", dataset=urn, startpoint=startpoint.describe())
                return seen
            if low is None:  # no history: replay everything (records before the time are filtered)
                return set()
            since = int(low)
        else:
            since = parse_time_ms(str(startpoint.value), "startpoint value")
        return {e for e in seen if _entry_mtime(e) < since} | {self.snapshot_entry(p, m) for p, m in files if m < since}

    def snapshot_entry(self, path: str, mtime_ms: int) -> str:
        """How a pulled file is remembered in the dataset's snapshot: ``<path>:::<mtime ms>``."""
        return snapshot_entry(path, mtime_ms)

    def configure_unit(self, unit: WorkUnit) -> None:
        """Set what a subclass's extractor needs on each work unit (nothing here)."""

    @staticmethod
    def _group(paths: list[str], max_units: int | None) -> list[list[str]]:
        if not paths:
            return []
        count = len(paths) if max_units is None else min(max_units, len(paths))
        per_unit = -(-len(paths) // count)
        return [paths[i : i + per_unit] for i in range(0, len(paths), per_unit)]

    def get_extractor(self, state: WorkUnitState) -> Extractor:
        return FileExtractor(state)


def _entry_mtime(entry: str) -> int:
    try:
        return int(entry.rsplit(SNAPSHOT_SEPARATOR, 1)[1])
    except (IndexError, ValueError):
        return 0


def _mtime_ms(info: dict, fs, path: str) -> int:
    for key in ("mtime", "LastModified", "last_modified", "updated"):
        value = info.get(key)
        if value is not None:
            return int(value.timestamp() * 1000) if isinstance(value, datetime) else int(float(value) * 1000)
    return int(fs.modified(path).timestamp() * 1000)


def file_format(path: str, configured: str | None) -> str:
    """The format of ``path``: the configured one (``jsonl`` read as ``json``), else by its extension."""
    if configured:
        return "json" if configured == "jsonl" else configured
    ext = os.path.splitext(path)[1].lower()
    if ext not in FORMATS:
        raise UsageError(f"{path}: cannot tell the file format from its extension; set {FORMAT_KEY}")
    return FORMATS[ext]


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
                reader = pa_json.open_json(stream)
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
                if "straddling" in str(exc) or "block size" in str(exc):
                    raise GobblinPyError(f"{path}: a CSV row is larger than source.filebased.csv.block.size "
                                         f"({self.settings.csv_block_size} bytes): raise it") from exc
                raise GobblinPyError(f"{path}: {exc}") from exc
        self._complete = True

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
        if low is not None and high is not None:  # (both are, or neither)
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
