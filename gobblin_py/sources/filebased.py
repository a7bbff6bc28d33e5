"""A file source: CSV, JSON-lines and Parquet files under a directory, pulled incrementally.

Like Gobblin's ``FileBasedSource`` it tracks files, not watermarks: the state of each dataset keeps a snapshot
of the files already pulled (``source.filebased.fs.snapshot``, entries ``<path>:::<mtime ms>``), and a run
pulls each listed file that is not in it — a new file, or one whose modification time changed. Files are
never compared by time against a watermark, so files with equal modification times are neither skipped nor
pulled twice. Work units of a previous run that did not commit are retried (``workunit.retry.policy``).

Keys:

| key | default | meaning |
|---|---|---|
| ``source.filebased.data.directory`` | required | directory to list (recursively) |
| ``source.filebased.fs.uri`` | ``file:///`` | filesystem of a bare directory path |
| ``source.filebased.file.pattern`` | ``*`` | glob the file *name* must match |
| ``source.filebased.format`` | by extension | ``csv``, ``json`` (JSON lines) or ``parquet`` |
| ``source.filebased.dataset.urn.level`` | ``directory`` | ``directory``: one dataset (``dataset.urn``, default ""); ``subdirectory``: each first-level sub-directory is a dataset named after it |
| ``source.filebased.maxFilesPerRun`` | unlimited | at most this many new files per dataset and run (oldest names first) |
| ``source.max.number.of.partitions`` | one work unit per file | cap on work units per dataset |
| ``source.filebased.csv.delimiter`` | ``,`` | CSV field delimiter |
| ``source.filebased.csv.header`` | ``true`` | the first CSV row holds the column names; else ``source.filebased.csv.column.names`` |
| ``source.filebased.batch.size`` | ``65536`` | rows per Parquet/JSON batch |
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
from collections.abc import Iterator

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.json as pa_json
import pyarrow.parquet as pq

from gobblin_py import fs as fsutil
from gobblin_py.api import Extractor, Source
from gobblin_py.errors import GobblinPyError, UsageError
from gobblin_py.logs import get_logger
from gobblin_py.sources.retry import workunits_to_retry
from gobblin_py.state import Extract, LongWatermark, SourceState, WatermarkInterval, WorkUnit, WorkUnitState

log = get_logger(__name__)

DATA_DIRECTORY_KEY = "source.filebased.data.directory"
FS_URI_KEY = "source.filebased.fs.uri"
PATTERN_KEY = "source.filebased.file.pattern"
FORMAT_KEY = "source.filebased.format"
URN_LEVEL_KEY = "source.filebased.dataset.urn.level"
MAX_FILES_KEY = "source.filebased.maxFilesPerRun"
SNAPSHOT_KEY = "source.filebased.fs.snapshot"
FILES_TO_PULL_KEY = "source.filebased.files.to.pull"
MAX_PARTITIONS_KEY = "source.max.number.of.partitions"
BATCH_SIZE_KEY = "source.filebased.batch.size"
SNAPSHOT_SEPARATOR = ":::"

FORMATS = {".csv": "csv", ".tsv": "csv", ".json": "json", ".jsonl": "json", ".ndjson": "json", ".parquet": "parquet"}


def snapshot_entry(path: str, mtime_ms: int) -> str:
    return f"{path}{SNAPSHOT_SEPARATOR}{mtime_ms}"


def parse_snapshot(text: str | None) -> set[str]:
    return {entry.strip() for entry in (text or "").split(",") if entry.strip()}


class FileBasedSource(Source):
    """Lists data files, diffs them against each dataset's snapshot and makes one work unit per new file."""

    def get_workunits(self, state: SourceState) -> list[WorkUnit]:
        directory = state.get_prop(DATA_DIRECTORY_KEY)
        if not directory:
            raise UsageError(f"{DATA_DIRECTORY_KEY} is not set: name the directory to pull files from")
        fs, root = fsutil.open_fs(directory, state.get_prop(FS_URI_KEY))
        if not fs.isdir(root):
            raise GobblinPyError(f"{DATA_DIRECTORY_KEY}={directory}: no such directory")
        level = (state.get_prop(URN_LEVEL_KEY) or "directory").strip().lower()
        if level not in ("directory", "subdirectory"):
            raise UsageError(f"{URN_LEVEL_KEY}={level}: use 'directory' or 'subdirectory'")
        listing = self._list(fs, root, state.get_prop(PATTERN_KEY) or "*")
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
            units.extend(self._dataset_workunits(state, fs, urn, by_urn.get(urn, []), previous.get(urn, []), level))
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

    def _dataset_workunits(self, state: SourceState, fs, urn: str, files: list[tuple[str, int]],
                           previous: list[WorkUnitState], level: str) -> list[WorkUnit]:
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
        new = [(p, m) for p, m in files if snapshot_entry(p, m) not in seen and p not in retry_paths]
        max_files = state.get_prop_as_int(MAX_FILES_KEY)
        if max_files is not None and len(new) > max_files:
            new = sorted(new)[:max_files]
        if not new and not retry_units:
            return []
        snapshot = seen | {snapshot_entry(p, m) for p, m in new} | {
            snapshot_entry(p, current[p]) for p in retry_paths
        }
        groups = retry_units + self._group([p for p, _ in new], state.get_prop_as_int(MAX_PARTITIONS_KEY))
        table = urn if level == "subdirectory" else (
            state.get_prop("extract.table.name") or state.get_prop("source.entity") or state.get_prop("job.name", "files")
        )
        namespace = state.get_prop("extract.namespace") or ""
        table_type = state.get_prop("extract.table.type") or "APPEND_ONLY"
        # informational watermarks (the snapshot decides what is new): newest mtime pulled before → newest of the unit
        low = max((_entry_mtime(e) for e in seen), default=0)
        units = []
        for index, paths in enumerate(groups):
            high = max(current[p] for p in paths)
            unit = WorkUnit.create(
                Extract.create(table_type, namespace, table),
                WatermarkInterval.of(LongWatermark(min(low, high)), LongWatermark(high)),
            )
            unit.set_prop(FILES_TO_PULL_KEY, ",".join(paths))
            if level == "subdirectory":
                unit.set_prop("dataset.urn", urn)
            if index == 0:  # the dataset's whole snapshot rides on its first work unit
                unit.set_prop(SNAPSHOT_KEY, ",".join(sorted(snapshot)))
            units.append(unit)
        log.info("files_planned", dataset=urn, new_files=len(new), retried_work_units=len(retry_units))
        return units

    @staticmethod
    def _group(paths: list[str], max_units: int | None) -> list[list[str]]:
        if not paths:
            return []
        count = len(paths) if not max_units or max_units <= 0 else min(max_units, len(paths))
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
            return int(value.timestamp() * 1000) if hasattr(value, "timestamp") else int(float(value) * 1000)
    return int(fs.modified(path).timestamp() * 1000)


def file_format(path: str, configured: str | None) -> str:
    if configured:
        fmt = configured.strip().lower()
        if fmt == "jsonl":
            fmt = "json"
        if fmt not in ("csv", "json", "parquet"):
            raise UsageError(f"{FORMAT_KEY}={configured}: use csv, json or parquet")
        return fmt
    ext = os.path.splitext(path)[1].lower()
    if ext not in FORMATS:
        raise UsageError(f"{path}: cannot tell the file format from its extension; set {FORMAT_KEY}")
    return FORMATS[ext]


class FileExtractor(Extractor):
    """Reads a work unit's files in order, as record batches; later files are cast to the first's schema."""

    def __init__(self, state: WorkUnitState) -> None:
        self.state = state
        self.paths = state.get_prop_as_list(FILES_TO_PULL_KEY)
        self.fs, _ = fsutil.open_fs(state.get_prop(DATA_DIRECTORY_KEY), state.get_prop(FS_URI_KEY))
        self.batch_size = state.get_prop_as_int(BATCH_SIZE_KEY, 65536)
        self._schema: pa.Schema | None = None
        self._open: list = []

    def _reader(self, path: str):
        fmt = file_format(path, self.state.get_prop(FORMAT_KEY))
        stream = self.fs.open(path, "rb")
        self._open.append(stream)
        try:
            if fmt == "parquet":
                parquet = pq.ParquetFile(stream)
                return parquet.schema_arrow, parquet.iter_batches(batch_size=self.batch_size), parquet.metadata.num_rows
            if fmt == "json":
                reader = pa_json.open_json(stream)
                return reader.schema, iter(reader), -1
            header = self.state.get_prop_as_bool("source.filebased.csv.header", True)
            names = self.state.get_prop_as_list("source.filebased.csv.column.names") or None
            delimiter = self.state.get_prop("source.filebased.csv.delimiter", ",")
            reader = pa_csv.open_csv(
                stream,
                read_options=pa_csv.ReadOptions(autogenerate_column_names=not header and not names, column_names=names),
                parse_options=pa_csv.ParseOptions(delimiter=delimiter),
            )
            return reader.schema, iter(reader), -1
        except (pa.ArrowException, OSError) as exc:
            raise GobblinPyError(f"{path}: cannot read as {fmt}: {exc}") from exc

    def get_schema(self) -> pa.Schema:
        if self._schema is None:
            if not self.paths:
                self._schema = pa.schema([])
            else:
                self._schema = self._reader(self.paths[0])[0]
        return self._schema

    def get_expected_record_count(self) -> int:
        """Known for Parquet (from file footers); -1 for CSV and JSON, as Gobblin's file extractors say."""
        if not self.paths or any(file_format(p, self.state.get_prop(FORMAT_KEY)) != "parquet" for p in self.paths):
            return -1
        total = 0
        for path in self.paths:
            with self.fs.open(path, "rb") as stream:
                total += pq.ParquetFile(stream).metadata.num_rows
        return total

    def read_batches(self) -> Iterator[pa.RecordBatch]:
        schema = self.get_schema()
        self._complete = False
        for path in self.paths:
            file_schema, batches, _ = self._reader(path)
            try:
                for batch in batches:
                    if file_schema != schema:
                        batch = _conform(batch, schema, path)
                    yield batch
            except pa.ArrowException as exc:
                raise GobblinPyError(f"{path}: {exc}") from exc
        self._complete = True

    def close(self) -> None:
        if getattr(self, "_complete", False):
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
