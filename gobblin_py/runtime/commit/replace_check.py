"""Before a run publishes anything: no replaced final folder (``data.publisher.replace.final.dir``) is one that
another dataset or branch of the run publishes to, or holds or lies inside another's.

The publisher empties a replaced folder just before it moves a dataset's files in; a second dataset publishing
to the same folder would empty it of the first one's files, and the run would still report them committed.
"""

from __future__ import annotations

import bisect
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass

from gobblin_py.io.branch_paths import BranchScope, successful_branches
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.states import TaskState


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
    """Every (dataset, branch, folder) the run publishes to; none when no branch replaces its folder (the check has
    nothing to find, and working out ten thousand final folders costs a second and more)."""
    published: list[tuple[str, BranchScope, bool]] = []
    for urn, tasks in datasets:
        for task, scope in successful_branches(tasks):
            # the publisher's own key, read here by name: the runtime imports no connector
            published.append((urn, scope, task.get_prop_as_bool(scope.key("data.publisher.replace.final.dir"))))
    if not any(replace for _, _, replace in published):
        return []
    found: dict[tuple[str, str, str, str], _Target] = {}
    for urn, scope, replace in published:
        if not scope.prop("data.publisher.final.dir") and not scope.state.get_prop("data.publisher.final.dir"):
            continue  # not published to a folder
        fs = scope.prop("data.publisher.fs.uri") or scope.prop("writer.fs.uri") or ""
        folder = posixpath.normpath(scope.final_dir())
        name = scope.name if scope.branches > 1 else ""
        previous = found.get((urn, name, fs, folder))
        found[(urn, name, fs, folder)] = _Target(urn, name, fs, folder,
                                                 replace or (previous is not None and previous.replace))
    return list(found.values())


def _parts(folder: str) -> tuple[str, ...]:
    """A normalised folder as its components, ``/`` first when absolute: a folder's descendants sort right after it."""
    names = tuple(name for name in folder.split("/") if name)
    return ("/", *names) if folder.startswith("/") else names or (".",)


def _conflict(targets: list[_Target]) -> tuple[_Target, _Target] | None:
    """A replaced folder and another dataset's folder that equals, holds or lies inside it; None when none does.

    Sorted by (file system, components), the folders at or below a folder are one run of the list, found by
    bisection; the folders above it are looked up by each of its ancestors. A run of n datasets costs n log n,
    not n² comparisons (ten thousand datasets are ten thousand folders).
    """
    keyed = sorted((((t.fs, _parts(t.folder)), t) for t in targets), key=lambda pair: pair[0])
    keys = [key for key, _ in keyed]
    by_folder: dict[tuple[str, tuple[str, ...]], list[_Target]] = {}
    for key, target in keyed:
        by_folder.setdefault(key, []).append(target)
    for key, replaced in keyed:
        if not replaced.replace:
            continue
        fs, parts = key
        owner = (replaced.urn, replaced.branch)
        for depth in range(1, len(parts)):  # the folders that hold it
            for other in by_folder.get((fs, parts[:depth]), ()):
                if (other.urn, other.branch) != owner:
                    return replaced, other
        at = bisect.bisect_left(keys, key)  # the folder itself, then everything below it
        while at < len(keys) and keys[at][0] == fs and keys[at][1][:len(parts)] == parts:
            other = keyed[at][1]
            if (other.urn, other.branch) != owner:
                return replaced, other
            at += 1
    return None


def check_replaced_folders(datasets: Sequence[tuple[str, Sequence[TaskState]]]) -> None:
    """UsageError naming the folder and both datasets when a replaced final folder is shared (exit code 2)."""
    found = _conflict(_targets(datasets))
    if found is None:
        return
    replaced, other = found
    raise UsageError(
        f"data.publisher.replace.final.dir=true: {replaced.describe()} replaces {replaced.folder}, and "
        f"{other.describe()} publishes to {other.folder}: the one published second would empty the "
        "first's files; nothing was published (give each dataset its own folder, e.g. "
        "data.publisher.appendExtractToFinalDir=true, or replace nothing)")
