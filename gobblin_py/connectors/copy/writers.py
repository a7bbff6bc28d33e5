"""The copy writers: each file a task is given is streamed from its source, through its decodings, into the
task's staging folder, and on commit the folder moves to the task's output folder for the publisher.

A task stages under ``<writer.staging.dir>/_copy/<task id>`` (inside its attempt's folder) and commits to
``<writer.output.dir>/_copy/<task id>``, keeping each file's destination below it (its path relative to
``data.publisher.final.dir``). Bytes move ``gobblin.copy.bufferSize`` at a time; nothing holds a whole file.
:class:`FileAwareInputStreamDataWriterBuilder` copies each file as it is read (byte for byte, or decoded);
:mod:`gobblin_py.connectors.copy.tar_writer` unpacks archives.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import pyarrow as pa

from gobblin_py.connectors.copy.descriptor import FileCopy, check_schema, copy_stream, open_decoded, rows
from gobblin_py.connectors.copy.settings import CopyWriterSettings
from gobblin_py.io import fs as fsutil
from gobblin_py.io.branch_paths import BranchScope
from gobblin_py.io.contained_paths import relative_parts
from gobblin_py.sdk.contracts import CountingDataWriter, DataWriter, DataWriterBuilder
from gobblin_py.sdk.errors import GobblinPyError, UsageError
from gobblin_py.sdk.interrupts import check_cancelled
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.states import State, WorkUnitState

log = get_logger(__name__)

COPY_FOLDER = "_copy"


def task_folders(state: State, branches: int = 1, branch: int = 0) -> tuple[str, str]:
    """``(staging, output)`` folders of a task's copied files (paths on the writer's filesystem, maybe URLs)."""
    staging, output = BranchScope(state, branches, branch).writer_dirs()
    task = state.get_prop("task.id")
    if not task:
        raise GobblinPyError("the copy writer runs inside a task (task.id is not set)")
    return posixpath.join(staging, COPY_FOLDER, task), posixpath.join(output, COPY_FOLDER, task)


def safe_relative(path: str, what: str, source: str) -> str:
    """``path`` normalised; PathEscapeError naming ``source`` and ``what`` when it is absolute, climbs with ``..``,
    holds a NUL or is not valid UTF-8 (it must stay below its folder, under a name every filesystem holds)."""
    return "/".join(relative_parts(path, f"{source}: {what}"))


@contextmanager
def naming_the_copy(source: str, destination: str) -> Iterator[None]:
    """Name the file being copied and where it goes in a failure that names neither: a full disk (ENOSPC), a quota,
    an unreadable source, or memory that Python or pyarrow (``ArrowMemoryError``) could not allocate."""
    try:
        yield
    except GobblinPyError:
        raise  # already says which file
    except OSError as exc:
        raise GobblinPyError(f"copying {source} to {destination}: {exc}") from exc
    except MemoryError as exc:
        raise GobblinPyError(f"copying {source} to {destination}: out of memory ({exc or 'no detail'}); lower "
                             "gobblin.copy.bufferSize or give the task more memory") from exc


class CopyWriter(CountingDataWriter):
    """Copies each file of the batches it is given into staging, as read through its decodings."""

    def __init__(self, fs, staging_root: str, output_root: str, settings: CopyWriterSettings) -> None:
        self.fs = fs
        self.staging_root = staging_root
        self.output_root = output_root
        self.settings = settings
        self._records = 0
        self._bytes = 0
        if fs.exists(staging_root):  # a leftover of an earlier attempt with the same folder
            fsutil.remove_tree(fs, staging_root)

    def staged(self, relative: str) -> str:
        return posixpath.join(self.staging_root, relative) if relative else self.staging_root

    def write(self, batch: pa.RecordBatch) -> None:
        for entry in rows(batch):
            check_cancelled()
            self._bytes += self.copy(entry)
            self._records += 1

    def open_source(self, entry: FileCopy, stack: ExitStack):
        """The source of ``entry`` read through its decodings (closed with ``stack``)."""
        source_fs, path = fsutil.open_fs(entry.source, self.settings.source_fs_uri)
        try:
            return open_decoded(source_fs, FileCopy(path, entry.destination, entry.size, entry.mtime_ms,
                                                    entry.decodings), stack)
        except FileNotFoundError:
            raise GobblinPyError(f"{entry.source}: the file to copy is gone (it was listed when the run was "
                                 "planned)") from None

    def new_file(self, relative: str, source: str):
        """A new staged file at ``relative``, open for writing; refused when one is already staged there."""
        path = self.staged(relative)
        if self.fs.exists(path):
            raise GobblinPyError(f"{source}: {relative} is already written by another file of this task (two "
                                 "files would be published to one destination)")
        self.make_folder(posixpath.dirname(path), relative, source)
        return self.fs.open(path, "wb")

    def make_folder(self, path: str, relative: str, source: str) -> None:
        """Create the staged folder ``path``; refused, naming ``source``, when a staged file is in the way."""
        try:
            fsutil.makedirs(self.fs, path)
        except (FileExistsError, NotADirectoryError):
            raise GobblinPyError(f"{source}: {relative} needs a folder where this task already wrote a file "
                                 "(a file and a folder would be published to one path)") from None

    def copy(self, entry: FileCopy) -> int:
        """Stage one file; the bytes written."""
        relative = safe_relative(entry.destination, "destination", entry.source)
        with naming_the_copy(entry.source, self.staged(relative)), ExitStack() as stack:
            reader = self.open_source(entry, stack)
            with self.new_file(relative, entry.source) as out:
                written = copy_stream(reader, out, self.settings.buffer_size, entry.source)
        if self.settings.check_size and not entry.decodings and written != entry.size:
            raise GobblinPyError(f"{entry.source}: incomplete copy, {written} bytes written where the file had "
                                 f"{entry.size} when the run was planned (gobblin.copy.checkFileSize=true)")
        log.debug("file_copied", source=entry.source, destination=entry.destination, bytes=written)
        return written

    def commit(self) -> list[str]:
        """Move the staged folder to the task's output folder; the files there."""
        if not self.fs.exists(self.staging_root):
            return []
        if self.fs.exists(self.output_root):
            fsutil.remove_tree(self.fs, self.output_root)
        fsutil.makedirs(self.fs, posixpath.dirname(self.output_root))
        self.fs.mv(self.staging_root, self.output_root, recursive=True)
        local = fsutil.is_local(self.fs)
        return [p if local else self.fs.unstrip_protocol(p) for p in sorted(self.fs.find(self.output_root))]

    def cleanup(self) -> None:
        if self.fs.exists(self.staging_root):
            fsutil.remove_tree(self.fs, self.staging_root)


class CopyWriterBuilder(DataWriterBuilder):
    """Builds a copy writer for a task of a copy job (one branch only, as in Gobblin)."""

    settings_class = CopyWriterSettings
    writer_class: type[CopyWriter] = CopyWriter

    def build(self, state: WorkUnitState, schema: pa.Schema, branches: int, branch: int, writer_id: str) -> DataWriter:
        if branches > 1:
            raise UsageError(f"{type(self).__name__}: a copy job has one branch (fork.branches={branches})")
        check_schema(schema, type(self).__name__)
        settings = CopyWriterSettings.load(state, branches=branches, branch=branch)
        staging, output = task_folders(state, branches, branch)
        fs, staging_root = fsutil.open_fs(staging, settings.fs_uri)
        _, output_root = fsutil.open_fs(output, settings.fs_uri)
        return self.writer_class(fs, staging_root, output_root, settings)


class FileAwareInputStreamDataWriterBuilder(CopyWriterBuilder):
    """Gobblin's FileAwareInputStreamDataWriterBuilder: each file copied byte for byte (or as its decodings
    read it) to its destination."""
