"""Which job published into a final folder, so that a run that lost its state does not publish everything again.

A job's state decides what its next run pulls. A run that finds no state of its job at all pulls everything
again and publishes it beside what is there: right on a first run, wrong when the state is gone — deleted,
moved, or another one because ``state.store.dir`` is relative and the run started from another working folder.
So each run that published leaves ``_gpy_published.<job.name>.marker`` (JSON) in each final folder
(``data.publisher.final.dir``, per branch; for publishers whose names are new each run,
``DataPublisher.marks_final_folders``), naming the job, its job file and its state store, and a run without
any state whose final folder holds such a marker of its job (by name, or by job file) is refused before any work
(exit 2), naming the state store and the final folder. A first run into an empty folder, or one that other jobs
publish to, is not. ``gpy run --republish`` runs anyway, and its marker then names the new state store.

The marker is written after the datasets committed (a run killed in between leaves none: its next run still has
the state). Names starting with ``_`` are hidden from Hadoop, Spark, Hive and Arrow readers, as gpy's other
bookkeeping files are.
"""

from __future__ import annotations

import json
import os
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gobblin_py.io import fs as fsutil
from gobblin_py.io.branch_paths import BranchScope
from gobblin_py.jobconf.keys import JOB_CONFIG_FILE_PATH_KEY
from gobblin_py.runtime.commit.datasets import DEFAULT_PUBLISHER
from gobblin_py.runtime.execute.job_settings import CommitSettings
from gobblin_py.sdk.branches import branch_count
from gobblin_py.sdk.contracts import DataPublisher
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.plugins import resolve_class
from gobblin_py.sdk.states import State

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem

    from gobblin_py.runtime.commit.job_run import JobRun

log = get_logger(__name__)

MARKER_PREFIX = "_gpy_published."
MARKER_SUFFIX = ".marker"
REPUBLISH_HINT = "gpy run --republish"


class StateLostError(UsageError):
    """A run with no state of its job whose final folder holds data the job published (exit code 2)."""


@dataclass(frozen=True)
class Mark:
    """What a marker says: the job that published into the folder, its job file and its state store."""

    job: str
    job_file: str | None
    state_store: str

    def to_json(self) -> bytes:
        return json.dumps({"job": self.job, "job_file": self.job_file, "state_store": self.state_store},
                          indent=1).encode()

    @classmethod
    def parse(cls, data: bytes) -> Mark | None:
        try:
            found = json.loads(data)
            return cls(str(found["job"]), found.get("job_file"), str(found["state_store"]))
        except (ValueError, KeyError, TypeError):
            return None


@dataclass(frozen=True)
class FinalFolder:
    """One branch's final folder: its key, filesystem, path, and the path as a person reads it."""

    key: str
    fs: AbstractFileSystem
    path: str
    shown: str


def final_folders(props: dict[str, str], include_replaced: bool = False) -> list[FinalFolder]:
    """Each branch's ``data.publisher.final.dir`` (once each), where one is set and, unless ``include_replaced``,
    not replaced by each run (``data.publisher.replace.final.dir``: a run without state then publishes everything
    in place of itself)."""
    branches = branch_count(props)
    found: list[FinalFolder] = []
    state = State(props)
    for branch in range(branches):
        scope = BranchScope(state, branches, branch)
        if not include_replaced and (scope.prop("data.publisher.replace.final.dir") or "").strip().lower() == "true":
            continue
        try:
            root = scope.final_root()
        except UsageError:  # no final folder: a publisher that writes elsewhere (a database, a topic)
            continue
        fs, path = fsutil.open_fs(root, scope.prop("data.publisher.fs.uri") or scope.prop("writer.fs.uri"))
        shown = path if fsutil.is_local(fs) else fs.unstrip_protocol(path)
        if all(f.shown != shown for f in found):
            found.append(FinalFolder(scope.key("data.publisher.final.dir"), fs, path, shown))
    return found


def marker_path(folder: FinalFolder, job_name: str) -> str:
    """Where the marker of job ``job_name`` lies in ``folder``."""
    return posixpath.join(folder.path, f"{MARKER_PREFIX}{job_name}{MARKER_SUFFIX}")


def marks_final_folders(props: Mapping[str, str]) -> bool:
    """Whether the job's publisher names what it publishes anew each run (``DataPublisher.marks_final_folders``):
    only then would a run without state publish everything again beside itself."""
    settings = CommitSettings.load(props)
    name = settings.job_publisher or settings.publisher or DEFAULT_PUBLISHER
    key = "data.publisher.job.type" if settings.job_publisher else "data.publisher.type"
    publisher = resolve_class(name, key)  # not a DataPublisher: the commit refuses it, naming the key
    return issubclass(publisher, DataPublisher) and publisher.marks_final_folders


def job_file_of(props: Mapping[str, str]) -> str | None:
    """The job file as its markers name it: its URL (a job fetched from one), or its absolute path."""
    path = getattr(props, "path", None) or props.get(JOB_CONFIG_FILE_PATH_KEY)
    return None if not path else path if "://" in path else os.path.abspath(path)


def this_mark(run: JobRun, job_file: str | None) -> Mark:
    """What this run's marker says (its state store as an absolute path or a URL)."""
    assert run.store is not None
    store = run.store.display_path(run.store.root)
    return Mark(run.job_name, job_file, os.path.abspath(store) if fsutil.is_local(run.store.fs) else store)


def read_marks(folder: FinalFolder) -> list[tuple[str, Mark]]:
    """The markers in ``folder``: (path, what it says); none when the folder is not there."""
    try:
        if fsutil.is_object_store(folder.fs):  # only the markers, by their prefix: one listing, a missing folder too
            entries = folder.fs.find(folder.path, maxdepth=1, prefix=MARKER_PREFIX)
        else:
            entries = folder.fs.ls(folder.path, detail=False)
    except (FileNotFoundError, NotADirectoryError):
        return []
    found = []
    for entry in entries:
        name = posixpath.basename(str(entry).rstrip("/"))
        if name.startswith(MARKER_PREFIX) and name.endswith(MARKER_SUFFIX):
            path = posixpath.join(folder.path, name)
            try:
                mark = Mark.parse(folder.fs.cat_file(path))
            except (FileNotFoundError, IsADirectoryError):
                continue
            if mark is not None:
                found.append((path, mark))
    return found


def check_state_not_lost(run: JobRun, job_file: str | None, republish: bool) -> None:
    """Before a run plans anything: refuse (:class:`StateLostError`) a run that has no state of its job while a
    final folder holds a marker of the job. Only a run with a state store and no state at all is checked."""
    if run.store is None or run.previous:
        return
    mine = this_mark(run, job_file)
    for folder in final_folders(run.props):
        try:
            marks = read_marks(folder)
        except OSError as exc:
            log.warning("final_folder_not_checked", folder=folder.shown, error=str(exc),
                        reason="cannot tell whether this job published there before")
            continue
        for path, mark in marks:
            if mark.job != mine.job and (mark.job_file is None or mark.job_file != mine.job_file):
                continue
            if republish:
                log.warning("republishing", folder=folder.shown, marker=path, state_store=mine.state_store,
                            previous_state_store=mark.state_store)
                continue
            raise StateLostError(_refusal(run, folder, path, mark, mine))


def _refusal(run: JobRun, folder: FinalFolder, path: str, mark: Mark, mine: Mark) -> str:
    configured = run.props.get("state.store.dir", "")
    fs_uri = run.props.get("state.store.fs.uri") or "file:"
    relative = "://" not in configured and not os.path.isabs(configured) and fs_uri.startswith("file:")
    where = (f"state.store.dir={configured!r} is relative: it resolves from the working folder {os.getcwd()}"
             if relative else f"state.store.dir={configured!r}")
    if mark.state_store == mine.state_store and mark.job == mine.job:
        why = "that state store held this job's state when it last published; the state is gone"
    else:
        why = f"this job published there with its state in {mark.state_store}"
        if mark.job != mine.job:
            why += f" (as job {mark.job!r}, from the same job file {mark.job_file})"
    return (f"the state store {mine.state_store} holds no state of job {mine.job!r} ({where}), but its final folder "
            f"{folder.shown} ({folder.key}) holds data the job published ({path}: {why}): this run would pull and "
            f"publish everything again. Run it where its state is (from the working folder it ran in, or with "
            f"state.store.dir set to that store), or restore the state (gpy state import); to publish everything "
            f"again on purpose, run once with {REPUBLISH_HINT}")


def mark_published(run: JobRun, job_file: str | None, published: list[str]) -> None:
    """After a run published (``published``: the folders its datasets published to): each final folder holding
    one of them names this job and its state store, written whole each time (one request on an object store,
    where reading it first would cost two). A marker that cannot be written is a warning: the data is committed
    whatever happens here."""
    if run.store is None:
        return
    mine = this_mark(run, job_file)
    data = mine.to_json()
    for folder in final_folders(run.props):
        path = marker_path(folder, run.job_name)
        root = folder.shown.rstrip("/")
        if not any(place == root or place.startswith(root + "/") for place in published):
            continue
        try:
            if fsutil.is_local(folder.fs):
                _remove_temporary_copies(folder.path, posixpath.basename(path))
            fsutil.atomic_write(folder.fs, path, data)
        except OSError as exc:
            log.warning("published_marker_not_written", marker=path, error=str(exc),
                        consequence="a run that loses this job's state will not be stopped from publishing again")


def _remove_temporary_copies(folder: str, name: str) -> None:
    """The temporary copies of marker ``name`` a run killed while writing it left (the job's lock is held: no
    other run writes this job's marker)."""
    prefix = f"{fsutil.TEMP_PREFIX}{name}."
    for entry in os.scandir(folder):
        if entry.name.startswith(prefix):
            os.unlink(entry.path)
