"""Per-branch key names, exactly as Gobblin's ``ForkOperatorUtils`` builds them (spec §3.1).

Three different suffix rules exist and each place in Gobblin uses a specific one:

* :func:`branch_key` (``getPropertyNameForBranch(key, numBranches, branchId)``): ``key.<i>`` only when
  there is more than one branch -- writer, publisher and per-branch record counts;
* :func:`fork_key` (``getPropertyNameForBranch(key, branch)``): ``key.<i>`` whenever ``branch >= 0``
  (``-1`` = "not in a fork") -- in-fork converters (``converter.classes.0`` even with one branch) and
  in-fork row-level policies;
* :func:`state_branch_key` (``getPropertyNameForBranch(workUnitState, key)``): suffix from the state's
  ``fork.branch.id`` -- what converters use to read their per-branch settings.

:func:`path_for_branch` appends ``/<fork.branch.name.i or fork_i>`` to a path when there are several
branches, and :func:`get_branch_prop` reads a property with the :func:`branch_key` rule.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.settings import Settings, setting

# Gobblin's keys naming a fork's branches (ForkOperatorUtils)
FORK_BRANCH_NAME_KEY = "fork.branch.name"
DEFAULT_FORK_BRANCH_NAME = "fork_"
FORK_BRANCH_ID_KEY = "fork.branch.id"

__all__ = [
    "ForkSettings",
    "branch_key",
    "fork_key",
    "state_branch_key",
    "path_for_branch",
    "branch_name",
    "get_branch_prop",
    "fork_id",
    "branch_count",
    "MAX_BRANCHES",
]

MAX_BRANCHES = 64
_SUFFIXED = re.compile(r"^(?P<base>.+)\.(?P<branch>\d+)$")
_BRANCH_KEYS = ("writer.builder.class", "writer.output.format", "converter.classes", "data.publisher.final.dir",
                "writer.output.dir", "writer.staging.dir")

_INT_RE = re.compile(r"[+-]?[0-9]+")


def _check_non_negative(name: str, value: int) -> None:
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")


def branch_key(key: str, num_branches: int, branch_id: int) -> str:
    """``key`` with ``.<branch_id>`` appended only when ``num_branches > 1`` (both must be >= 0)."""
    _check_non_negative("num_branches", num_branches)
    _check_non_negative("branch_id", branch_id)
    return f"{key}.{branch_id}" if num_branches > 1 else key


def fork_key(key: str, branch: int) -> str:
    """``key`` with ``.<branch>`` appended whenever ``branch >= 0`` (``-1`` means "no fork")."""
    return f"{key}.{branch}" if branch >= 0 else key


def state_branch_key(props: Mapping[str, str], key: str) -> str:
    """``key`` suffixed with the ``fork.branch.id`` of ``props`` when that property is set and >= 0."""
    raw = props.get(FORK_BRANCH_ID_KEY)
    if raw is None:
        return key
    if _INT_RE.fullmatch(raw) is None or not -(2**31) <= int(raw) < 2**31:
        raise ConfigError(
            f"expected an integer branch id, got '{raw}'",
            path=getattr(props, "path", None),
            key=FORK_BRANCH_ID_KEY,
            hint="fork.branch.id is set by the fork; remove it from the job configuration",
        )
    return fork_key(key, int(raw))


class BranchNames(Protocol):
    """Where branch names are looked up: a mapping of properties, or a State (whose ``get`` sees its job's)."""

    def get(self, key: str, default: str, /) -> str: ...


def branch_name(props: BranchNames, branch_id: int, default: str | None = None) -> str:
    """``fork.branch.name.<branch_id>`` or ``default`` (``fork_<branch_id>`` when not given)."""
    fallback = default if default is not None else f"{DEFAULT_FORK_BRANCH_NAME}{branch_id}"
    return props.get(f"{FORK_BRANCH_NAME_KEY}.{branch_id}", fallback)


def path_for_branch(props: BranchNames, path: str, num_branches: int, branch_id: int) -> str:
    """``path/<branch name>`` when ``num_branches > 1``, else ``path`` (``ForkOperatorUtils.getPathForBranch``)."""
    _check_non_negative("num_branches", num_branches)
    _check_non_negative("branch_id", branch_id)
    if num_branches > 1:
        return f"{path}/{branch_name(props, branch_id)}"
    return path


def get_branch_prop(
    props: Mapping[str, str], key: str, num_branches: int, branch_id: int, default: str | None = None
) -> str | None:
    """The value of :func:`branch_key` ``(key, num_branches, branch_id)`` in ``props``, or ``default``."""
    return props.get(branch_key(key, num_branches, branch_id), default)


def fork_id(task_id: str, branch: int) -> str:
    """``ForkOperatorUtils.getForkId``: ``<task_id>.<branch>`` (used in metric names)."""
    return f"{task_id}.{branch}"


def branch_count(props: Mapping[str, str]) -> int:
    """How many branches a job's tasks have, as far as its configuration tells before it runs: ``fork.branches``,
    else one more than the highest branch suffix of a per-branch key, else 1 (at most :data:`MAX_BRANCHES`)."""
    raw = (props.get("fork.branches") or "").strip()
    if raw.isdigit() and 1 <= int(raw) <= MAX_BRANCHES:
        return int(raw)
    highest = -1
    for key in props:
        match = _SUFFIXED.match(key)
        if match and match.group("base") in _BRANCH_KEYS:
            highest = max(highest, int(match.group("branch")))
    return min(max(1, highest + 1), MAX_BRANCHES)


@dataclass(frozen=True)
class ForkSettings(Settings):
    """The keys of the identity fork."""

    branches: int = setting("fork.branches", default=1, minimum=1, maximum=MAX_BRANCHES,
                            doc="how many branches every record goes to")
