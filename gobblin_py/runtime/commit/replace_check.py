"""Before a run publishes anything: no replaced final folder (``data.publisher.replace.final.dir``) is one that
another dataset or branch of the run publishes to, or holds or lies inside another's.

The publisher empties a replaced folder just before it moves a dataset's files in; a second dataset publishing
to the same folder would empty it of the first one's files, and the run would still report them committed.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass

from gobblin_py.io.branch_paths import BranchScope
from gobblin_py.io.contained_paths import is_within
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.states import TaskState, WorkingState


@dataclass(frozen=True)
class _Target:
    urn: str
    branch: str
    fs: str
    folder: str
    replace: bool

    def describe(self) -> str:
        return f"dataset {self.urn!r}" + (f" (branch {self.branch})" if self.branch else "")


def _targets(datasets: Sequence[tuple[str, Sequence[TaskState]]]) -> list[_Target]:
    found: dict[tuple[str, str, str, str], _Target] = {}
    for urn, tasks in datasets:
        for task in tasks:
            if task.working_state is not WorkingState.SUCCESSFUL:
                continue
            branches = task.get_prop_as_int("fork.branches", 1) or 1
            for branch in range(branches):
                scope = BranchScope(task, branches, branch)
                if not scope.prop("data.publisher.final.dir") and not task.get_prop("data.publisher.final.dir"):
                    continue  # not published to a folder
                fs = scope.prop("data.publisher.fs.uri") or scope.prop("writer.fs.uri") or ""
                folder = posixpath.normpath(scope.final_dir())
                # the publisher's own key, read here by name: the runtime imports no connector
                replace = task.get_prop_as_bool(scope.key("data.publisher.replace.final.dir"))
                name = scope.name if branches > 1 else ""
                previous = found.get((urn, name, fs, folder))
                found[(urn, name, fs, folder)] = _Target(urn, name, fs, folder,
                                                         replace or (previous is not None and previous.replace))
    return list(found.values())


def check_replaced_folders(datasets: Sequence[tuple[str, Sequence[TaskState]]]) -> None:
    """UsageError naming the folder and both datasets when a replaced final folder is shared (exit code 2)."""
    targets = _targets(datasets)
    for i, a in enumerate(targets):
        for b in targets[i + 1:]:
            if a.fs != b.fs or (a.urn, a.branch) == (b.urn, b.branch) or not (a.replace or b.replace):
                continue
            if is_within(a.folder, b.folder) or is_within(b.folder, a.folder):
                replaced, other = (a, b) if a.replace else (b, a)
                raise UsageError(
                    f"data.publisher.replace.final.dir=true: {replaced.describe()} replaces {replaced.folder}, and "
                    f"{other.describe()} publishes to {other.folder}: the one published second would empty the "
                    "first's files; nothing was published (give each dataset its own folder, e.g. "
                    "data.publisher.appendExtractToFinalDir=true, or replace nothing)")
