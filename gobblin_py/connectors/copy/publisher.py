"""``CopyDataPublisher``: each dataset's copied files moved from its tasks' output folders to their destinations.

A file a task staged at ``<output>/_copy/<task id>/<relative>`` goes to ``<data.publisher.final.dir>/<relative>``.
The moves are the runtime's commit steps (:class:`~gobblin_py.io.rename_step.FsRenameStep`): under
EXACTLY_ONCE delivery they are logged with the dataset's new state (which records the files copied) before any
is made, so a run killed mid-publish is finished by the next one, and no file is lost or published twice. A
destination that already exists fails the dataset before anything moves (gpy never overwrites; Gobblin skips
such a file silently), as do two files bound for one destination and, on local disk, a destination reached through
a symbolic link in the final dir that leads out of it.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass

from gobblin_py.connectors.copy.settings import FINDER_KEY, FINDER_NAME
from gobblin_py.connectors.copy.writers import task_folders
from gobblin_py.connectors.files.publisher import PublisherSettings
from gobblin_py.formats.settings import FileWriterSettings
from gobblin_py.io import fs as fsutil
from gobblin_py.io.contained_paths import check_no_symlink_escape, contained_join
from gobblin_py.io.rename_step import FsRenameStep
from gobblin_py.sdk.commit import CommitStep, PublishConflictError
from gobblin_py.sdk.contracts import DataPublisher
from gobblin_py.sdk.plugins import resolve_class
from gobblin_py.sdk.settings import Settings, same_as
from gobblin_py.sdk.states import TaskState, WorkingState


@dataclass(frozen=True)
class CopyPublisherSettings(Settings):
    """The keys of :class:`CopyDataPublisher`."""

    final_dir: str = same_as(PublisherSettings, "final_dir")
    fs_uri: str | None = same_as(PublisherSettings, "fs_uri")
    writer_fs_uri: str | None = same_as(FileWriterSettings, "fs_uri")


class CopyDataPublisher(DataPublisher):
    """Gobblin's CopyDataPublisher: moves the files the copy writers staged to their destinations below
    ``data.publisher.final.dir``, dataset by dataset, exactly once."""

    settings_class = CopyPublisherSettings

    def init(self, job_props: dict[str, str]) -> None:
        self.job_props = job_props
        self.final_dirs: list[str] = []

    def plan(self, task_states: Sequence[TaskState]) -> list[CommitStep]:
        """The moves that publish the successful tasks' files, checked for conflicts, not yet made."""
        settings = CopyPublisherSettings.load(self.job_props)
        publisher_fs_uri = settings.fs_uri or settings.writer_fs_uri
        dst_fs, root = fsutil.open_fs(settings.final_dir, publisher_fs_uri)
        root_shown = root if fsutil.is_local(dst_fs) else dst_fs.unstrip_protocol(root)
        # a final dir not made yet holds no link (and the check would judge it by the folders above it)
        links_possible = fsutil.is_local(dst_fs) and os.path.lexists(root)
        steps: list[CommitStep] = []
        planned: dict[str, str] = {}  # destination -> staged file
        folders: dict[str, str] = {}  # folder of a planned destination -> the staged file that needs it
        for task in task_states:
            if task.working_state is not WorkingState.SUCCESSFUL:
                continue
            _, output = task_folders(task)
            src_fs, output_root = fsutil.open_fs(output, settings.writer_fs_uri)
            if not src_fs.exists(output_root):
                continue  # the task copied nothing
            for path in sorted(src_fs.find(output_root)):
                relative = posixpath.relpath(path, output_root)
                staged = path if fsutil.is_local(src_fs) else src_fs.unstrip_protocol(path)
                final = contained_join(root_shown, relative, what=f"the destination of {staged}")
                if links_possible:  # a link already in the final dir must not carry a file out of it
                    check_no_symlink_escape(root, final, what=f"cannot publish {staged}")
                if dst_fs.exists(posixpath.join(root, relative)):
                    raise PublishConflictError(f"cannot publish {staged}: {final} already exists (gpy never "
                                               "overwrites published data)")
                if final in planned:
                    raise PublishConflictError(f"cannot publish {staged}: {planned[final]} is published to the "
                                               f"same {final}")
                _check_folders_are_free(dst_fs, root, relative, staged, root_shown, planned, folders)
                planned[final] = staged
                steps.append(FsRenameStep(staged, final, settings.writer_fs_uri, publisher_fs_uri))
        self.final_dirs = [root_shown] if steps else []
        return [*steps, *self._finder_steps(task_states)]

    def _finder_steps(self, task_states: Sequence[TaskState]) -> list[CommitStep]:
        """What the job's dataset finder does once the files are in place (a Hive table's registration)."""
        finder = resolve_class(self.job_props.get(FINDER_KEY) or FINDER_NAME, FINDER_KEY)
        steps = getattr(finder, "publish_steps", None)
        return list(steps(self.job_props, task_states)) if steps is not None else []

    def publish(self, task_states: Sequence[TaskState]) -> list[str]:
        """Plan the moves and make them (at least once: used without a commit sequence store)."""
        for step in self.plan(task_states):
            step.execute(fresh=True)
        return list(self.final_dirs)


def _check_folders_are_free(dst_fs, root: str, relative: str, staged: str, root_shown: str,
                            planned: dict[str, str], folders: dict[str, str]) -> None:
    """Refuse a file whose folder is a file (published already or planned in this commit), or that is the
    folder of a file planned before it, before anything moves; ``folders`` gathers the planned files' folders."""
    final = posixpath.join(root_shown, relative)
    if final in folders:
        raise PublishConflictError(f"cannot publish {staged}: {final} is also a folder, for {folders[final]}")
    parts = relative.split("/")[:-1]
    for depth in range(1, len(parts) + 1):
        folder = "/".join(parts[:depth])
        shown = posixpath.join(root_shown, folder)
        if shown in planned:
            raise PublishConflictError(f"cannot publish {staged}: its folder {shown} is also a file, from "
                                       f"{planned[shown]}")
        if shown in folders:
            continue  # checked for an earlier file
        path = posixpath.join(root, folder)
        if dst_fs.exists(path) and not dst_fs.isdir(path):
            raise PublishConflictError(f"cannot publish {staged}: its folder {shown} is a published file")
        folders[shown] = staged
