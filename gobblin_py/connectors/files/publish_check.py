"""Publishing is verified, not assumed: each file a dataset's tasks wrote is published, and holds its records.

For a publisher that publishes its tasks' files one move each (BaseDataPublisher and the publishers built on it,
which offer the check to the runtime as :class:`~gobblin_py.sdk.commit.ChecksPublishing`),
:func:`published_check` matches the files the writers counted (``{output file: records}``
on each task branch) against the moves the publisher planned. A counted file no move takes is refused at once,
before anything moves. The returned :class:`PublishedRecordsStep` runs after the moves and before the dataset's
state is saved — in the commit sequence, so a later run finishing a logged commit checks again — and counts each
published file where its format says how many records it holds (Parquet and ORC footers, Avro block headers); a
JSON or CSV file, counted in full before publishing, must exist. A file gone or holding other records fails the
commit with :class:`~gobblin_py.sdk.errors.RecordsLost`: the dataset's state, and so its watermark, is not saved.

One count is not made twice: a file the publisher read back and counted before the move whose published name is, in the commit that just moved it, that very file
(on local disk a move is a hard link: same device, inode, size and modification time) holds what was counted,
and is not read again; nor is an object that commit uploaded from that very file, unchanged from before the
upload to its end (an object store's put is whole: the object holds the bytes sent). Anything else is read: a
copy across filesystems or within a store, a file changed since, and every file when a later run finishes a
logged commit (the log does not carry what was counted).
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gobblin_py.formats.counting import count_records
from gobblin_py.io import fs as fsutil
from gobblin_py.io.rename_step import FsRenameStep
from gobblin_py.sdk.branches import branch_key
from gobblin_py.sdk.commit import FILE_RECORDS_KEY, CommitStep, step_class_path
from gobblin_py.sdk.errors import RecordsLost
from gobblin_py.sdk.states import TaskState, WorkingState

SHOWN = 5  # files named in a message


@dataclass(frozen=True)
class PublishedFile:
    """One published file: where it is (a URL off local disk), on which filesystem, the records it must hold, the
    identity of the local file counted before the move, if it was, and the step that moves it (neither logged)."""

    path: str
    fs_uri: str | None
    records: int
    counted: fsutil.FileIdentity | None = None
    moved_by: FsRenameStep | None = field(default=None, compare=False, repr=False)


@dataclass
class PublishedRecordsStep(CommitStep):
    """Count the dataset's published files against what its tasks wrote; RecordsLost naming the folder and the
    numbers when a file is gone or holds other records. Never completed: it checks each time it runs."""

    urn: str
    files: list[PublishedFile] = field(default_factory=list)
    kind: str = "published_records"

    def is_completed(self) -> bool:
        return False

    def execute(self, fresh: bool = False) -> None:
        wrong: list[tuple[PublishedFile, str, int]] = []  # (file, what is wrong, records it holds)
        for file in self.files:
            found, problem = _found(file, fresh)
            if problem:
                wrong.append((file, problem, found))
        if not wrong:
            return
        written = sum(f.records for f in self.files)
        there = written - sum(f.records - found for f, _, found in wrong)
        folders = sorted({posixpath.dirname(f.path) for f, _, _ in wrong})
        details = "; ".join(f"{f.path} {problem}" for f, problem, _ in wrong[:SHOWN])
        more = f" (and {len(wrong) - SHOWN} more)" if len(wrong) > SHOWN else ""
        raise RecordsLost(f"records lost publishing dataset {self.urn!r} to {', '.join(folders)}: its tasks wrote "
                          f"{written} records to {len(self.files)} files and {there} are there: {details}{more}")

    def to_json(self) -> dict[str, Any]:
        return {"class": step_class_path(self), "kind": self.kind, "urn": self.urn,
                "files": [[f.path, f.fs_uri, f.records] for f in self.files]}

    @classmethod
    def from_json(cls, item: dict[str, Any], props: dict[str, str]) -> PublishedRecordsStep:
        return cls(item["urn"], [PublishedFile(path, fs_uri, int(records)) for path, fs_uri, records in item["files"]])

    def describe(self) -> str:
        return f"check that the {len(self.files)} published files of dataset {self.urn!r} hold their records"


def _found(file: PublishedFile, fresh: bool) -> tuple[int, str | None]:
    """``(records the file holds, what is wrong or None)``; a file that cannot be counted is taken as whole."""
    fs, path = fsutil.open_fs(file.path, file.fs_uri)
    if fresh and file.counted is not None and fsutil.is_local(fs):
        identity = fsutil.local_identity(path)
        if identity is None:
            return 0, f"is gone (it was to hold {file.records} records)"
        if identity == file.counted:  # moved by a hard link: the very file counted before the move
            return file.records, None
    if fresh and file.counted is not None and file.moved_by is not None and file.moved_by.uploaded == file.counted:
        return file.records, None  # uploaded just now from the very file counted, unchanged while it was sent
    try:
        found = count_records(fs, path, text_formats=False)
    except FileNotFoundError:
        return 0, f"is gone (it was to hold {file.records} records)"
    except Exception as exc:  # noqa: BLE001 - a file that cannot be read back is as good as lost
        return 0, f"cannot be read back ({type(exc).__name__}: {exc}); it was to hold {file.records} records"
    if found is None:
        return (file.records, None) if fs.exists(path) else (0, f"is gone (it was to hold {file.records} records)")
    if found != file.records:
        return found, f"holds {found} record{'s' if found != 1 else ''}, not {file.records}"
    return found, None


def counted_files(tasks: Sequence[TaskState]) -> dict[str, int]:
    """``{task output file: records}`` the writers of the successful tasks' branches counted (normalised paths)."""
    counted: dict[str, int] = {}
    for task in tasks:
        if task.working_state is not WorkingState.SUCCESSFUL:
            continue
        branches = task.get_prop_as_int("fork.branches", 1) or 1
        for branch in range(branches):
            recorded = task.get_prop(branch_key(FILE_RECORDS_KEY, branches, branch))
            if recorded:
                for path, records in json.loads(recorded).items():
                    counted[posixpath.normpath(path)] = int(records)
    return counted


def published_check(urn: str, tasks: Sequence[TaskState], steps: Sequence[CommitStep],
                    verified: Mapping[str, fsutil.FileIdentity] | None = None) -> PublishedRecordsStep | None:
    """The step that verifies the publishing of ``tasks`` by ``steps`` (None when no writer counted its files);
    RecordsLost at once when a counted file is not moved by any step (it would never be published). ``verified``:
    the identities of the local files the publisher counted before the move (normalised paths)."""
    counted = counted_files(tasks)
    if not counted:
        return None
    files: list[PublishedFile] = []
    for step in steps:
        if isinstance(step, FsRenameStep):
            source = posixpath.normpath(fsutil.open_fs(step.src, step.src_fs_uri)[1])
            records = counted.pop(source, None)
            if records is not None:
                files.append(PublishedFile(step.dst, step.dst_fs_uri, records, (verified or {}).get(source), step))
    if counted:
        left = sorted(counted.items())
        lost = sum(counted.values())
        named = "; ".join(f"{path} ({records} records)" for path, records in left[:SHOWN])
        more = f" and {len(left) - SHOWN} more" if len(left) > SHOWN else ""
        raise RecordsLost(f"records lost publishing dataset {urn!r}: its tasks wrote "
                          f"{lost + sum(f.records for f in files)} records, and {lost} records in {len(left)} "
                          f"file(s) would not be published: {named}{more}; nothing of the dataset is published")
    return PublishedRecordsStep(urn, files)
