"""The commit steps of a compaction, each idempotent and logged in the commit log before any runs:

- :class:`SwapFolderStep`: the new output (built in ``.<time>.gpy-new`` beside the destination) replaces the
  destination: the old folder is renamed to ``.<time>.gpy-old``, the new one (its files stamped with the time of
  publishing) to the destination, the old one deleted. Each rename is atomic; between the two, the destination is briefly absent (the old output waiting
  beside it), never a mix of old and new files. A replay goes on from wherever a crash stopped it.
- :class:`RemoveFolderStep`: a late folder a recompaction consumed goes.
- :class:`CopyFileStep`: a late file copied (never moved: the input stays as it was) into a late folder, whole
  (a temporary name, then a link that never replaces a file).
- :class:`MarkCompleteStep` (rename mode): the input files compacted move into ``<their folder>_COMPLETE``.
- :class:`MarkerStep`: ``_COMPACTION_COMPLETE`` written last (8 bytes, big-endian epoch ms), replacing the old one
  atomically.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from typing import Any

from gobblin_py.connectors.compaction.plan import MARKER, marker_bytes
from gobblin_py.io import fs as fsutil
from gobblin_py.sdk.commit import CommitStep, PublishConflictError, step_class_path


def _rename(fs, src: str, dst: str) -> None:
    if fsutil.is_local(fs):
        os.rename(src, dst)
        fsutil.fsync_dir(posixpath.dirname(dst))
    else:
        fs.mv(src, dst, recursive=True)


def _stamp_now(fs, folder: str) -> None:
    """Give the files of a new output the time they are published (local disk): a later job reading this folder
    (hourly into daily) then tells them from what its marker says it read, even when they were written before
    it started."""
    if not fsutil.is_local(fs):
        return
    for entry in os.scandir(folder):
        if entry.is_file(follow_symlinks=False):
            os.utime(entry.path)


@dataclass
class SwapFolderStep(CommitStep):
    """Replace the folder ``dest`` by ``new`` (see the module); ``old`` holds the old output meanwhile."""

    new: str
    dest: str
    old: str
    kind: str = "compaction_swap"

    def is_completed(self) -> bool:
        fs, _ = fsutil.open_fs(self.dest)
        return fs.exists(self.dest) and not fs.exists(self.new) and not fs.exists(self.old)

    def execute(self, fresh: bool = False) -> None:
        fs, _ = fsutil.open_fs(self.dest)
        if fs.exists(self.new):
            if fs.exists(self.dest):
                if fs.exists(self.old):  # an old output set aside before, and replaced since: it is no one's
                    fsutil.remove_tree(fs, self.old)
                _rename(fs, self.dest, self.old)
            fsutil.makedirs(fs, posixpath.dirname(self.dest))
            _stamp_now(fs, self.new)
            _rename(fs, self.new, self.dest)
        elif not fs.exists(self.dest):
            raise PublishConflictError(f"cannot publish the compaction of {self.dest}: its new output {self.new} "
                                       "is gone")
        if fs.exists(self.old):
            fsutil.remove_tree(fs, self.old)

    def to_json(self) -> dict[str, Any]:
        return {"class": step_class_path(self), "kind": self.kind, "new": self.new, "dest": self.dest, "old": self.old}

    @classmethod
    def from_json(cls, item: dict[str, Any], props: dict[str, str]) -> SwapFolderStep:
        return cls(str(item["new"]), str(item["dest"]), str(item["old"]))

    def describe(self) -> str:
        return f"replace {self.dest} with {self.new}"


@dataclass
class RemoveFolderStep(CommitStep):
    """Delete a folder (a late folder a recompaction consumed)."""

    path: str
    kind: str = "compaction_consume"

    def is_completed(self) -> bool:
        fs, _ = fsutil.open_fs(self.path)
        return not fs.exists(self.path)

    def execute(self, fresh: bool = False) -> None:
        fs, _ = fsutil.open_fs(self.path)
        if fs.exists(self.path):
            fsutil.remove_tree(fs, self.path)

    def to_json(self) -> dict[str, Any]:
        return {"class": step_class_path(self), "kind": self.kind, "path": self.path}

    @classmethod
    def from_json(cls, item: dict[str, Any], props: dict[str, str]) -> RemoveFolderStep:
        return cls(str(item["path"]))

    def describe(self) -> str:
        return f"remove {self.path}"


@dataclass
class CopyFileStep(CommitStep):
    """Copy the late file ``src`` (``size`` bytes) to ``dst``, which it never replaces (see the module)."""

    src: str
    dst: str
    size: int
    kind: str = "compaction_late_copy"

    def is_completed(self) -> bool:
        fs, _ = fsutil.open_fs(self.dst)
        return fs.exists(self.dst) and int(fs.size(self.dst)) == self.size

    def execute(self, fresh: bool = False) -> None:
        src_fs, _ = fsutil.open_fs(self.src)
        dst_fs, _ = fsutil.open_fs(self.dst)
        if dst_fs.exists(self.dst):
            if int(dst_fs.size(self.dst)) == self.size and not fresh:
                return  # copied before a crash
            raise PublishConflictError(f"cannot set aside late file {self.src}: {self.dst} already exists")
        fsutil.makedirs(dst_fs, posixpath.dirname(self.dst))
        tmp = fsutil.temporary_path(self.dst)
        with src_fs.open(self.src, "rb") as reader, dst_fs.open(tmp, "wb") as writer:
            while chunk := reader.read(8 << 20):
                writer.write(chunk)
        if fsutil.is_local(dst_fs):
            try:
                os.link(tmp, self.dst)
            except FileExistsError:
                raise PublishConflictError(f"cannot set aside late file {self.src}: {self.dst} already exists") \
                    from None
            finally:
                os.unlink(tmp)
            fsutil.fsync_dir(posixpath.dirname(self.dst))
        else:
            dst_fs.mv(tmp, self.dst)

    def to_json(self) -> dict[str, Any]:
        return {"class": step_class_path(self), "kind": self.kind, "src": self.src, "dst": self.dst, "size": self.size}

    @classmethod
    def from_json(cls, item: dict[str, Any], props: dict[str, str]) -> CopyFileStep:
        return cls(str(item["src"]), str(item["dst"]), int(item["size"]))

    def describe(self) -> str:
        return f"copy late file {self.src} -> {self.dst}"


@dataclass
class MarkCompleteStep(CommitStep):
    """Move the files ``names`` of the input folder ``folder`` into ``<folder>_COMPLETE`` (made when missing; a file
    never replaced); ``folder`` goes once empty."""

    folder: str
    names: list[str]
    kind: str = "compaction_mark_complete"

    @property
    def target(self) -> str:
        return self.folder.rstrip("/") + "_COMPLETE"

    def is_completed(self) -> bool:
        fs, _ = fsutil.open_fs(self.folder)
        return all(not fs.exists(posixpath.join(self.folder, n)) and fs.exists(posixpath.join(self.target, n))
                   for n in self.names)

    def execute(self, fresh: bool = False) -> None:
        fs, _ = fsutil.open_fs(self.folder)
        fsutil.makedirs(fs, self.target)
        for name in self.names:
            src, dst = posixpath.join(self.folder, name), posixpath.join(self.target, name)
            if not fs.exists(src):
                continue  # moved before a crash
            if fs.exists(dst):
                raise PublishConflictError(f"cannot mark {src} compacted: {dst} already exists")
            _rename(fs, src, dst)
        if fsutil.is_local(fs) and fs.exists(self.folder) and not os.listdir(self.folder):
            os.rmdir(self.folder)

    def to_json(self) -> dict[str, Any]:
        return {"class": step_class_path(self), "kind": self.kind, "folder": self.folder, "names": self.names}

    @classmethod
    def from_json(cls, item: dict[str, Any], props: dict[str, str]) -> MarkCompleteStep:
        return cls(str(item["folder"]), [str(n) for n in item["names"]])

    def describe(self) -> str:
        return f"mark {len(self.names)} files of {self.folder} compacted"


@dataclass
class MarkerStep(CommitStep):
    """Write ``<dest>/_COMPACTION_COMPLETE`` holding ``millis`` (replacing an older marker at once)."""

    dest: str
    millis: int
    kind: str = "compaction_marker"

    @property
    def path(self) -> str:
        return posixpath.join(self.dest, MARKER)

    def is_completed(self) -> bool:
        fs, _ = fsutil.open_fs(self.path)
        try:
            return bool(fs.cat_file(self.path) == marker_bytes(self.millis))
        except FileNotFoundError:
            return False

    def execute(self, fresh: bool = False) -> None:
        fs, path = fsutil.open_fs(self.path)
        fsutil.atomic_write(fs, path, marker_bytes(self.millis))

    def to_json(self) -> dict[str, Any]:
        return {"class": step_class_path(self), "kind": self.kind, "dest": self.dest, "millis": self.millis}

    @classmethod
    def from_json(cls, item: dict[str, Any], props: dict[str, str]) -> MarkerStep:
        return cls(str(item["dest"]), int(item["millis"]))

    def describe(self) -> str:
        return f"mark {self.dest} compacted"
