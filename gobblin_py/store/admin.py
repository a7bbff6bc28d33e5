"""Steering a job's state: reset one dataset, and move a job's state to and from a plain Gobblin state store.

Nothing here touches published data. A reset stores, as the dataset's newest run, a state with no work units
(``gpy.reset=true``): the next run finds no watermark and starts the dataset per the source's bootstrap rules,
and the history keeps every earlier run. Export writes the job's ``.jst`` files — every run and each dataset's
``current`` — into another store directory in Gobblin's layout; import reads such a directory (written by Gobblin
or by an export), checks that every file decodes, and stores its dataset states as the job's.
"""

from __future__ import annotations

import posixpath
import time
from collections.abc import Callable
from dataclasses import dataclass

from gobblin_py.io import fs as fsutil
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.run_states import DatasetState
from gobblin_py.sdk.states import RunningState
from gobblin_py.store.folders import require_folder
from gobblin_py.store.mysql_store import MysqlDatasetStateStore
from gobblin_py.store.state_files import encode_dataset_state_file
from gobblin_py.store.store import (
    CURRENT,
    TABLE_SUFFIX,
    FsDatasetStateStore,
    read_state_file,
    sanitize_job_id,
    sanitize_urn,
)

RESET_KEY = "gpy.reset"


@dataclass
class ResetPlan:
    """What a reset of one dataset would replace."""

    job: str
    urn: str
    current: DatasetState | None

    def describe(self) -> str:
        if self.current is None:
            return f"{self.job} dataset {self.urn!r}: no state to reset"
        tasks = len(self.current.all_task_states())
        return (f"{self.job} dataset {self.urn!r}: its state (run {self.current.job_id}, {tasks} work unit state(s) "
                "with their watermarks) is replaced by an empty one; the next run starts the dataset afresh. "
                "Published data is not touched; the state's history is kept.")


def plan_reset(store: FsDatasetStateStore, job: str, urn: str) -> ResetPlan:
    return ResetPlan(job, urn, store.get_latest_dataset_state(job, urn))


def reset_dataset(store: FsDatasetStateStore, plan: ResetPlan) -> DatasetState:
    """Store an empty state as the dataset's newest run."""
    millis = int(time.time() * 1000)
    state = DatasetState(plan.job, f"job_{plan.job}_{millis}", dataset_urn=plan.urn, state=RunningState.COMMITTED,
                         start_time=millis, end_time=millis)
    state.properties[RESET_KEY] = "true"
    store.persist_dataset_state(state, plan.urn)
    return state


def export_job(store: FsDatasetStateStore, job: str, target: str, target_fs_uri: str | None = None) -> list[str]:
    """Copy every ``.jst`` file of ``job`` (and its URN name map) into ``<target>/<job>/``; the files written.

    Refuses to write over an existing file: export into an empty folder (or a new job folder).
    """
    fs, root = fsutil.open_fs(target, target_fs_uri)
    require_folder(fs, root, "the export target")
    require_folder(fs, posixpath.join(root, job), "the job's folder in the export target")
    files = _rows_as_files(store, job) if isinstance(store, MysqlDatasetStateStore) else _files_of(store, job)
    if not files:
        raise UsageError(f"{store.location(job, '')}: job {job!r} has no state to export")
    written = []
    for name in sorted(files):
        destination = posixpath.join(root, job, name)
        if fs.exists(destination):
            raise UsageError(f"{destination} already exists: export into an empty folder")
        fsutil.atomic_write(fs, destination, files[name]())
        written.append(destination)
    return written


def _files_of(store: FsDatasetStateStore, job: str) -> dict[str, Callable[[], bytes]]:
    """The job's files, each read (and checked to decode) as it is exported."""
    source_dir = store.job_dir(job)

    def reader(name: str) -> Callable[[], bytes]:
        def read() -> bytes:
            data = store.fs.cat_file(posixpath.join(source_dir, name))
            if name.endswith(TABLE_SUFFIX):  # never export a file that does not decode
                read_state_file(data, posixpath.join(source_dir, name), store.max_state_bytes)
            return data
        return read

    names = [n for n in fsutil.list_names(store.fs, source_dir) if n.endswith(TABLE_SUFFIX) or n == "datasetUrnNameMapV1"]
    return {name: reader(name) for name in names}


def _rows_as_files(store: MysqlDatasetStateStore, job: str) -> dict[str, Callable[[], bytes]]:
    """The job's MySQL rows as the files of Gobblin's file store (its names: the job id sanitised)."""
    files: dict[str, Callable[[], bytes]] = {}
    for table in store.tables(job):
        for key, state in store.read_table(job, table)[:1]:
            stem = sanitize_urn(key)
            suffix = CURRENT if table.endswith(f"{CURRENT}{TABLE_SUFFIX}") else sanitize_job_id(state.job_id)
            data = encode_dataset_state_file(key, state)
            files[f"{stem}-{suffix}{TABLE_SUFFIX}" if stem else f"{suffix}{TABLE_SUFFIX}"] = _constant(data)
    return files


def _constant(data: bytes) -> Callable[[], bytes]:
    return lambda: data


def import_job(store: FsDatasetStateStore, job: str, source: str, source_job: str | None = None,
               source_fs_uri: str | None = None, replace: bool = False) -> list[str]:
    """Store the latest state of every dataset found in ``<source>/<source_job or job>/`` as ``job``'s.

    Every file is decoded first (a corrupt one stops the import before anything is written). Refused when the
    job already has state in this store, unless ``replace``. Returns the URNs imported.
    """
    fs, root = fsutil.open_fs(source, source_fs_uri)
    source_store = FsDatasetStateStore(source, source_fs_uri, name_parser=store.name_parser,
                                       max_state_bytes=store.max_state_bytes)
    folder = posixpath.join(root, source_job or job)
    require_folder(fs, folder, "the import source")
    names = [n for n in fsutil.list_names(fs, folder) if n.endswith(TABLE_SUFFIX)]
    if not names:
        raise UsageError(f"{folder}: no Gobblin state (.jst) files of job {source_job or job!r}")
    for name in names:
        with fs.open(posixpath.join(folder, name), "rb") as stream:
            read_state_file(stream, posixpath.join(folder, name), store.max_state_bytes)
    if store.get_latest_dataset_states_by_urns(job) and not replace:
        raise UsageError(f"job {job!r} already has state in {store.url}: import with --replace to put the "
                         "imported states over it (its history is kept)")
    latest = source_store.get_latest_dataset_states_by_urns(source_job or job)
    for urn, state in sorted(latest.items()):
        state.job_name = job
        store.persist_dataset_state(state, urn)
    return sorted(latest)
