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

import importlib
import json
import os
import posixpath
from urllib.parse import quote
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from gobblin_py.contained_paths import contained_join
from gobblin_py import fs as fsutil
from gobblin_py import fs_conditional as conditional
from gobblin_py.config.settings import Settings, setting
from gobblin_py.runtime.crash_points import boundary, phase
from gobblin_py.errors import CorruptFileError, GobblinPyError
from gobblin_py.state import DatasetState, FsDatasetStateStore
from gobblin_py.state.writable import DATASET_STATE_CLASS, deserialize, serialize

SEMANTICS_KEY = "gobblin.runtime.delivery.semantics"
STORE_DIR_KEY = "gobblin.runtime.commit.sequence.store.dir"
STORE_FS_URI_KEY = "gobblin.runtime.commit.sequence.store.fs.uri"
MAX_RETRIES_KEY = "gobblin.runtime.commit.sequence.max.retries"
BATCH_SIZE_KEY = "gobblin.runtime.commit.sequence.batch.size"
BATCH_PREFIX = "+batch-"  # '+' is percent-encoded in a dataset's file name, so a batch's never collides with one
EXACTLY_ONCE, AT_LEAST_ONCE = "EXACTLY_ONCE", "AT_LEAST_ONCE"
FORMAT_VERSION = 1


@dataclass(frozen=True)
class DeliverySettings(Settings):
    """The keys of exactly-once commits."""

    semantics: str = setting(SEMANTICS_KEY, default=EXACTLY_ONCE, choices=(EXACTLY_ONCE, AT_LEAST_ONCE),
                             doc="EXACTLY_ONCE: a dataset's data and state commit as one logged sequence")
    store_dir: str | None = setting(STORE_DIR_KEY, default_doc="<state.store.dir>/_commit_sequences",
                                    doc="where unfinished commits are logged")
    store_fs_uri: str | None = setting(STORE_FS_URI_KEY, default_doc="state.store.fs.uri",
                                       doc="filesystem of a bare commit sequence store dir")
    max_retries: int = setting(MAX_RETRIES_KEY, default=3, minimum=1, maximum=100,
                               doc="tries to finish an earlier run's commit before its dataset is skipped")
    batch_size: int = setting(BATCH_SIZE_KEY, default=100, minimum=1, maximum=10_000,
                              doc="most datasets one commit log holds when a run commits many (1: a log each)")


def delivery_semantics(props) -> str:
    """``EXACTLY_ONCE`` or ``AT_LEAST_ONCE``."""
    return DeliverySettings.load(props).semantics


# ------------------------------------------------------------------ steps


class CommitStep(ABC):
    """One idempotent part of a commit."""

    kind: str = ""

    @abstractmethod
    def is_completed(self) -> bool:
        """Whether the step has already taken effect."""

    @abstractmethod
    def execute(self, fresh: bool = False) -> None:
        """Make the step take effect; safe to repeat. ``fresh``: the commit was just logged by this run."""

    @abstractmethod
    def to_json(self) -> dict[str, Any]:
        """The step as JSON (with ``kind``)."""

    def describe(self) -> str:
        return self.kind


def step_class_path(step: CommitStep) -> str:
    """``module:Class`` of a step, for its JSON's ``class``: how a later run rebuilds a plugin's step."""
    cls = type(step)
    return f"{cls.__module__}:{cls.__qualname__}"


class PublishConflictError(GobblinPyError):
    """A file to publish already exists at its destination (gpy never overwrites published data)."""


@dataclass
class FsRenameStep(CommitStep):
    """Move one file from task output to its final place (rename, or copy and delete across filesystems).

    Never replaces a file: on local disk the move is a hard link then an unlink (``link`` fails if the
    destination exists). On an object store, where an object appears whole or not at all, the destination is
    written in one step — a server-side copy within the store, an upload (conditional, ``If-None-Match``, where
    the store has it) from elsewhere — then the source deleted. Elsewhere a copy to a temporary name is checked
    before the final move. Completed once the destination exists and the source is gone. When finishing an
    earlier run's commit, a destination that exists beside its source is the interrupted tail of a
    copy-and-delete move only if the two match in size; then the source is removed. In a fresh commit an
    existing destination is always a conflict.
    """

    src: str
    dst: str
    src_fs_uri: str | None = None
    dst_fs_uri: str | None = None
    kind: str = "fs_rename"

    def _fss(self):
        src_fs, src = fsutil.open_fs(self.src, self.src_fs_uri)
        dst_fs, dst = fsutil.open_fs(self.dst, self.dst_fs_uri)
        return src_fs, src, dst_fs, dst

    def is_completed(self) -> bool:
        src_fs, src, dst_fs, dst = self._fss()
        return dst_fs.exists(dst) and not src_fs.exists(src)

    def _conflict(self) -> PublishConflictError:
        return PublishConflictError(f"cannot publish {self.src}: {self.dst} already exists "
                                    "(gpy never overwrites published data)")

    @staticmethod
    def _interrupted_move(src_fs, src: str, dst_fs, dst: str) -> bool:
        """Whether the destination is this step's own move, interrupted before the source was removed.

        On one local filesystem a move is a hard link then an unlink, so its destination is the source's very
        file; anything else there (another dataset's file of the same size) is a conflict, never to be
        resolved by deleting the source. Across filesystems and on object stores a move is a copy then a
        delete: a destination of the source's size is taken as the complete copy.
        """
        if fsutil.is_local(src_fs) and fsutil.is_local(dst_fs):
            if os.path.samefile(src, dst):
                return True
            if os.stat(src).st_dev == os.stat(dst).st_dev:
                return False
        return src_fs.size(src) == dst_fs.size(dst)

    def execute(self, fresh: bool = False) -> None:
        src_fs, src, dst_fs, dst = self._fss()
        if fresh and fsutil.is_local(src_fs) and fsutil.is_local(dst_fs) and self._link_fresh(dst_fs, src, dst):
            return
        if dst_fs.exists(dst):
            if not src_fs.exists(src):
                return  # done before
            if fresh or not self._interrupted_move(src_fs, src, dst_fs, dst):
                raise self._conflict()
            fsutil.remove(src_fs, src)  # an interrupted move: the destination is complete
            return
        if not src_fs.exists(src):
            raise GobblinPyError(f"cannot publish {self.src}: it is gone and {self.dst} does not exist")
        fsutil.makedirs(dst_fs, posixpath.dirname(dst))
        if fsutil.is_object_store(dst_fs):
            self._copy_to_object_store(src_fs, src, dst_fs, dst)
            fsutil.remove(src_fs, src)
            return
        if fsutil.is_local(src_fs) and fsutil.is_local(dst_fs):
            try:
                os.link(src, dst)  # atomic, and refuses to replace an existing file
            except FileExistsError:
                raise self._conflict() from None
            except OSError as exc:
                if exc.errno not in fsutil.NO_HARD_LINKS:
                    raise
            else:
                fsutil.fsync_dir(posixpath.dirname(dst))
                os.unlink(src)
                return
        tmp = fsutil.temporary_path(dst)
        with src_fs.open(src, "rb") as reader, dst_fs.open(tmp, "wb") as writer:
            while chunk := reader.read(8 << 20):
                writer.write(chunk)
        if fsutil.is_local(dst_fs):
            try:
                os.link(tmp, dst)
            except FileExistsError:
                os.unlink(tmp)
                raise self._conflict() from None
            os.unlink(tmp)
            fsutil.fsync_dir(posixpath.dirname(dst))
        else:
            if dst_fs.exists(dst):
                dst_fs.rm(tmp)
                raise self._conflict()
            dst_fs.mv(tmp, dst)
        src_fs.rm(src)

    def _link_fresh(self, dst_fs, src: str, dst: str) -> bool:
        """A move on local disk in a commit just logged, without looking first: ``link`` itself refuses an
        existing destination. False, having changed nothing, when the source is missing or the disk cannot link:
        the general path then decides."""
        fsutil.makedirs(dst_fs, posixpath.dirname(dst))
        try:
            os.link(src, dst)
        except FileExistsError:
            raise self._conflict() from None
        except OSError as exc:
            if isinstance(exc, FileNotFoundError) or exc.errno in fsutil.NO_HARD_LINKS:
                return False
            raise
        # the source goes only once the new link is durable (both names exist meanwhile: a finished move)
        fsutil.durable_folder(posixpath.dirname(dst))
        fsutil.after_durable(lambda: os.unlink(src), posixpath.dirname(src))
        return True

    def _copy_to_object_store(self, src_fs, src: str, dst_fs, dst: str) -> None:
        """Write ``dst`` whole in one step: a crash leaves it absent or complete (an interrupted multipart
        upload stays invisible), so a destination seen on replay is never a torn copy."""
        if type(src_fs) is type(dst_fs) and src_fs.storage_options == dst_fs.storage_options:
            dst_fs.cp_file(src, dst)  # server-side copy within the store
            return
        create = {"mode": "create"} if conditional.conditional_writes(dst_fs) else {}
        try:
            if fsutil.is_local(src_fs):
                dst_fs.put_file(src, dst, **create)
                return
            import tempfile

            with tempfile.TemporaryDirectory(prefix="gpy-publish-") as scratch:
                local = os.path.join(scratch, posixpath.basename(src))
                src_fs.get_file(src, local)
                dst_fs.put_file(local, dst, **create)
        except FileExistsError:
            raise self._conflict() from None
        except OSError as exc:
            if conditional.is_precondition_failure(exc):
                raise self._conflict() from None
            raise

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "src": self.src, "dst": self.dst, "src_fs_uri": self.src_fs_uri,
                "dst_fs_uri": self.dst_fs_uri}

    def describe(self) -> str:
        return f"publish {self.src} -> {self.dst}"


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
                  props: dict[str, str] | None = None) -> "CommitSequence":
        try:
            steps: list[CommitStep] = []
            for item in data["steps"]:
                if "class" in item:  # a plugin's step (e.g. a Kafka transaction), rebuilt by its own class
                    steps.append(plugin_step(item, props or {}))
                elif item["kind"] == "fs_rename":
                    steps.append(FsRenameStep(item["src"], item["dst"], item.get("src_fs_uri"), item.get("dst_fs_uri")))
                elif item["kind"] == "dataset_state":
                    state = deserialize(DATASET_STATE_CLASS, bytes.fromhex(item["state"]), where)
                    steps.append(DatasetStateStep(store, item["urn"], state))  # type: ignore[arg-type]
                else:
                    raise ValueError(f"unknown step kind {item['kind']!r}")
            return cls(data["job_name"], data["urn"], data["job_id"], steps)
        except (KeyError, TypeError, ValueError) as exc:
            raise CorruptFileError(where, f"not a readable commit sequence ({exc}); it records an unfinished "
                                          "commit: repair or remove it, knowing its data may be half published") from None

    def execute(self, on_step: Callable[[str], None] = boundary, fresh: bool = False) -> None:
        """Run every step that has not taken effect yet, in order.

        ``fresh``: the sequence was just logged by this process, so no step can have run; verifying is only
        needed when finishing a sequence an earlier run left behind (steps are idempotent either way).
        """
        for index, step in enumerate(self.steps):
            with phase(f"commit.{step.kind}"):
                if fresh or not step.is_completed():
                    step.execute(fresh=fresh)
            on_step(f"{self.urn}:step{index}:{step.kind}")


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

    @classmethod
    def for_job(cls, props: dict[str, str], state_store: FsDatasetStateStore) -> "CommitSequenceStore":
        settings = DeliverySettings.load(props)
        root = settings.store_dir or posixpath.join(state_store.url.rstrip("/"), "_commit_sequences")
        return cls(root, settings.store_fs_uri or props.get("state.store.fs.uri"), state_store, dict(props))

    @staticmethod
    def file_name(urn: str) -> str:
        # an empty URN has a name of its own; others are percent-encoded UTF-8, which is unambiguous
        if not urn:
            return "default_dataset_urn.json"
        return quote(urn, safe="._-") + ".json"

    def path(self, job_name: str, urn: str) -> str:
        return contained_join(self.root, job_name, self.file_name(urn), what="job.name")

    def exists(self, job_name: str, urn: str) -> bool:
        """Whether a commit of the dataset is logged: its own file, or a batch :meth:`pending` listed."""
        return (job_name, urn) in self._batched or self.fs.exists(self.path(job_name, urn))

    def put_batch(self, job_name: str, job_id: str, number: int, sequences: list[CommitSequence]) -> str:
        """Log the sequences of several datasets as one file (one write, one fsync); returns its path."""
        path = contained_join(self.root, job_name, f"{BATCH_PREFIX}{quote(job_id, safe='._-')}-{number}.json",
                              what="job.name/job.id")
        if self.fs.exists(path):
            raise GobblinPyError(f"{path}: a batch of unfinished commits is already logged there")
        for sequence in sequences:
            sequence.batch = path
        data = {"version": FORMAT_VERSION, "batch": [s.to_json() for s in sequences]}
        fsutil.atomic_write(self.fs, path, json.dumps(data, separators=(",", ":")).encode("utf-8"))
        return path

    def finish_batch(self, path: str, sequences: list[CommitSequence], left: list[CommitSequence]) -> None:
        """A batch whose ``sequences`` have all run, but for ``left`` (not finished): delete its file, or keep
        only ``left`` in it."""
        unfinished = {id(s) for s in left}
        self._batched -= {(s.job_name, s.urn) for s in sequences if id(s) not in unfinished}
        if not left:
            if self.fs.exists(path):
                fsutil.remove(self.fs, path)
            return
        data = {"version": FORMAT_VERSION, "batch": [s.to_json() for s in left]}
        fsutil.atomic_write(self.fs, path, json.dumps(data, separators=(",", ":")).encode("utf-8"))

    def put(self, sequence: CommitSequence) -> None:
        """Log a sequence; never over another run's unfinished one."""
        path = self.path(sequence.job_name, sequence.urn)
        if self.fs.exists(path):
            raise GobblinPyError(f"{path}: an unfinished commit of dataset {sequence.urn!r} is already logged")
        data = json.dumps(sequence.to_json(), separators=(",", ":")).encode("utf-8")
        fsutil.atomic_write(self.fs, path, data)

    def delete(self, sequence: CommitSequence) -> None:
        path = self.path(sequence.job_name, sequence.urn)
        if self.fs.exists(path):
            fsutil.remove(self.fs, path)

    def pending(self, job_name: str) -> Iterator[CommitSequence]:
        """Every stored sequence of a job (left by a run that did not finish its commit)."""
        directory = posixpath.join(self.root, job_name)
        for name in fsutil.list_names(self.fs, directory):
            if not name.endswith(".json"):
                continue
            path = posixpath.join(directory, name)
            where = path if fsutil.is_local(self.fs) else self.fs.unstrip_protocol(path)
            try:
                data = json.loads(self.fs.cat_file(path).decode("utf-8"))
            except ValueError as exc:
                raise CorruptFileError(where, f"corrupt commit sequence ({exc}); it records an unfinished commit: "
                                              "repair or remove it, knowing its data may be half published") from None
            if not name.startswith(BATCH_PREFIX):
                yield CommitSequence.from_json(data, self.state_store, where, self.props)
                continue
            if not isinstance(data, dict) or not isinstance(data.get("batch"), list):
                raise CorruptFileError(where, "not a readable batch of commit sequences; it records unfinished "
                                              "commits: repair or remove it, knowing their data may be half published")
            batch = [CommitSequence.from_json(item, self.state_store, where, self.props) for item in data["batch"]]
            for sequence in batch:
                sequence.batch = path
                self._batched.add((sequence.job_name, sequence.urn))
            yield from batch
