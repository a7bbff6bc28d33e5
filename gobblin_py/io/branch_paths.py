"""Where a task branch writes: Gobblin's staging / output / final directory and file-name rules (§6.2, §6.5).

A :class:`BranchScope` is one branch of a task's output — the state its keys are read from, how many branches
the task has and which one this is — and answers every "where" question of that branch:

- writer file path ``P(i)``: ``writer.file.path[.i]``, else by ``writer.file.pathType``:
  ``NAMESPACE_TABLE`` → ``<namespace as folders>/<table>``; ``TABLENAME`` → ``<table>``; ``DEFAULT`` →
  ``<namespace as folders>/<table>/<extract id>_<full|append>`` (+ ``/<branch name>`` with several branches);
- staging file ``<writer.staging.dir[.i]>/<P(i)>/<name>``, output file ``<writer.output.dir[.i]>/<P(i)>/<name>``;
  a task attempt writes under ``<dir>/_attempts/<task id>.<attempt id>`` instead, leaving out ``<P(i)>`` when the task
  has one branch, and stages its files flat beside other attempts' (``_attempts/<task id>.<attempt id>.<name>``);
- file name ``writer.file.name[.i]`` or ``part.<writer id>.<ext>``;
- final directory ``data.publisher.final.dir[.i]`` + ``/<P(i)>`` unless ``data.publisher.appendExtractToFinalDir=false``.

Every name joined into these paths (namespace, table, branch name, ``writer.file.path``, ``writer.file.name``)
goes through :mod:`gobblin_py.io.contained_paths`: one that would leave its folder (``..``, an absolute path, a NUL)
is refused with :class:`~gobblin_py.io.contained_paths.PathEscapeError`, naming its key. :func:`path_key_problems`
reports such values of a job's keys before it runs.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from urllib.parse import quote

from gobblin_py.io.contained_paths import PathEscapeError, contained_join, path_problem, relative_parts
from gobblin_py.sdk.branches import branch_key, branch_name
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.states import State, TaskState, WorkingState

ATTEMPTS_DIR = "_attempts"
MAX_FLAT_NAME = 240  # bytes; most filesystems allow 255 in a name


@dataclass(frozen=True)
class BranchScope:
    """Branch ``branch`` of a task with ``branches`` branches, its keys read from ``state``."""

    state: State
    branches: int = 1
    branch: int = 0

    def key(self, name: str) -> str:
        """``name`` with Gobblin's writer/publisher suffix: ``.i`` only when the task has several branches."""
        return branch_key(name, self.branches, self.branch)

    def prop(self, name: str, default: str | None = None) -> str | None:
        """The branch's value of ``name`` (see :meth:`key`)."""
        return self.state.get_prop(self.key(name), default)

    @property
    def name(self) -> str:
        """``fork.branch.name.i`` or ``fork_i``."""
        return branch_name(self.state, self.branch)

    def file_path(self) -> str:
        """The relative path ``P(i)`` of the branch's files under the staging, output and final directories."""
        explicit = self.prop("writer.file.path")
        if explicit:  # a leading '/' is dropped, as Gobblin does
            return "/".join(relative_parts(explicit, self.key("writer.file.path"), allow_absolute=True))
        state = self.state
        path_type = (state.get_prop("writer.file.pathType") or state.get_prop("writer.file.path.type") or "DEFAULT").upper()
        namespace = namespace_folders(state.get_prop("extract.namespace") or "")
        table = relative_parts(state.get_prop("extract.table.name") or "", "extract.table.name")
        if path_type == "TABLENAME":
            return "/".join(table)
        if path_type == "NAMESPACE_TABLE":
            return "/".join(namespace + table)
        if path_type != "DEFAULT":
            raise UsageError(f"writer.file.pathType={path_type}: use DEFAULT, TABLENAME or NAMESPACE_TABLE")
        kind = "full" if state.get_prop_as_bool("extract.is.full") else "append"
        extract = relative_parts(f"{state.get_prop('extract.extract.id', '')}_{kind}", "extract.extract.id",
                                 allow_slash=False)
        branch = [self.folder_name()] if self.branches > 1 else []
        return "/".join(namespace + table + extract + branch)

    def folder_name(self) -> str:
        """The branch's name as one folder name (``fork.branch.name.i`` may hold no '/', '..' or NUL)."""
        name = self.name
        problem = name_problem(name)
        if problem:
            raise PathEscapeError(f"fork.branch.name.{self.branch}={name!r} {problem}")
        return name

    def _dir(self, name: str) -> str | None:
        """``name.i``, or with several branches and no ``name.i``: ``<name>/<branch name>`` (Gobblin would fail)."""
        value = self.prop(name)
        if value or self.branches <= 1:
            return value
        shared = self.state.get_prop(name)
        return contained_join(shared, self.folder_name()) if shared else None

    def writer_dirs(self) -> tuple[str, str]:
        """``(staging dir, output dir)`` of the branch; both must be configured (the launcher derives the defaults)."""
        staging, output = self._dir("writer.staging.dir"), self._dir("writer.output.dir")
        if not staging or not output:
            key = self.key("writer.staging.dir" if not staging else "writer.output.dir")
            raise UsageError(f"{key} is not set: set it, or task.data.root.dir to derive it")
        attempt = self.attempt_folder()
        if attempt:  # each task attempt writes apart; the driver publishes the one whose state it received
            staging = contained_join(staging, ATTEMPTS_DIR, attempt, what="task attempt folder")
            output = contained_join(output, ATTEMPTS_DIR, attempt, what="task attempt folder")
        return staging, output

    def attempt_folder(self) -> str | None:
        """The name of the task attempt's own folder, ``<task id>.<attempt id>``: the task id makes it the task's
        alone (attempt ids are random, and two tasks' files in one folder would be published together)."""
        attempt = self.state.get_prop("task.attempt.id")
        if not attempt:
            return None
        task = self.state.get_prop("task.id")
        return f"{task}.{attempt}" if task else attempt

    def attempt_file_path(self) -> str:
        """Where the branch's files go under its staging and output folders: ``P(i)``, or nothing inside a task
        attempt's own folder when the task has one branch (that folder holds only this branch's files, so a
        ``P(i)`` level would be one more folder per task to make and remove, for nothing)."""
        if self.branches == 1 and self.attempt_folder():
            return ""
        return self.file_path()

    def staging_file(self, staging: str, where: str) -> str:
        """The staging file of ``where`` (a path below the branch's staging folder ``staging``). A task attempt
        stages its files beside the other attempts', each named ``<attempt folder>.<where, quoted>``: one folder
        fewer per task to make and remove (a file name too long for that keeps the folder)."""
        if self.attempt_folder():
            flat = f"{posixpath.basename(staging)}.{quote(where, safe='')}"
            if len(flat.encode("utf-8")) <= MAX_FLAT_NAME:
                return posixpath.join(posixpath.dirname(staging), flat)
        return contained_join(staging, where, what="file path")

    def file_name(self, writer_id: str, extension: str) -> str:
        """``writer.file.name[.i]``, else ``part.<writer id>.<ext>``."""
        name = self.explicit_file_name()
        if name:
            return name
        return f"part.{writer_id}.{extension}" if extension else f"part.{writer_id}"

    def explicit_file_name(self) -> str | None:
        """``writer.file.name[.i]`` when set: one file name, never a path."""
        name = self.prop("writer.file.name")
        if not name:
            return None
        problem = name_problem(name)
        if problem:
            raise PathEscapeError(f"{self.key('writer.file.name')}={name!r} {problem}")
        return name

    def final_root(self) -> str:
        """The branch's ``data.publisher.final.dir``: the folder nothing it publishes may leave."""
        root = self._dir("data.publisher.final.dir")
        if not root:
            raise UsageError(f"{self.key('data.publisher.final.dir')} is not set: name where data is published")
        return root

    def final_dir(self) -> str:
        """The publisher's destination ``F(i)`` of the branch."""
        root = self.final_root()
        if self.state.get_prop_as_bool("data.publisher.appendExtractToFinalDir", True):
            return contained_join(root, self.file_path())
        return root


def namespace_folders(namespace: str, what: str = "extract.namespace") -> list[str]:
    """The folders of a dotted namespace (``shop.eu`` → ``shop/eu``); PathEscapeError naming ``what`` when the
    namespace, or its dots made folders (``..E`` is ``//E``, an absolute path), could leave its folder."""
    problem = namespace_problem(namespace)
    if problem:
        raise PathEscapeError(f"{what}={namespace!r} {problem}")
    return relative_parts(namespace.replace(".", "/"), what)


def namespace_problem(namespace: str) -> str | None:
    """Why the dotted ``namespace`` cannot name folders below a folder, or None."""
    folders = namespace.replace(".", "/")
    problem = path_problem(namespace) or path_problem(folders)
    if problem and not path_problem(namespace):
        return f"names the folders {folders!r} (each '.' becomes a '/'), which {problem}"
    return problem


def name_problem(value: str) -> str | None:
    """Why ``value`` cannot be one file or folder name (a branch's folder, ``writer.file.name``), or None."""
    return path_problem(value, allow_slash=False) or ("is not a file or folder name" if value in ("", ".") else None)


_ENTITY_PREFIX = "source.querybased.entity."
_PER_BRANCH = re.compile(r"^(?P<base>writer\.file\.path|writer\.file\.name|fork\.branch\.name)(?:\.(?P<branch>\d+))?$")


def path_key_problems(props: Mapping[str, str]) -> list[tuple[str, str]]:
    """``(key, problem)`` for each value of ``props`` that would lead a path out of its folder: ``extract.table.name``
    and ``extract.namespace`` (also a table's own, ``source.querybased.entity.<table>.<key>``),
    ``writer.file.path[.N]`` (a leading '/' is dropped), ``writer.file.name[.N]`` and ``fork.branch.name.N``
    (one name each)."""
    found = []
    for key, value in props.items():
        if not isinstance(value, str):
            continue
        plain = key
        if key.startswith(_ENTITY_PREFIX):
            plain = next((k for k in ("extract.table.name", "extract.namespace") if key.endswith("." + k)), "")
        if plain == "extract.table.name":
            problem = path_problem(value) or (None if not value or relative_parts(value, key) else "names no folder")
        elif plain == "extract.namespace":
            problem = namespace_problem(value)
        else:
            match = _PER_BRANCH.match(key)
            if match is None or (match.group("base") == "fork.branch.name" and match.group("branch") is None):
                continue
            if match.group("base") == "writer.file.path":
                problem = path_problem(value, allow_absolute=True)
            elif match.group("base") == "writer.file.name" and not value:
                problem = None  # empty: not set
            else:
                problem = name_problem(value)
        if problem:
            found.append((key, f"{value!r} {problem}"))
    return found


def successful_branches(tasks: Iterable[TaskState]) -> Iterator[tuple[TaskState, BranchScope]]:
    """Each fork branch of each successful task, in order (with its task): what a run publishes."""
    for task in tasks:
        if task.working_state is not WorkingState.SUCCESSFUL:
            continue
        branches = task.get_prop_as_int("fork.branches", 1) or 1
        for branch in range(branches):
            yield task, BranchScope(task, branches, branch)
