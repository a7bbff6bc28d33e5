"""A file source: CSV, JSON-lines, Parquet and Avro files under a directory, pulled incrementally.

Like Gobblin's ``FileBasedSource`` it tracks files, not watermarks: the state of each dataset keeps a snapshot
of the files already pulled (``source.filebased.fs.snapshot``, entries ``<path>:::<mtime ms>``), and a run
pulls each listed file that is not in it — a new file, or one whose modification time changed. Files are
never compared by time against a watermark, so files with equal modification times are neither skipped nor
pulled twice. Work units of a previous run that did not commit are retried (``workunit.retry.policy``).

Its keys are declared in :class:`FileSourceSettings` (``gpy plugins`` and the docs' key reference list them).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import posixpath
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from gobblin_py.connectors.files import file_schema, file_startpoints
from gobblin_py.connectors.files.empty_listing import Listing, explain
from gobblin_py.connectors.files.file_extractor import FileExtractor
from gobblin_py.connectors.files.file_readers import open_file
from gobblin_py.connectors.files.file_schema import DATASET_SCHEMA_KEY, INFERENCE_BYTES, PREVIOUS_RUN, SCHEMA_SOURCE_KEY
from gobblin_py.connectors.files.file_settings import (
    DATA_DIRECTORY_KEY,
    FILE_MTIMES_KEY,
    FILES_TO_PULL_KEY,
    FORMAT_KEY,
    REPLAYED_FILES_KEY,
    SCHEMA_FILE_KEY,
    SNAPSHOT_KEY,
    SNAPSHOT_SEPARATOR,
    FileSourceSettings,
)
from gobblin_py.connectors.files.file_startpoints import entry_mtime
from gobblin_py.io import fs as fsutil
from gobblin_py.sdk.contracts import EmptyPlan, Extractor, Source
from gobblin_py.sdk.errors import GobblinPyError, UsageError
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.retry import workunits_to_retry
from gobblin_py.sdk.run_states import SourceState
from gobblin_py.sdk.states import Extract, WorkingState, WorkUnit, WorkUnitState
from gobblin_py.sdk.watermarks import LongWatermark, WatermarkInterval
from gobblin_py.store.startpoints import (
    Startpoint,
    StartpointKind,
    filter_before_startpoint,
    mark_applied,
    no_partition,
    parse_time_ms,
    startpoint_for,
)

log = get_logger(__name__)

TASK_POLICIES_KEY = "qualitychecker.task.policies"  # (.N per branch) Gobblin's SchemaCompatibilityPolicy among them?


def snapshot_entry(path: str, mtime_ms: int) -> str:
    return f"{path}{SNAPSHOT_SEPARATOR}{mtime_ms}"


def parse_snapshot(text: str | None) -> set[str]:
    return {entry.strip() for entry in (text or "").split(",") if entry.strip()}


class FileBasedSource(Source):
    """Lists data files, diffs them against each dataset's snapshot and makes one work unit per new file.

    Startpoints (per dataset): ``OLDEST`` pulls every listed file again, ``UPCOMING`` marks every listed file as
    pulled without reading it, ``SPECIFIC`` (a modification time: epoch milliseconds or ISO 8601) pulls again the
    files modified at or after it, ``TIMESTAMP`` pulls again the files pulled before whose records may reach the
    time, never skipping a file not pulled yet (:mod:`.file_startpoints`).
    """

    settings_class: type[FileSourceSettings] = FileSourceSettings
    startpoint_kinds = frozenset({"OLDEST", "UPCOMING", "SPECIFIC", "TIMESTAMP"})

    @classmethod
    def check_startpoint(cls, props: Mapping[str, str], urn: str, partition: str, point: Startpoint) -> None:
        """No partition; a SPECIFIC value must be a file modification time."""
        no_partition("FileBasedSource", partition)
        if point.kind is StartpointKind.SPECIFIC:
            try:
                parse_time_ms(str(point.value), "value")
            except UsageError as exc:
                raise UsageError(f"value {point.value!r} is not a file modification time, the watermark of "
                                 f"FileBasedSource: {exc}") from None

    @classmethod
    def newest_event_ms(cls, props: Mapping[str, str], urn: str, partition: str) -> int | None:
        """Without ``source.event.time.column``, a file's modification time stands for its records' time (a
        replay from a time pulls again the files modified at or after it): the newest modification time of the
        dataset's files. With it, None: the records' times are known only by reading them."""
        try:
            settings = FileSourceSettings.load(props)
            if settings.event_column:
                return None
            fs, root = fsutil.open_fs(settings.directory, settings.fs_uri)
            listing = cls._list(fs, root, settings.pattern) if fs.isdir(root) else []
        except (GobblinPyError, OSError, ValueError):  # a folder that cannot be listed cannot say
            return None
        def of_dataset(path: str) -> bool:  # at the subdirectory level, a dataset is a first-level sub-folder
            relative = posixpath.relpath(path, root)
            return settings.urn_level != "subdirectory" or ("/" in relative and relative.split("/", 1)[0] == urn)

        return max((mtime for path, mtime in listing if of_dataset(path)), default=None)

    def get_workunits(self, state: SourceState) -> list[WorkUnit]:
        settings = FileSourceSettings.load(state)
        fs, root = fsutil.open_fs(settings.directory, settings.fs_uri)
        self._fs = fs
        if not fs.isdir(root):
            where = " (no object has this prefix)" if fsutil.is_object_store(fs) else ""
            # a folder the job names that is not there is the job's configuration, not a run that may pass
            raise UsageError(f"{DATA_DIRECTORY_KEY}={settings.directory}: no such directory{where}")
        level = settings.urn_level
        self._listing = Listing(settings.directory, settings.pattern)
        listing = self._list(fs, root, settings.pattern, self._listing)
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
        # a job that checks its schema against the previous run's with Gobblin's policy lets the policy judge
        self._previous_schema = not any("SchemaCompatibilityPolicy" in (value or "") for key, value
                                        in state.all_properties().items() if key.startswith(TASK_POLICIES_KEY))
        units: list[WorkUnit] = []
        for urn in sorted(set(by_urn) | set(previous)):
            units.extend(self._dataset_workunits(state, settings, urn, by_urn.get(urn, []), previous.get(urn, [])))
        self._newest_ms = max((mtime for _, mtime in listing), default=0)
        self._datasets = len(by_urn)
        return units

    def explain_empty_plan(self) -> EmptyPlan | None:
        """Why the last plan was empty: the pattern matched no file (naming those that differ only in case), or
        every file it matched was pulled before."""
        listing = getattr(self, "_listing", None)
        return None if listing is None else explain(listing, self._datasets, self._newest_ms)

    @staticmethod
    def _list(fs, root: str, pattern: str, seen: Listing | None = None) -> list[tuple[str, int]]:
        """The files under ``root`` whose name matches ``pattern``, with their modification times; ``seen``
        records every visible file and how many matched."""
        found = []
        for path, info in sorted(fs.find(root, detail=True, withdirs=False).items()):
            name = posixpath.basename(path)
            relative_parts = posixpath.relpath(path, root).split("/")
            if any(part.startswith((".", "_")) for part in relative_parts):
                continue  # hidden files and folders, as Hadoop lists them (_SUCCESS, .crc, _tmp…)
            if seen is not None:
                seen.visible.append("/".join(relative_parts))
            if fnmatch.fnmatchcase(name, pattern):
                found.append((path, _mtime_ms(info, fs, path)))
        if seen is not None:
            seen.matched = len(found)
        return found

    def _dataset_workunits(self, state: SourceState, settings: FileSourceSettings, urn: str,
                           files: list[tuple[str, int]], previous: list[WorkUnitState]) -> list[WorkUnit]:
        """One dataset's work units: the files of its failed units again, then the files not in its snapshot (or
        those a startpoint pulls again), grouped; the first unit carries the dataset's new snapshot."""
        seen: set[str] = set()
        for wus in previous:
            seen |= parse_snapshot(wus.get_prop(SNAPSHOT_KEY))
        current = dict(files)
        retry_units = _retried_files(state, previous, current, urn)
        retry_paths = {path for paths in retry_units for path in paths}
        startpoint = startpoint_for(state, urn)
        filtered: set[str] = set()  # the files pulled again whose records before a startpoint's time are dropped
        if startpoint is not None:
            begun = self._start(startpoint, seen, {self.snapshot_entry(p, m): m for p, m in files},
                                state.previous_dataset_states.get(urn), urn, settings.event_column)
            seen, filtered = begun.snapshot, begun.filtered
        new = [(p, m) for p, m in files if self.snapshot_entry(p, m) not in seen and p not in retry_paths]
        if settings.max_files is not None and len(new) > settings.max_files:
            new = sorted(new)[:settings.max_files]
        if not new and not retry_units and startpoint is None:
            return []
        groups = retry_units + self._group([p for p, _ in new], settings.max_units)
        if not groups:
            if not files:
                return []  # nothing listed: the startpoint waits for files to act on
            groups = [[]]  # a unit that reads nothing and carries the startpoint's snapshot to the commit
        schema = self._dataset_schema(settings, previous, groups)
        plan = _DatasetPlan(urn, settings.urn_level == "subdirectory", self._extract(state, urn, settings.urn_level),
                            current, max((entry_mtime(e) for e in seen), default=0), schema, startpoint, filtered)
        snapshot = seen | {self.snapshot_entry(p, m) for p, m in new} | {
            self.snapshot_entry(p, current[p]) for p in retry_paths
        }
        units = [self._unit(plan, paths, snapshot if index == 0 else None) for index, paths in enumerate(groups)]
        log.info("files_planned", dataset=urn, new_files=len(new), retried_work_units=len(retry_units))
        return units

    @staticmethod
    def _extract(state: SourceState, urn: str, level: str) -> Extract:
        """The extract of a dataset's units: its table is the dataset's folder at ``subdirectory`` level."""
        table = urn if level == "subdirectory" else (
            state.get_prop("extract.table.name") or state.get_prop("source.entity") or state.get_prop("job.name", "files")
        )
        return Extract.create(state.get_prop("extract.table.type") or "APPEND_ONLY",
                              state.get_prop("extract.namespace") or "", table)

    def _unit(self, plan: _DatasetPlan, paths: list[str], snapshot: set[str] | None) -> WorkUnit:
        """The work unit reading ``paths``; the dataset's first one carries its ``snapshot`` (and the startpoint
        it consumes)."""
        current, startpoint = plan.current, plan.startpoint
        # the files pulled again come first: the unit filters its first REPLAYED_FILES_KEY files, none after
        paths = sorted(paths, key=lambda p: self.snapshot_entry(p, current[p]) not in plan.filtered)
        replayed = sum(1 for p in paths if self.snapshot_entry(p, current[p]) in plan.filtered)
        # informational watermarks (the snapshot decides what is new): newest mtime pulled before → newest of the unit
        high = max((current[p] for p in paths), default=plan.low)
        unit = WorkUnit.create(plan.extract,
                               WatermarkInterval.of(LongWatermark(min(plan.low, high)), LongWatermark(high)))
        unit.set_prop(FILES_TO_PULL_KEY, ",".join(paths))
        unit.set_prop(FILE_MTIMES_KEY, ",".join(str(current[p]) for p in paths))
        if not paths:
            unit.set_prop(SCHEMA_FILE_KEY, min(current))  # its schema is the dataset's, though it reads no row
        schema, schema_from = plan.schema
        if schema is not None:
            unit.set_prop(DATASET_SCHEMA_KEY, schema)
            unit.set_prop(SCHEMA_SOURCE_KEY, schema_from)
        self.configure_unit(unit)
        if plan.by_folder:
            unit.set_prop("dataset.urn", plan.urn)
        if snapshot is not None:
            unit.set_prop(SNAPSHOT_KEY, ",".join(sorted(snapshot)))
            if startpoint is not None:
                mark_applied(unit, startpoint, filtered=False)
        if startpoint is not None and replayed:
            filter_before_startpoint(unit, startpoint)
            unit.set_prop(REPLAYED_FILES_KEY, replayed)
        return unit

    def _dataset_schema(self, settings: FileSourceSettings, previous: list[WorkUnitState],
                        groups: list[list[str]]) -> tuple[str | None, str]:
        """The schema every file of the dataset is read to in this run, and where it was learnt (see file_schema)."""
        recorded = [text for wus in previous if wus.working_state is WorkingState.COMMITTED and self._previous_schema
                    for text in [wus.get_prop(DATASET_SCHEMA_KEY)] if text]
        if recorded:
            if len(set(recorded)) == 1:
                return recorded[0], PREVIOUS_RUN
            return file_schema.encode(file_schema.merged(map(file_schema.decode, recorded))), PREVIOUS_RUN
        paths = [path for group in groups for path in group]
        if len(paths) < 2:
            return None, ""  # one file: its own schema, recorded for the next run
        probe = WorkUnit.create()
        self.configure_unit(probe)  # a subclass may fix the format its units read
        read_as = dataclasses.replace(settings, format=probe.get_prop(FORMAT_KEY) or settings.format)
        first = open_file(self._fs, paths[0], read_as, block_size=INFERENCE_BYTES)
        first.stream.close()
        return file_schema.encode(first.schema), paths[0]

    def _start(self, startpoint: Startpoint, seen: set[str], listed: dict[str, int], previous: Any, urn: str,
               event_column: str | None) -> file_startpoints.Start:
        """Where the dataset starts for an operator's startpoint (see :mod:`.file_startpoints`)."""
        return file_startpoints.start(startpoint, seen, listed, previous, urn, event_column)

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


def _mtime_ms(info: dict, fs, path: str) -> int:
    for key in ("mtime", "LastModified", "last_modified", "updated"):
        value = info.get(key)
        if value is not None:
            return int(value.timestamp() * 1000) if isinstance(value, datetime) else int(float(value) * 1000)
    return int(fs.modified(path).timestamp() * 1000)


@dataclasses.dataclass(frozen=True)
class _DatasetPlan:
    """What every work unit of one dataset shares: its extract, the files' mtimes, the newest mtime pulled before,
    its schema, and the startpoint it is planned from with the files that startpoint pulls again."""

    urn: str
    by_folder: bool  # each subfolder a dataset: the units name their dataset
    extract: Extract
    current: dict[str, int]
    low: int
    schema: tuple[str | None, str]
    startpoint: Startpoint | None
    filtered: set[str]


def _retried_files(state: SourceState, previous: list[WorkUnitState], current: Mapping[str, int],
                   urn: str) -> list[list[str]]:
    """The files of each of the previous run's failed units that are still listed, one group per unit."""
    groups = []
    for old in workunits_to_retry(state, previous):
        listed = old.get_prop_as_list(FILES_TO_PULL_KEY)
        missing = [p for p in listed if p not in current]
        if missing:
            log.warning("retried_files_missing", dataset=urn, files=missing)
        if paths := [p for p in listed if p in current]:
            groups.append(paths)
    return groups
