"""The dataset state store: each dataset's latest run state, in the files Apache Gobblin reads and writes.

Layout (Gobblin's ``FsDatasetStateStore``)::

    <state.store.dir>/<job.name>/<urn'>-<jobId'>.jst     one file per run and dataset
    <state.store.dir>/<job.name>/<urn'>-current.jst      a byte copy of the dataset's latest run (a hard link to it on local disk)
    (default URN "": <jobId'>.jst and current.jst)

where ``urn'`` is the URN with ``:`` replaced by ``.`` (mapped through the configured name parser) and
``jobId'`` is the job id with ``-`` and ``/`` replaced by ``_``. A URN that cannot be a file name — with a
``/``, a line break or NUL, ``.`` or ``..``, or too long — is named ``urn_<SHA-1 of the URN>`` instead (Gobblin
would write a ``/`` into sub-folders it never reads back, or a leading ``/`` outside the store). Each file is a BLOCK-compressed SequenceFile
with one record: key = the raw URN, value = the ``JobState$DatasetState``.

Unlike Gobblin, every write is atomic (temporary file, fsync, rename), so a crash or a full disk never
leaves a half-written ``current`` file, and retention never deletes a dataset's latest state.
"""

from __future__ import annotations

import posixpath
import re
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gobblin_py.io import fs as fsutil
from gobblin_py.io.contained_paths import contained_join
from gobblin_py.io.object_store import read_files
from gobblin_py.sdk.errors import StateStoreError
from gobblin_py.sdk.run_states import DatasetState
from gobblin_py.sdk.settings import Settings, SettingsError, setting
from gobblin_py.sdk.states import DEFAULT_DATASET_URN, WorkUnitState
from gobblin_py.store.folders import require_folder
from gobblin_py.store.state_files import (
    MAX_STATE_BYTES,
    MAX_STATE_BYTES_KEY,
    encode_dataset_state_file,
    read_state_file,
)

TABLE_SUFFIX = ".jst"
CURRENT = "current"
TABLE_NAME_RE = re.compile(r"^(?:(.+)-)?([^-]+)\.jst$")

STATE_STORE_DIR_KEY = "state.store.dir"
STATE_STORE_FS_URI_KEY = "state.store.fs.uri"
STATE_STORE_ENABLED_KEY = "state.store.enabled"
NAME_PARSER_KEY = "state.store.datasetUrnStateStoreNameParser"
RETENTION_KEY = "state.store.retention"
RETENTION_UNIT_KEY = "state.store.retention.timeunit"
STORE_TYPE_KEY = "state.store.type"
STORE_TYPES = ("fs", "mysql")

_TIME_UNITS = {
    "NANOSECONDS": 1e-9,
    "MICROSECONDS": 1e-6,
    "MILLISECONDS": 1e-3,
    "SECONDS": 1,
    "MINUTES": 60,
    "HOURS": 3600,
    "DAYS": 86400,
}


@dataclass(frozen=True)
class StateStoreSettings(Settings):
    """The keys of the dataset state store."""

    enabled: bool = setting(STATE_STORE_ENABLED_KEY, default=True, doc="false: the job keeps no state")
    root: str | None = setting(STATE_STORE_DIR_KEY, default_doc="required while enabled",
                               doc="root directory of the store (a path or URL)")
    fs_uri: str | None = setting(STATE_STORE_FS_URI_KEY, default_doc="file:///", doc="filesystem for a bare state.store.dir")
    name_parser: str | None = setting(NAME_PARSER_KEY, default_doc="Simple",
                                      doc="GuidDatasetUrnStateStoreNameParser names files by the SHA-1 of the URN")
    retention: float | None = setting(RETENTION_KEY, minimum=0, doc="delete run files older than this as new runs "
                                      "are stored (a dataset's latest state is kept)")
    retention_unit: str = setting(RETENTION_UNIT_KEY, default="DAYS", choices=tuple(_TIME_UNITS),
                                  doc="unit of state.store.retention")
    store_type: str | None = setting(STORE_TYPE_KEY, default_doc="fs", doc="fs: dataset states in files under "
                                     "state.store.dir; mysql: in the rows of Gobblin's MysqlDatasetStateStore "
                                     "table (state.store.db.*), gpy's own files still under state.store.dir")
    max_state_bytes: int = setting(MAX_STATE_BYTES_KEY, default=MAX_STATE_BYTES, minimum=1024,
                                   doc="the most bytes a state file may inflate to: a larger one is refused as "
                                       "corrupt (a decompression bomb); real states stay far below")

    @property
    def retention_seconds(self) -> float | None:
        return None if self.retention is None else self.retention * _TIME_UNITS[self.retention_unit]

    def check(self) -> list:
        from gobblin_py.sdk.config_errors import ConfigError

        problems = []
        if self.enabled and not self.root:
            problems.append(ConfigError("is not set", key=STATE_STORE_DIR_KEY,
                                        hint="name the directory that keeps job state, or set state.store.enabled=false"))
        if self.store_type and self.store_type.strip().lower() not in STORE_TYPES:
            problems.append(ConfigError(f"{self.store_type!r} is not a state store gpy keeps", key=STORE_TYPE_KEY,
                                        hint=f"use one of {', '.join(STORE_TYPES)}"))
        if self.name_parser and self.name_parser.rsplit(".", 1)[-1] not in _NAME_PARSERS:
            problems.append(ConfigError(f"{self.name_parser!r} is not a name parser", key=NAME_PARSER_KEY,
                                        hint=f"use one of {', '.join(sorted(_NAME_PARSERS))}"))
        return problems


_MAX_STEM_BYTES = 150  # leaves room for "-<job id>.jst" within a file name's 255 bytes
_NOT_IN_NAMES = ("/", "\0", "\n", "\r")


def _sha1(text: str) -> str:
    import hashlib  # loads OpenSSL: only for the URNs that need it

    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def sanitize_urn(urn: str) -> str:
    """The file-name stem of a dataset's state files: Gobblin's (``:`` → ``.``) where that is a safe file name."""
    name = urn.replace(":", ".")
    if any(c in name for c in _NOT_IN_NAMES) or name in (".", "..") or len(name.encode("utf-8")) > _MAX_STEM_BYTES:
        return "urn_" + _sha1(urn)
    return name


def sanitize_job_id(job_id: str) -> str:
    return job_id.replace("-", "_").replace("/", "_")


class SimpleUrnNameParser:
    """The file stem of a dataset is its (sanitised) URN."""

    def stem(self, sanitized_urn: str) -> str:
        return sanitized_urn

    def record(self, fs: Any, job_dir: str, sanitized_urn: str) -> None:
        """Nothing to remember: the stem is the URN."""


class GuidUrnNameParser:
    """The file stem is the SHA-1 of the URN; ``datasetUrnNameMapV1`` maps stems back to URNs."""

    MAP_FILE = "datasetUrnNameMapV1"
    _lock = threading.Lock()  # datasets commit in parallel threads; the map is read, changed and rewritten

    def stem(self, sanitized_urn: str) -> str:
        return _sha1(sanitized_urn) if sanitized_urn else ""

    def read_map(self, fs: Any, job_dir: str) -> dict[str, str]:
        path = posixpath.join(job_dir, self.MAP_FILE)
        if not fs.exists(path):
            return {}
        lines = fs.cat_file(path).decode("utf-8").split("\n")
        return {lines[i]: lines[i + 1] for i in range(0, len(lines) - 1, 2)}

    def record(self, fs: Any, job_dir: str, sanitized_urn: str) -> None:
        with self._lock:
            self._record(fs, job_dir, sanitized_urn)

    def _record(self, fs: Any, job_dir: str, sanitized_urn: str) -> None:
        mapping = self.read_map(fs, job_dir)
        stem = self.stem(sanitized_urn)
        if not stem or mapping.get(stem) == sanitized_urn:
            return
        mapping[stem] = sanitized_urn
        path = posixpath.join(job_dir, self.MAP_FILE)
        if fs.exists(path):  # Gobblin keeps the previous map under a timestamped name
            fs.copy(path, f"{path}_{int(time.time() * 1000)}")
        text = "".join(f"{s}\n{u}\n" for s, u in mapping.items())
        fsutil.atomic_write(fs, path, text.encode("utf-8"))


_NAME_PARSERS: dict[str, type[SimpleUrnNameParser | GuidUrnNameParser]] = {
    "SimpleDatasetUrnStateStoreNameParser": SimpleUrnNameParser,
    "GuidDatasetUrnStateStoreNameParser": GuidUrnNameParser,
}


def name_parser_for(name: str | None) -> SimpleUrnNameParser | GuidUrnNameParser:
    """The URN → file-stem parser named by ``state.store.datasetUrnStateStoreNameParser``."""
    if not name:
        return SimpleUrnNameParser()
    short = name.rsplit(".", 1)[-1]
    if short not in _NAME_PARSERS:
        raise StateStoreError(
            f"{NAME_PARSER_KEY}={name}: unknown name parser; use one of {', '.join(sorted(_NAME_PARSERS))}"
        )
    return _NAME_PARSERS[short]()


@dataclass(frozen=True)
class StoredRun:
    """One stored run of a dataset: the file it is in and its state."""

    job_name: str
    urn: str
    table: str
    path: str
    state: DatasetState


class FsDatasetStateStore:
    """Persists and looks up ``DatasetState``s on any fsspec filesystem, in Gobblin's layout and format."""

    def __init__(
        self,
        root: str,
        fs_uri: str | None = None,
        storage_options: Mapping[str, Any] | None = None,
        name_parser: SimpleUrnNameParser | GuidUrnNameParser | None = None,
        retention_seconds: float | None = None,
        max_state_bytes: int = MAX_STATE_BYTES,
    ) -> None:
        self.fs, self.root = fsutil.open_fs(root, fs_uri, dict(storage_options or {}))
        self.max_state_bytes = max_state_bytes
        self.url = root  # where the states are, for messages
        self.folder = root  # the folder of gpy's own files (commit log, startpoints, history)
        self.name_parser = name_parser or SimpleUrnNameParser()
        self.retention_seconds = retention_seconds

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> FsDatasetStateStore:
        """The store a job configures with ``state.store.dir``, ``state.store.fs.uri`` and friends."""
        try:
            settings = StateStoreSettings.load({**props, STATE_STORE_ENABLED_KEY: "true"})
        except SettingsError as exc:
            raise StateStoreError(str(exc)) from None
        assert settings.root is not None  # check() refuses an enabled store without a root
        store = cls(settings.root, settings.fs_uri, name_parser=name_parser_for(settings.name_parser),
                    retention_seconds=settings.retention_seconds, max_state_bytes=settings.max_state_bytes)
        require_folder(store.fs, store.root, STATE_STORE_DIR_KEY)
        return store

    # ------------------------------------------------------------ naming

    def job_dir(self, job_name: str) -> str:
        if not job_name:
            raise StateStoreError("a dataset state needs a job name (job.name)")
        return contained_join(self.root, job_name, what="job.name")

    def _stem(self, urn: str) -> str:
        return self.name_parser.stem(sanitize_urn(urn))

    def table_name(self, urn: str, job_id: str) -> str:
        stem = self._stem(urn)
        jid = sanitize_job_id(job_id)
        return f"{stem}-{jid}{TABLE_SUFFIX}" if stem else f"{jid}{TABLE_SUFFIX}"

    def current_table_name(self, urn: str) -> str:
        stem = self._stem(urn)
        return f"{stem}-{CURRENT}{TABLE_SUFFIX}" if stem else f"{CURRENT}{TABLE_SUFFIX}"

    # ------------------------------------------------------------ writing

    def persist_dataset_state(self, state: DatasetState, urn: str | None = None, sync_folder: bool = True,
                              serialized: bytes | None = None) -> str:
        """Write the run file of ``state``, then make it the dataset's ``current``; returns the run file path.
        ``serialized``: the state's Writable bytes when the caller has them already.

        The current file is replaced atomically: a failure at any point leaves the previous one intact. Without
        ``sync_folder`` the job's folder is not fsynced: the caller does it (:meth:`sync_job_dir`) for several
        datasets at once before it counts on their states.
        """
        urn = state.dataset_urn if urn is None else urn
        if not state.job_id:
            raise StateStoreError(f"dataset {urn!r}: a dataset state needs a job id")
        job_dir = self.job_dir(state.job_name)
        data = encode_dataset_state_file(urn, state, serialized)
        run_path = posixpath.join(job_dir, self.table_name(urn, state.job_id))
        try:
            # the run file first, then the current file: a crash between leaves the previous current intact
            fsutil.atomic_write_copies(self.fs, [run_path, posixpath.join(job_dir, self.current_table_name(urn))], data,
                                       sync_folder, grouped=True)
            self.name_parser.record(self.fs, job_dir, sanitize_urn(urn))
        except OSError as exc:
            raise StateStoreError(f"cannot write the state of dataset {urn!r} under {job_dir}: {exc}") from exc
        # only once the new current file is in place (in a commit batch, after its group sync)
        fsutil.after_durable(lambda: self._after_persist(state.job_name, job_dir, urn), job_dir)
        return run_path

    def _after_persist(self, job_name: str, job_dir: str, urn: str) -> None:
        try:
            self._drop_migrated_current(job_dir, urn)
        except OSError as exc:
            raise StateStoreError(f"cannot write the state of dataset {urn!r} under {job_dir}: {exc}") from exc
        if self.retention_seconds is not None:
            self.apply_retention(job_name, self.retention_seconds, urn=urn)

    def sync_job_dir(self, job_name: str) -> None:
        """Make the states written without ``sync_folder`` durable (one fsync of the job's folder, local disk)."""
        if fsutil.is_local(self.fs):
            fsutil.fsync_dir(self.job_dir(job_name))

    def _earlier_current_names(self, urn: str) -> list[str]:
        """Names the dataset's current file had under another name parser, or before a long URN was hashed."""
        stem = self._stem(urn)
        names = []
        for plain in dict.fromkeys((sanitize_urn(urn), urn.replace(":", "."))):
            if plain and plain != stem and not any(c in plain for c in _NOT_IN_NAMES) and plain not in (".", ".."):
                names.append(f"{plain}-{CURRENT}{TABLE_SUFFIX}")
        return names

    def _drop_migrated_current(self, job_dir: str, urn: str) -> None:
        for name in self._earlier_current_names(urn):
            old = posixpath.join(job_dir, name)
            if self.fs.exists(old):
                fsutil.remove(self.fs, old)

    # ------------------------------------------------------------ reading

    def read_table(self, job_name: str, table: str) -> list[tuple[str, DatasetState]]:
        """Every ``(key, DatasetState)`` record of one table file."""
        path = posixpath.join(self.job_dir(job_name), table)
        def read() -> list[tuple[str, DatasetState]]:
            with self.fs.open(path, "rb") as stream:
                return read_state_file(stream, self.display_path(path), self.max_state_bytes)

        try:
            return fsutil.read_whole_version(self.fs, path, read)  # a commit may replace ``current`` meanwhile
        except FileNotFoundError:
            raise StateStoreError(f"{self.display_path(path)}: no such state file") from None

    def display_path(self, path: str) -> str:
        return path if fsutil.is_local(self.fs) else self.fs.unstrip_protocol(path)

    def location(self, job_name: str, table: str) -> str:
        """Where one table of the job is, for messages."""
        return self.display_path(posixpath.join(self.job_dir(job_name), table))

    def job_names(self) -> list[str]:
        """Jobs that have a folder in this store."""
        return fsutil.list_dirs(self.fs, self.root)

    def tables(self, job_name: str) -> list[str]:
        return [n for n in fsutil.list_names(self.fs, self.job_dir(job_name)) if n.endswith(TABLE_SUFFIX)]

    def get_latest_dataset_state(self, job_name: str, urn: str) -> DatasetState | None:
        """The dataset's latest state: the record keyed ``urn`` in its current file; None if there is none."""
        for table in (self.current_table_name(urn), *self._earlier_current_names(urn)):
            if not self.fs.exists(posixpath.join(self.job_dir(job_name), table)):
                continue
            for key, state in self.read_table(job_name, table):
                if key == urn:
                    return state
        return None

    def current_tables(self, job_name: str) -> list[str]:
        return [n for n in self.tables(job_name) if n.endswith(f"{CURRENT}{TABLE_SUFFIX}")]

    def get_latest_dataset_states_by_urns(self, job_name: str) -> dict[str, DatasetState]:
        """Every dataset's latest state, by the ``dataset.urn`` each holds (Gobblin's start-of-run lookup).

        A legacy job-level ``current.jst`` (URN "") is ignored once per-dataset files exist.
        """
        latest: dict[str, DatasetState] = {}
        for records in self._read_tables(job_name, self.current_tables(job_name)):
            if records:
                state = records[0][1]
                earlier = latest.get(state.dataset_urn)
                # two current files of one dataset (a crash while renaming it): the later run's state counts
                if earlier is None or (earlier.start_time, earlier.job_id) < (state.start_time, state.job_id):
                    latest[state.dataset_urn] = state
        if len(latest) > 1:
            latest.pop(DEFAULT_DATASET_URN, None)
        return latest

    def _read_tables(self, job_name: str, tables: list[str]) -> Iterator[list[tuple[str, DatasetState]]]:
        """The records of each table, in order. On S3 each file is one request and the requests of many files are
        in flight together: thousands of datasets are read in seconds, not one round trip after another."""
        if not fsutil.is_object_store(self.fs):
            yield from (self.read_table(job_name, table) for table in tables)
            return
        folder = self.job_dir(job_name)
        for path, data in read_files(self.fs, [posixpath.join(folder, table) for table in tables]):
            if isinstance(data, FileNotFoundError):
                raise StateStoreError(f"{self.display_path(path)}: no such state file")
            if isinstance(data, Exception):
                raise data
            yield read_state_file(data, self.display_path(path), self.max_state_bytes)

    def get_previous_workunit_states_by_urns(self, job_name: str) -> dict[str, list[WorkUnitState]]:
        """The work-unit states the next run's Source sees, per dataset, from each dataset's latest run."""
        return {
            urn: state.previous_workunit_states_from_tasks()
            for urn, state in self.get_latest_dataset_states_by_urns(job_name).items()
        }

    def _runs_of(self, job_name: str, urn: str) -> Iterator[tuple[str, str]]:
        stem = self._stem(urn)
        for table in self.tables(job_name):
            match = TABLE_NAME_RE.match(table)
            if match and (match.group(1) or "") == stem and match.group(2) != CURRENT:
                yield table, posixpath.join(self.job_dir(job_name), table)

    def history(self, job_name: str, urn: str) -> list[StoredRun]:
        """Every stored run of a dataset, oldest first (by the run's start time, then job id)."""
        runs = []
        for table, path in self._runs_of(job_name, urn):
            for key, state in self.read_table(job_name, table):
                if key == urn or state.dataset_urn == urn:
                    runs.append(StoredRun(job_name, urn, table, self.display_path(path), state))
                    break
        return sorted(runs, key=lambda r: (r.state.start_time, r.state.job_id))

    def apply_retention(self, job_name: str, max_age_seconds: float, urn: str | None = None,
                        now: float | None = None) -> list[str]:
        """Delete run files older than ``max_age_seconds`` (of one dataset, or all); returns what was deleted.

        A dataset's ``current`` file and the run file it copies are never deleted, however old: losing them
        would lose the dataset's watermarks.
        """
        now = time.time() if now is None else now
        deleted = []
        for dataset_urn, keep in self._retained_datasets(job_name, urn):
            for table, path in self._runs_of(job_name, dataset_urn):
                if table == keep:
                    continue
                modified = self.fs.modified(path).timestamp()
                if now - modified > max_age_seconds:
                    fsutil.remove(self.fs, path)
                    deleted.append(self.display_path(path))
        return deleted

    def _retained_datasets(self, job_name: str, urn: str | None) -> Iterator[tuple[str, str | None]]:
        """Each dataset retention looks at (``urn``, or every one of the job) and the run its ``current`` copies,
        which is kept (None when it has none)."""
        urns = [urn] if urn is not None else list(self.get_latest_dataset_states_by_urns(job_name))
        for dataset_urn in urns:
            latest = self.get_latest_dataset_state(job_name, dataset_urn)
            yield dataset_urn, self.table_name(dataset_urn, latest.job_id) if latest is not None else None
