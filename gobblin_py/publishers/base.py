"""Job-level publishing as Gobblin's BaseDataPublisher lays it out (§6.5), minus its silent data loss.

For each successful task and branch ``i``: the task output directory ``W = <writer.output.dir(i)>/<P(i)>``
goes to the final directory ``F(i) = data.publisher.final.dir[.i][/P(i)]``: renamed as a whole when ``F(i)``
does not exist, else each entry of ``W`` moved into ``F(i)``; with ``data.publisher.replace.final.dir[.i]``
``F(i)`` is replaced. Where Gobblin skips a name that already exists in ``F(i)`` (and later deletes the file),
gpy refuses: the dataset fails before anything is moved, naming the file.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

from gobblin_py import fs as fsutil
from gobblin_py.api import DataPublisher
from gobblin_py.errors import GobblinPyError
from gobblin_py.logs import get_logger
from gobblin_py.state import TaskState, WorkingState
from gobblin_py.writers import paths

log = get_logger(__name__)


class PublishConflictError(GobblinPyError):
    """A file to publish already exists in the final directory."""


class BaseDataPublisher(DataPublisher):
    """Moves whole task-output directories into the final directories of each branch."""

    def init(self, job_props: dict[str, str]) -> None:
        self.job_props = job_props

    def _moves(self, task_states: Sequence[TaskState]) -> list[tuple[object, str, object, str, bool]]:
        moves, seen = [], set()
        for task in task_states:
            if task.working_state is not WorkingState.SUCCESSFUL:
                continue
            branches = task.get_prop_as_int("fork.branches", 1) or 1
            for branch in range(branches):
                _, output = paths.writer_dirs(task, branches, branch)
                writer_fs_uri = paths.branch_prop(task, "writer.fs.uri", branches, branch)
                src_fs, src_root = fsutil.open_fs(output, writer_fs_uri)
                source = posixpath.join(src_root, paths.writer_file_path(task, branches, branch))
                publisher_fs_uri = paths.branch_prop(task, "data.publisher.fs.uri", branches, branch) or writer_fs_uri
                dst_fs, target = fsutil.open_fs(paths.final_dir(task, branches, branch), publisher_fs_uri)
                if source in seen:
                    continue  # tasks of one extract share their output directory: it moves once
                seen.add(source)
                if not src_fs.exists(source):
                    log.info("branch_produced_no_data", task=task.task_id, branch=branch)
                    continue
                replace = (paths.branch_prop(task, "data.publisher.replace.final.dir", branches, branch) or "false").lower() == "true"
                moves.append((src_fs, source, dst_fs, target, replace))
        return moves

    def publish(self, task_states: Sequence[TaskState]) -> list[str]:
        moves = self._moves(task_states)
        for src_fs, source, dst_fs, target, replace in moves:  # check everything before moving anything
            if replace or not dst_fs.exists(target):
                continue
            for entry in src_fs.ls(source, detail=False):
                destination = posixpath.join(target, posixpath.basename(entry.rstrip("/")))
                if dst_fs.exists(destination):
                    raise PublishConflictError(
                        f"cannot publish {entry}: {destination} already exists (gpy never overwrites published data)"
                    )
        published = []
        for src_fs, source, dst_fs, target, replace in moves:
            if replace and dst_fs.exists(target):
                dst_fs.rm(target, recursive=True)
            if not dst_fs.exists(target):
                dst_fs.makedirs(posixpath.dirname(target), exist_ok=True)
                _move(src_fs, source, dst_fs, target)
            else:
                for entry in src_fs.ls(source, detail=False):
                    _move(src_fs, entry.rstrip("/"), dst_fs, posixpath.join(target, posixpath.basename(entry.rstrip("/"))))
            published.append(dst_fs.unstrip_protocol(target) if not fsutil.is_local(dst_fs) else target)
        return published


def _move(src_fs, source: str, dst_fs, target: str) -> None:
    if src_fs is dst_fs or (fsutil.is_local(src_fs) and fsutil.is_local(dst_fs)):
        src_fs.mv(source, target, recursive=True)
        return
    # across filesystems: copy, then delete the source
    for path in src_fs.find(source) or [source]:
        relative = posixpath.relpath(path, source)
        destination = target if relative == "." else posixpath.join(target, relative)
        dst_fs.makedirs(posixpath.dirname(destination), exist_ok=True)
        with src_fs.open(path, "rb") as reader, dst_fs.open(destination, "wb") as writer:
            while chunk := reader.read(8 << 20):
                writer.write(chunk)
    src_fs.rm(source, recursive=True)


