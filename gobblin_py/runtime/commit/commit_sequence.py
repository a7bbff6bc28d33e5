"""Exactly-once commits: publishing a dataset's data and checking in its watermarks as one atomic step.

Before anything is published, the driver writes the dataset's whole commit — every file rename and the new
dataset state — as one JSON file (a write-ahead log). It then runs each step that is not already done and
deletes the file. A run that dies anywhere in between leaves the file behind; the next run finishes it
before it plans new work, so data is published once and its watermark is saved with it, whatever the
instant of the crash. Every step is idempotent: ``is_completed()`` says whether it has taken effect.

Store layout: ``<gobblin.runtime.commit.sequence.store.dir>/<job name>/<sanitised urn>.json`` (default
directory ``<state.store.dir>/_commit_sequences``), each written atomically. A run committing many datasets
logs them in batches instead, one file (``+batch-<job id>-<n>.json``) and one fsync for up to
``gobblin.runtime.commit.sequence.batch.size`` datasets; once every sequence of a batch has run the file is
deleted, and one that could not finish is kept alone in it (rewritten atomically) for the next run.
"""

from __future__ import annotations

import contextvars
import importlib
import json
import posixpath
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from gobblin_py.io import fs as fsutil
from gobblin_py.io import fs_settings
from gobblin_py.io.contained_paths import contained_join
from gobblin_py.io.crash_points import boundary, phase
from gobblin_py.io.rename_step import FsRenameStep
from gobblin_py.runtime.commit.sequence_settings import CommitSequenceSettings
from gobblin_py.sdk.commit import (
    CommitStep,
)
from gobblin_py.sdk.errors import CorruptFileError, GobblinPyError
from gobblin_py.sdk.run_states import DatasetState
from gobblin_py.store import FsDatasetStateStore
from gobblin_py.store.writable import DATASET_STATE_CLASS, deserialize, serialize

BATCH_PREFIX = "+batch-"  # '+' is percent-encoded in a dataset's file name, so a batch's never collides with one
FORMAT_VERSION = 1


@dataclass
class DatasetStateStep(CommitStep):
    """Persist the dataset's new state (its watermarks) as the dataset's latest; completed once it is."""

    store: FsDatasetStateStore
    urn: str
    state: DatasetState
    kind: str = "dataset_state"
    sync_folder: bool = field(default=True, compare=False)  # false in a batch, whose end fsyncs the folder once
    _bytes: bytes | None = field(default=None, init=False, repr=False, compare=False)

    def is_completed(self) -> bool:
        latest = self.store.get_latest_dataset_state(self.state.job_name, self.urn)
        return latest is not None and latest.job_id == self.state.job_id

    def execute(self, fresh: bool = False) -> None:
        self.store.persist_dataset_state(self.state, self.urn, sync_folder=self.sync_folder,
                                         serialized=self._serialized())

    def _serialized(self) -> bytes:
        # encoded once: the state the log holds is byte for byte the one the store gets
        if self._bytes is None:
            self._bytes = serialize(self.state)
        return self._bytes

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "urn": self.urn, "state": self._serialized().hex()}

    def describe(self) -> str:
        return f"save the state of dataset {self.urn!r} ({self.state.job_id})"


@dataclass
class CommitSequence:
    """The ordered steps that commit one dataset of one run."""

    job_name: str
    urn: str
    job_id: str
    steps: list[CommitStep] = field(default_factory=list)
    batch: str | None = field(default=None, compare=False)  # the batch file that logged it, if any

    def to_json(self) -> dict[str, Any]:
        return {"version": FORMAT_VERSION, "job_name": self.job_name, "urn": self.urn, "job_id": self.job_id,
                "steps": [step.to_json() for step in self.steps]}

    @classmethod
    def from_json(cls, data: dict[str, Any], store: FsDatasetStateStore, where: str,
                  props: dict[str, str] | None = None) -> CommitSequence:
        try:
            steps: list[CommitStep] = []
            for item in _typed(data, "steps", list):
                if not isinstance(item, dict):
                    raise TypeError(f"step {item!r} is not an object")
                if "class" in item:  # a plugin's step (e.g. a Kafka transaction), rebuilt by its own class
                    steps.append(plugin_step(item, props or {}))
                elif item["kind"] == "fs_rename":
                    steps.append(FsRenameStep(_typed(item, "src", str), _typed(item, "dst", str),
                                              _typed(item, "src_fs_uri", str, None), _typed(item, "dst_fs_uri", str, None)))
                elif item["kind"] == "dataset_state":
                    state = deserialize(DATASET_STATE_CLASS, bytes.fromhex(_typed(item, "state", str)), where)
                    steps.append(DatasetStateStep(store, _typed(item, "urn", str), state))  # type: ignore[arg-type]
                else:
                    raise ValueError(f"unknown step kind {item['kind']!r}")
            return cls(_typed(data, "job_name", str), _typed(data, "urn", str), _typed(data, "job_id", str), steps)
        except (KeyError, TypeError, ValueError) as exc:
            raise CorruptFileError(where, f"not a readable commit sequence ({exc}); it records an unfinished "
                                          "commit: repair or remove it, knowing its data may be half published") from None

    def execute(self, on_step: Callable[[str], None] = boundary, fresh: bool = False) -> None:
        """Run every step that has not taken effect yet, in order.

        ``fresh``: the sequence was just logged by this process, so no step can have run; verifying is only
        needed when finishing a sequence an earlier run left behind (steps are idempotent either way).
        """
        # moves onto an object store that follow one another write one object each (a plan never gives two files
        # one name), so they may run at once: together, and all done before the next step
        uploads = [_is_upload(step) for step in self.steps]
        index = 0
        while index < len(self.steps):
            end = index + 1
            while uploads[index] and end < len(self.steps) and uploads[end]:
                end += 1
            if end - index > 1:
                _run_together(self.steps[index:end], fresh)
            else:
                _run_step(self.steps[index], fresh, uploads[index])
            for step in self.steps[index:end]:
                on_step(f"{self.urn}:step{index}:{step.kind}")
                index += 1


def _run_step(step: CommitStep, fresh: bool, upload: bool) -> None:
    """Run ``step`` unless it took effect already; an ``upload`` (a move onto an object store) first takes one of
    the process's upload slots. A move that fails with an error not naming what failed (a store's own: a missing
    bucket, a refused request) fails as a GobblinPyError naming the move, alone or in a group."""
    with phase(f"commit.{step.kind}"), (fs_settings.upload_slots() if upload else nullcontext()):
        try:
            if fresh or not step.is_completed():
                step.execute(fresh=fresh)
        except GobblinPyError:
            raise
        except Exception as exc:
            if not isinstance(step, FsRenameStep):
                raise
            raise GobblinPyError(f"cannot {step.describe()}: {type(exc).__name__}: {exc}") from exc


def _is_upload(step: CommitStep) -> bool:
    return isinstance(step, FsRenameStep) and fsutil.is_object_store(fsutil.open_fs(step.dst, step.dst_fs_uri)[0])


def _run_together(steps: list[CommitStep], fresh: bool) -> None:
    """Run ``steps`` at once, up to ``fs.s3a.threads.max`` at a time, each in a copy of this thread's context;
    return once all have ended. The first that failed (in the steps' order) fails the whole, with its error (which
    names its move: :func:`_run_step`)."""
    workers = min(len(steps), fs_settings.request_threads())
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="gpy-publish") as pool:
        futures = [pool.submit(contextvars.copy_context().run, _run_step, step, fresh, True) for step in steps]
    for future in futures:
        exc = future.exception()
        if exc is not None:
            raise exc


_REQUIRED = object()


def _typed(item: Any, key: str, kind: type, default: Any = _REQUIRED) -> Any:
    """``item[key]``, which must be a ``kind`` (or missing / null when there is a default)."""
    if not isinstance(item, dict):
        raise TypeError(f"{item!r} is not an object")
    value = item.get(key) if default is not _REQUIRED else item[key]
    if value is None and default is not _REQUIRED:
        return default
    if not isinstance(value, kind):
        shown = f"a {type(value).__name__}" if isinstance(value, (dict, list)) else json.dumps(value)[:60]
        raise TypeError(f"{key} is {shown}, not {'text' if kind is str else 'a ' + kind.__name__}")
    return value


def plugin_step(item: dict[str, Any], props: dict[str, str]) -> CommitStep:
    """A step whose JSON names its class (``module:Class``, a CommitStep with ``from_json(item, props)``): plugins
    log their own kinds of step; the job's properties give them what a log must not hold (credentials)."""
    module_name, _, name = str(item["class"]).partition(":")
    try:
        step_cls = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"step class {item['class']} cannot be loaded ({exc})") from None
    if not (isinstance(step_cls, type) and issubclass(step_cls, CommitStep)):
        raise ValueError(f"{item['class']} is not a CommitStep")
    return step_cls.from_json(item, props)  # type: ignore[attr-defined]


class CommitSequenceStore:
    """Commit sequences on any fsspec filesystem, one JSON file per (job, dataset), written atomically."""

    def __init__(self, root: str, fs_uri: str | None, state_store: FsDatasetStateStore,
                 props: dict[str, str] | None = None) -> None:
        self.fs, self.root = fsutil.open_fs(root, fs_uri)
        self.state_store = state_store
        self.props = props or {}
        self._batched: set[tuple[str, str]] = set()  # (job, urn) of sequences pending() found in batch files
        # per job folder, the names of its log files as pending() listed them and this store's own writes changed
        # them: under the job's lock no one else writes there, so the listing answers without a request
        self._listed: dict[str, set[str]] = {}

    @classmethod
    def for_job(cls, props: dict[str, str], state_store: FsDatasetStateStore) -> CommitSequenceStore:
        settings = CommitSequenceSettings.load(props)
        root = settings.store_dir or posixpath.join(state_store.folder.rstrip("/"), "_commit_sequences")
        return cls(root, settings.store_fs_uri or props.get("state.store.fs.uri"), state_store, dict(props))

    @staticmethod
    def file_name(urn: str) -> str:
        # an empty URN has a name of its own; others are percent-encoded UTF-8, which is unambiguous
        if not urn:
            return "default_dataset_urn.json"
        name = quote(urn, safe="._-")
        if name[0] in "._":  # a listing of pending commits passes over temporary files and sidecars named so
            name = f"%{ord(name[0]):02X}{name[1:]}"
        return name + ".json"

    def path(self, job_name: str, urn: str) -> str:
        return contained_join(self.root, job_name, self.file_name(urn), what="job.name")

    def exists(self, job_name: str, urn: str) -> bool:
        """Whether a commit of the dataset is logged: its own file, or a batch :meth:`pending` listed."""
        return (job_name, urn) in self._batched or self._file_exists(self.path(job_name, urn))

    def _file_exists(self, path: str) -> bool:
        listed = self._listed.get(posixpath.dirname(path))
        if listed is None:  # the job's folder was not listed by this store
            return self.fs.exists(path)
        return posixpath.basename(path) in listed

    def _written(self, path: str, there: bool) -> None:
        listed = self._listed.get(posixpath.dirname(path))
        if listed is not None:
            (listed.add if there else listed.discard)(posixpath.basename(path))

    def put_batch(self, job_name: str, job_id: str, number: int, sequences: list[CommitSequence]) -> str:
        """Log the sequences of several datasets as one file (one write, one fsync); returns its path."""
        path = contained_join(self.root, job_name, f"{BATCH_PREFIX}{quote(job_id, safe='._-')}-{number}.json",
                              what="job.name/job.id")
        if self._file_exists(path):
            raise GobblinPyError(f"{path}: a batch of unfinished commits is already logged there")
        for sequence in sequences:
            sequence.batch = path
        data = {"version": FORMAT_VERSION, "batch": [s.to_json() for s in sequences]}
        fsutil.atomic_write(self.fs, path, json.dumps(data, separators=(",", ":")).encode("utf-8"))
        self._written(path, True)
        return path

    def finish_batch(self, path: str, sequences: list[CommitSequence], left: list[CommitSequence]) -> None:
        """A batch whose ``sequences`` have all run, but for ``left`` (not finished): delete its file, or keep
        only ``left`` in it."""
        unfinished = {id(s) for s in left}
        self._batched -= {(s.job_name, s.urn) for s in sequences if id(s) not in unfinished}
        if not left:
            self._remove(path)
            return
        data = {"version": FORMAT_VERSION, "batch": [s.to_json() for s in left]}
        fsutil.atomic_write(self.fs, path, json.dumps(data, separators=(",", ":")).encode("utf-8"))

    def put(self, sequence: CommitSequence) -> None:
        """Log a sequence; never over another run's unfinished one."""
        path = self.path(sequence.job_name, sequence.urn)
        if self._file_exists(path):
            raise GobblinPyError(f"{path}: an unfinished commit of dataset {sequence.urn!r} is already logged")
        data = json.dumps(sequence.to_json(), separators=(",", ":")).encode("utf-8")
        fsutil.atomic_write(self.fs, path, data)
        self._written(path, True)

    def delete(self, sequence: CommitSequence) -> None:
        self._remove(self.path(sequence.job_name, sequence.urn))

    def _remove(self, path: str) -> None:
        """Delete a log file; one already gone is fine (no lookup first: on an object store that is a request)."""
        try:
            fsutil.remove(self.fs, path)
        except FileNotFoundError:
            pass
        self._written(path, False)

    def pending(self, job_name: str) -> Iterator[CommitSequence]:
        """Every stored sequence of a job (left by a run that did not finish its commit)."""
        directory = contained_join(self.root, job_name, what="job.name")  # as path() makes it
        try:
            entries = self.fs.ls(directory, detail=True)
        except FileNotFoundError:
            entries = []
        listed = {posixpath.basename(e["name"].rstrip("/")) for e in entries if e.get("type") != "directory"}
        self._listed[directory] = listed
        for name in sorted(n for n in listed if not n.startswith((".", "_"))):  # not temporary files, sidecars
            if not name.endswith(".json"):
                continue
            path = posixpath.join(directory, name)
            where = path if fsutil.is_local(self.fs) else self.fs.unstrip_protocol(path)
            batched = name.startswith(BATCH_PREFIX)
            sequences = read_sequences(self.fs.cat_file(path), batched, self.state_store, where, self.props)
            for sequence in sequences if batched else ():
                sequence.batch = path
                self._batched.add((sequence.job_name, sequence.urn))
            yield from sequences


def read_sequences(raw: bytes, batch: bool, store: FsDatasetStateStore, where: str,
                   props: dict[str, str]) -> list[CommitSequence]:
    """The sequences one log file holds (``batch``: a batch file's; otherwise a dataset's own, one sequence);
    CorruptFileError naming ``where`` when it cannot be read."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        reason = "nested too deeply" if isinstance(exc, RecursionError) else exc
        raise CorruptFileError(where, f"corrupt commit sequence ({reason}); it records an unfinished commit: "
                                      "repair or remove it, knowing its data may be half published") from None
    if not batch:
        return [CommitSequence.from_json(data, store, where, props)]
    if not isinstance(data, dict) or not isinstance(data.get("batch"), list):
        raise CorruptFileError(where, "not a readable batch of commit sequences; it records unfinished "
                                      "commits: repair or remove it, knowing their data may be half published")
    return [CommitSequence.from_json(item, store, where, props) for item in data["batch"]]
