"""Job-level publishing as Gobblin's BaseDataPublisher lays it out (§6.5), minus its silent data loss.

For each successful task and branch ``i``, every file under the task's output directory
``W = <writer.output.dir(i)>/<P(i)>`` (within the task attempt's own folder, see :mod:`gobblin_py.io.branch_paths`)
goes to the same relative place under the final directory
``F(i) = data.publisher.final.dir[.i][/P(i)]`` (partition folders included, so they move as a unit). Where
Gobblin skips a name that already exists in ``F(i)`` (and later deletes the file), gpy refuses: the dataset
fails before anything is moved, naming the file.

``plan`` returns the moves as commit steps without making them, so that the runtime can log them in a commit
sequence first (exactly-once); ``publish`` plans and makes them at once. ``data.publisher.replace.final.dir``
empties ``F(i)`` first, and is available with ``gobblin.runtime.delivery.semantics=AT_LEAST_ONCE`` only.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gobblin_py.connectors.files.publish_check import PublishedRecordsStep, published_check
from gobblin_py.formats.counting import count_records
from gobblin_py.formats.settings import WriterSettings
from gobblin_py.io import fs as fsutil
from gobblin_py.io.branch_paths import BranchScope, successful_branches
from gobblin_py.io.contained_paths import check_no_symlink_escape
from gobblin_py.io.object_store import files_exist
from gobblin_py.io.rename_step import FsRenameStep
from gobblin_py.sdk.branches import branch_count, branch_key
from gobblin_py.sdk.commit import EXACTLY_ONCE, FILE_RECORDS_KEY, CommitStep, DeliverySettings, PublishConflictError
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.contracts import DataPublisher
from gobblin_py.sdk.errors import RecordsLost, UsageError
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.settings import Scope, Settings, problem_at, setting
from gobblin_py.sdk.states import TaskState

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem

log = get_logger(__name__)


@dataclass(frozen=True)
class PublisherSettings(Settings):
    """The keys every file and table publisher reads, per branch (``.N`` with several branches)."""

    final_dir: str = setting("data.publisher.final.dir", required=True, scope=Scope.BRANCH, shared_fallback=True,
                             doc="where data is published (with several branches, a branch without its own "
                                 "uses <shared>/<branch name>)")
    append_extract: bool = setting("data.publisher.appendExtractToFinalDir", default=True,
                                   doc="publish under <final dir>/<writer file path>")
    replace_final_dir: bool = setting("data.publisher.replace.final.dir", scope=Scope.BRANCH, default=False,
                                      doc="empty the final folder first (AT_LEAST_ONCE delivery only)")
    fs_uri: str | None = setting("data.publisher.fs.uri", scope=Scope.BRANCH, default_doc="writer.fs.uri",
                                 doc="filesystem of the final folder")
    verify: str = setting("data.publisher.verify.records", default="all", choices=("all", "metadata", "none"),
                          doc="before publishing, count each file's records against what its task wrote: all "
                              "formats; metadata: only where the file says (Parquet, ORC, Avro); none")


@dataclass(frozen=True)
class FilePublisherSettings(PublisherSettings):
    """The keys of :class:`BaseDataPublisher`, per branch (``.N`` with several branches)."""

    shared: bool = setting("data.publisher.final.dir.shared", scope=Scope.BRANCH, shared_fallback=True, default=False,
                           doc="the final folder is shared on purpose: publish into it though another job "
                               "published there first (without it, a final folder belongs to the first job to "
                               "publish into it, and another job is refused)")


class BaseDataPublisher(DataPublisher):
    """Moves every file of the successful tasks' output directories into the final directories."""

    settings_class: type[PublisherSettings] = FilePublisherSettings
    marks_final_folders = True  # its files are named by the run: a run without state would publish them again

    @classmethod
    def validate(cls, props: Mapping[str, str]) -> list[ConfigError]:
        """A final folder may only be replaced where a commit cannot be half done: AT_LEAST_ONCE delivery."""
        branches = branch_count(props)
        if DeliverySettings.load(props).semantics != EXACTLY_ONCE:
            return []
        return [problem_at(props, branch_key("data.publisher.replace.final.dir", branches, b),
                           "true needs gobblin.runtime.delivery.semantics=AT_LEAST_ONCE",
                           "a replaced folder cannot be restored if the commit is interrupted")
                for b in range(branches)
                if PublisherSettings.load(props, branches=branches, branch=b).replace_final_dir]

    def init(self, job_props: dict[str, str]) -> None:
        self.job_props = job_props
        self.final_dirs: list[str] = []
        self.verified_files: dict[str, fsutil.FileIdentity] = {}

    def plan(self, task_states: Sequence[TaskState], allow_replace: bool = False) -> list[FsRenameStep]:
        """The file moves that publish ``task_states`` (successful ones), checked for conflicts, not yet made."""
        seen_sources: set[str] = set()
        self.final_dirs = []
        self.verified_files = {}
        to_replace: list[tuple[AbstractFileSystem, str]] = []
        folders: list[_Folder] = []
        for task, scope in successful_branches(task_states):
            branches, branch = scope.branches, scope.branch
            _, output = scope.writer_dirs()
            writer_fs_uri = scope.prop("writer.fs.uri")
            src_fs, src_root = fsutil.open_fs(output, writer_fs_uri)
            relative = scope.attempt_file_path()
            source = posixpath.join(src_root, relative) if relative else src_root
            publisher_fs_uri = scope.prop("data.publisher.fs.uri") or writer_fs_uri
            destination = self.destination(task, scope)
            dst_fs, target = fsutil.open_fs(destination.folder, destination.fs_uri or publisher_fs_uri)
            if fsutil.is_local(dst_fs):  # a link inside the final folder may not lead the files out of it
                check_no_symlink_escape(fsutil.open_fs(destination.root, destination.fs_uri or publisher_fs_uri)[1],
                                        target, destination.key)
            settings = PublisherSettings.load(task, branches=branches, branch=branch)
            self._verify(task, scope, src_fs, settings.verify)
            if source in seen_sources:
                continue  # tasks of one extract may share an output directory: it is published once
            seen_sources.add(source)
            files = sorted(src_fs.find(source))  # none when the folder is missing
            if not files:
                log.info("branch_produced_no_data", task=task.task_id, branch=branch)
                continue
            if settings.replace_final_dir:
                if not allow_replace:
                    raise UsageError("data.publisher.replace.final.dir=true needs "
                                     "gobblin.runtime.delivery.semantics=AT_LEAST_ONCE (a replaced directory "
                                     "cannot be restored if the commit is interrupted)")
                to_replace.append((dst_fs, target))
            src_display = source if fsutil.is_local(src_fs) else src_fs.unstrip_protocol(source)
            dst_display = target if fsutil.is_local(dst_fs) else dst_fs.unstrip_protocol(target)
            if dst_display not in self.final_dirs:
                self.final_dirs.append(dst_display)
            folders.append(_Folder(source, files, dst_fs, target, src_display, dst_display, writer_fs_uri,
                                   publisher_fs_uri, looked_up=(dst_fs, target) not in to_replace))
        self._to_replace = to_replace
        return _moves(folders)

    def destination(self, task: TaskState, scope: BranchScope) -> Destination:
        """Where the branch's files go: ``data.publisher.final.dir[.i]`` with the writer file path (a table's
        publisher puts them in its table's data folder instead)."""
        return Destination(scope.final_dir(), scope.final_root(), scope.key("data.publisher.final.dir"))

    def _verify(self, task: TaskState, scope: BranchScope, fs, mode: str) -> None:
        """The files a task's branch wrote hold what its writer says it wrote (reconciliation, as ``mode`` says:
        ``data.publisher.verify.records``); RecordsLost with the numbers otherwise, before anything is published."""
        recorded_text = scope.prop(FILE_RECORDS_KEY)
        if mode == "none" or not recorded_text:
            return
        recorded: dict[str, int] = json.loads(recorded_text)
        written = task.get_prop_as_int(scope.key("writer.records.written"), None)
        if written is not None and sum(recorded.values()) != written:
            raise RecordsLost(f"task {task.task_id} branch {scope.name}: its writer wrote {written} records but its "
                              f"files are said to hold {sum(recorded.values())}")
        # the CSV keys only for CSV: other writers (the byte writer) have formats WriterSettings does not know
        csv = (WriterSettings.load(task, branches=scope.branches, branch=scope.branch)
               if (scope.prop("writer.output.format") or "").upper() == "CSV" else None)
        local = fsutil.is_local(fs)
        for path, expected in sorted(recorded.items()):
            before = fsutil.local_identity(path) if local else None
            try:
                found = count_records(fs, path, text_formats=mode == "all",
                                      csv_header=csv.csv_header if csv else True,
                                      csv_delimiter=csv.delimiter if csv else ",")
            except FileNotFoundError:
                found = None
            if found == expected and before is not None and fsutil.local_identity(path) == before:
                self.verified_files[posixpath.normpath(path)] = before  # counted, and unchanged while counted
            if found is None and not fs.exists(path):
                raise RecordsLost(f"{path}: task {task.task_id} wrote {expected} records to this file, and it is gone; "
                                  "nothing of the dataset is published")
            if found is not None and found != expected:
                raise RecordsLost(f"{path}: task {task.task_id} wrote {expected} records to this file, and it holds "
                                  f"{found}; nothing of the dataset is published")

    def publish(self, task_states: Sequence[TaskState]) -> list[str]:
        """Publish at once (at least once): the moves, then the check that every file is there with its records."""
        steps = self.plan(task_states, allow_replace=True)
        check = self.published_check(task_states[0].dataset_urn, task_states, steps) if task_states else None
        for dst_fs, target in self._to_replace:
            if dst_fs.exists(target):
                dst_fs.rm(target, recursive=True)
        for step in steps:
            step.execute(fresh=True)
        if check is not None:
            check.execute()
        return list(self.final_dirs)

    def published_check(self, urn: str, task_states: Sequence[TaskState],
                        steps: Sequence[CommitStep]) -> PublishedRecordsStep | None:
        """The step that checks each file the tasks' writers counted is published by ``steps`` and holds its
        records (a file this publisher counted before the move, and that the move hard-links, is not read again)."""
        return published_check(urn, task_states, steps, self.verified_files)


@dataclass(frozen=True)
class Destination:
    """The folder a branch's files are published to, the folder nothing may leave (a link inside it may not lead
    the files out), the key that named it, and its filesystem when not the writer's or the publisher's."""

    folder: str
    root: str
    key: str
    fs_uri: str | None = None


@dataclass
class _Folder:
    """A branch's output folder to publish: its files, and where they go."""

    source: str
    files: list[str]
    dst_fs: AbstractFileSystem
    target: str
    src_display: str
    dst_display: str
    writer_fs_uri: str | None
    publisher_fs_uri: str | None
    looked_up: bool  # whether a file at a destination is a conflict (not when the folder is replaced)
    there: list[bool] = field(default_factory=list)

    def destinations(self) -> list[str]:
        return [posixpath.join(self.target, posixpath.relpath(path, self.source)) for path in self.files]


def _moves(folders: list[_Folder]) -> list[FsRenameStep]:
    """The moves of ``folders``' files, refused (PublishConflictError) when a destination is taken, by a file there
    or by another file of the plan. The destinations on one filesystem are looked up together, every task's
    (on S3 one HEAD each, sent together: a folder of the file's name is no conflict there, and a listing is a
    request)."""
    by_fs: list[tuple[AbstractFileSystem, list[_Folder]]] = []
    for folder in folders:
        if not folder.looked_up:
            folder.there = [False] * len(folder.files)
            continue
        group = next((found for fs, found in by_fs if fs is folder.dst_fs), None)
        if group is None:
            by_fs.append((folder.dst_fs, group := []))
        group.append(folder)
    for fs, group in by_fs:
        there = iter(files_exist(fs, [path for folder in group for path in folder.destinations()]))
        for folder in group:
            folder.there = [next(there) for _ in folder.files]
    steps: list[FsRenameStep] = []
    planned: dict[str, str] = {}  # destination -> source: two files may not land on one name
    for folder in folders:
        for path, destination, exists in zip(folder.files, folder.destinations(), folder.there, strict=True):
            relative = posixpath.relpath(path, folder.source)
            if exists:
                raise PublishConflictError(
                    f"cannot publish {path}: {destination} already exists (gpy never overwrites published data)"
                )
            final = posixpath.join(folder.dst_display, relative)
            if final in planned:
                raise PublishConflictError(
                    f"cannot publish {path}: {planned[final]} is published to the same {final} "
                    "(give the files different names, e.g. drop writer.file.name)"
                )
            planned[final] = path
            steps.append(FsRenameStep(posixpath.join(folder.src_display, relative), final, folder.writer_fs_uri,
                                      folder.publisher_fs_uri))
    return steps
