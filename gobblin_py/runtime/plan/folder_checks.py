"""Checks across a job's folder and naming keys, made before any work (``gpy validate`` and the start of a run).

Each key may be fine on its own while two together lose data:

- a fixed ``job.id`` under exactly-once commits (two runs would share one run's folders and commit log);
- a final folder that is, lies inside or holds a task staging or output folder: each run clears its own and
  earlier runs' task folders, which would take published data with them;
- a replaced final folder (``data.publisher.replace.final.dir``) that holds the state store, or that several
  tables or branches publish to (each would empty it of what the one before published);
- two branches of one name, whose files would share one folder.

Folders are compared lexically, relative paths resolved as the runtime resolves them (from the working folder),
and only when both lie on one filesystem (local disk, or one URL's scheme and host).
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Mapping
from urllib.parse import urlsplit

from gobblin_py.io.contained_paths import is_within
from gobblin_py.sdk.branches import branch_count, branch_name
from gobblin_py.sdk.commit import EXACTLY_ONCE, SEMANTICS_KEY
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.settings import problem_at

_FINAL = re.compile(r"^data\.publisher\.final\.dir(?:\.(?P<branch>\d+))?$")
_TASK = re.compile(r"^(?:writer\.(?:staging|output)\.dir(?:\.(?P<branch>\d+))?|task\.data\.root\.dir)$")
_REPLACE = "data.publisher.replace.final.dir"


def folder_problems(props: Mapping[str, str]) -> list[ConfigError]:
    """Every problem of the job's folder and naming keys taken together."""
    problems: list[ConfigError] = []
    semantics = (props.get(SEMANTICS_KEY) or EXACTLY_ONCE).strip().upper()
    if props.get("job.id") and semantics == EXACTLY_ONCE:
        problems.append(problem_at(props, "job.id", "is set: with exactly-once commits every run needs its own id "
                                   "(job_<name>_<millis>)", f"remove job.id, or set {SEMANTICS_KEY}=AT_LEAST_ONCE"))
    problems.extend(_shared_final_dirs(props))
    problems.extend(_replaced_final_dirs(props))
    problems.extend(_duplicate_branch_names(props))
    return problems


def location(props: Mapping[str, str], key: str) -> tuple[str, str] | None:
    """``(filesystem, normalised path)`` of the folder ``key`` names, or None when it is unset or unresolved."""
    value = (props.get(key) or "").strip()
    if not value or "${" in value:
        return None
    match = re.match(r"^(?P<base>.+?)(?P<suffix>\.\d+)?$", key)
    suffix = (match.group("suffix") or "") if match else ""
    fs_keys: tuple[str, ...]
    if key.startswith("data.publisher."):
        fs_keys = (f"data.publisher.fs.uri{suffix}", "data.publisher.fs.uri", f"writer.fs.uri{suffix}", "writer.fs.uri")
    elif key.startswith("state.store."):
        fs_keys = ("state.store.fs.uri",)
    else:
        fs_keys = (f"writer.fs.uri{suffix}", "writer.fs.uri")
    fs_uri = next((props[k] for k in fs_keys if props.get(k)), None)
    if "://" not in value and fs_uri and not fs_uri.startswith("file:"):
        value = fs_uri.rstrip("/") + "/" + value.lstrip("/")
    if "://" not in value:
        return "file", os.path.abspath(value)
    parts = urlsplit(value)
    if parts.scheme in ("file", "local"):
        return "file", os.path.abspath(parts.path or "/")
    return f"{parts.scheme}://{parts.netloc}", posixpath.normpath("/" + parts.path.lstrip("/"))


def overlap(a: tuple[str, str] | None, b: tuple[str, str] | None) -> str | None:
    """How folder ``a`` relates to folder ``b`` ("is", "lies inside", "holds"), or None when apart."""
    if a is None or b is None or a[0] != b[0]:
        return None
    if a[1] == b[1]:
        return "is"
    if is_within(b[1], a[1]):
        return "lies inside"
    return "holds" if is_within(a[1], b[1]) else None


def _shared_final_dirs(props: Mapping[str, str]) -> list[ConfigError]:
    problems = []
    for final in sorted(k for k in props if _FINAL.match(k)):
        for task in sorted(k for k in props if _TASK.match(k)):
            how = overlap(location(props, final), location(props, task))
            if how:
                problems.append(problem_at(
                    props, final, f"{props[final]!r} {how} {task}={props[task]!r}: each run clears task folders, "
                    "its own and earlier runs', and would delete published data with them",
                    f"publish to a folder apart from {task}"))
    return problems


def _replaces(props: Mapping[str, str], final_key: str) -> bool:
    """Whether the branch (or, unsuffixed, any branch) publishing to ``final_key`` replaces its folder."""
    branch = _FINAL.match(final_key).group("branch")  # type: ignore[union-attr]
    if branch:
        values = [props.get(f"{_REPLACE}.{branch}") or props.get(_REPLACE) or ""]
    else:
        values = [v or "" for k, v in props.items() if k == _REPLACE or k.startswith(_REPLACE + ".")]
    return any(v.strip().lower() == "true" for v in values)


def _replaced_final_dirs(props: Mapping[str, str]) -> list[ConfigError]:
    problems = []
    finals = sorted(k for k in props if _FINAL.match(k) and _replaces(props, k))
    for final in finals:
        how = overlap(location(props, final), location(props, "state.store.dir"))
        if how in ("is", "holds"):
            problems.append(problem_at(props, _REPLACE, f"true empties {final}={props[final]!r}, which {how} "
                                       f"state.store.dir={props['state.store.dir']!r}",
                                       "keep the state store apart from the final folder"))
    if not finals or (props.get("data.publisher.appendExtractToFinalDir") or "true").strip().lower() != "false":
        return problems
    tables = [t.strip() for t in (props.get("source.entities") or props.get("source.entity") or "").split(",")
              if t.strip()]
    if len(tables) > 1:
        problems.append(problem_at(
            props, _REPLACE, f"true with data.publisher.appendExtractToFinalDir=false publishes every table of "
            f"source.entities ({', '.join(tables)}) to one folder {props[finals[0]]!r}, and each table's publish "
            "would empty it of the tables published before", "set data.publisher.appendExtractToFinalDir=true, or "
            "replace nothing, or run one job per table"))
    explicit = sorted(k for k in props if _FINAL.match(k) and _FINAL.match(k).group("branch"))  # type: ignore[union-attr]
    for i, a in enumerate(explicit):
        for b in explicit[i + 1:]:
            how = overlap(location(props, a), location(props, b))
            if how and (_replaces(props, a) or _replaces(props, b)):
                problems.append(problem_at(props, _REPLACE, f"true empties a final folder another branch publishes "
                                           f"to: {a}={props[a]!r} {how} {b}={props[b]!r}",
                                           "give each branch a folder apart"))
    return problems


def _duplicate_branch_names(props: Mapping[str, str]) -> list[ConfigError]:
    branches = branch_count(props)
    if branches < 2:
        return []
    first: dict[str, int] = {}
    problems = []
    for branch in range(branches):
        name = branch_name(props, branch)
        if name in first:
            other = first[name]
            key = f"fork.branch.name.{branch}" if props.get(f"fork.branch.name.{branch}") is not None \
                else f"fork.branch.name.{other}"
            problems.append(problem_at(props, key, f"branches {other} and {branch} are both named {name!r}, and "
                                       "would write to one folder", "give each branch its own name (by default "
                                       "fork_<branch>)"))
        else:
            first[name] = branch
    return problems
