"""Publishing one file: the move that never replaces a file, as a commit step."""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass, field
from typing import Any

from gobblin_py.io import fs as fsutil
from gobblin_py.io import fs_conditional as conditional
from gobblin_py.io import object_store
from gobblin_py.sdk.commit import CommitStep, PublishConflictError
from gobblin_py.sdk.errors import GobblinPyError


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
    existing destination is always a conflict; there a conditional upload is not preceded by a lookup of its
    destination (the plan looked, and the upload refuses a file that appeared since).

    ``uploaded``: after an upload from local disk, the identity the source had both before and after it was sent
    (so the object holds that very file), or None; not logged.
    """

    src: str
    dst: str
    src_fs_uri: str | None = None
    dst_fs_uri: str | None = None
    kind: str = "fs_rename"
    uploaded: fsutil.FileIdentity | None = field(default=None, init=False, repr=False, compare=False)

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
        if fresh and fsutil.is_local(src_fs) and fsutil.is_object_store(dst_fs) and conditional.conditional_writes(dst_fs):
            # a commit just logged, whose plan found nothing at the destination: the upload itself is conditional
            # (If-None-Match) and refuses a file there, so it is not looked up again (on S3 that is a request)
            if not src_fs.exists(src):
                raise GobblinPyError(f"cannot publish {self.src}: it is gone and {self.dst} does not exist")
            self._copy_to_object_store(src_fs, src, dst_fs, dst)
            fsutil.remove(src_fs, src)
            return
        if object_store.file_exists(dst_fs, dst):
            if not src_fs.exists(src):
                return  # done before
            if fresh or not self._interrupted_move(src_fs, src, dst_fs, dst):
                raise self._conflict()
            fsutil.remove(src_fs, src)  # an interrupted move: the destination is complete
            return
        if self._same_store(src_fs, dst_fs):  # a server-side copy, then a delete: the source's size chooses how
            try:
                size = int(src_fs.info(src)["size"])
            except FileNotFoundError:
                raise GobblinPyError(f"cannot publish {self.src}: it is gone and {self.dst} does not exist") from None
            object_store.move_file(src_fs, src, dst, size)
            return
        if not src_fs.exists(src):
            raise GobblinPyError(f"cannot publish {self.src}: it is gone and {self.dst} does not exist")
        fsutil.makedirs(dst_fs, posixpath.dirname(dst))
        if fsutil.is_object_store(dst_fs):
            self._copy_to_object_store(src_fs, src, dst_fs, dst)
            fsutil.remove(src_fs, src)
        elif not (fsutil.is_local(src_fs) and fsutil.is_local(dst_fs) and self._link_local(src, dst)):
            self._copy_then_rename(src_fs, src, dst_fs, dst)

    def _link_local(self, src: str, dst: str) -> bool:
        """A move on local disk by a hard link, which is atomic and refuses to replace an existing file; False
        when the disk cannot link."""
        try:
            os.link(src, dst)
        except FileExistsError:
            raise self._conflict() from None
        except OSError as exc:
            if exc.errno not in fsutil.NO_HARD_LINKS:
                raise
            return False
        fsutil.fsync_dir(posixpath.dirname(dst))
        os.unlink(src)
        return True

    def _copy_then_rename(self, src_fs, src: str, dst_fs, dst: str) -> None:
        """A move between stores: copied to a temporary file beside the destination, renamed (never over an
        existing file), then the source removed."""
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

    @staticmethod
    def _same_store(src_fs, dst_fs) -> bool:
        """Whether both ends are one object store (a copy is then server-side)."""
        return (fsutil.is_object_store(dst_fs) and type(src_fs) is type(dst_fs)
                and src_fs.storage_options == dst_fs.storage_options)

    def _copy_to_object_store(self, src_fs, src: str, dst_fs, dst: str) -> None:
        """Write ``dst`` whole in one step: a crash leaves it absent or complete (an interrupted multipart
        upload stays invisible), so a destination seen on replay is never a torn copy."""
        if self._same_store(src_fs, dst_fs):
            dst_fs.cp_file(src, dst)  # server-side copy within the store
            return
        create = {"mode": "create"} if conditional.conditional_writes(dst_fs) else {}
        try:
            if fsutil.is_local(src_fs):
                before = fsutil.local_identity(src)
                dst_fs.put_file(src, dst, **create)
                if before is not None and fsutil.local_identity(src) == before:
                    self.uploaded = before  # unchanged while it was read and sent
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
