"""Where a task branch writes: Gobblin's staging / output / final directory and file-name rules (§6.2, §6.5).

- writer file path ``P(i)``: ``writer.file.path[.i]``, else by ``writer.file.pathType``:
  ``NAMESPACE_TABLE`` → ``<namespace as folders>/<table>``; ``TABLENAME`` → ``<table>``; ``DEFAULT`` →
  ``<namespace as folders>/<table>/<extract id>_<full|append>`` (+ ``/<branch name>`` with several branches);
- staging file ``<writer.staging.dir[.i]>/<P(i)>/<name>``, output file ``<writer.output.dir[.i]>/<P(i)>/<name>``;
- file name ``writer.file.name[.i]`` or ``part.<writer id>.<ext>``;
- final directory ``data.publisher.final.dir[.i]`` + ``/<P(i)>`` unless ``data.publisher.appendExtractToFinalDir=false``.
"""

from __future__ import annotations

import posixpath

from gobblin_py.config.branches import branch_key, branch_name, get_branch_prop, path_for_branch
from gobblin_py.errors import UsageError
from gobblin_py.state import State

ATTEMPTS_DIR = "_attempts"
FORMAT_EXTENSIONS = {"AVRO": "avro", "PARQUET": "parquet", "PROTOBUF": "protobuf", "JSON": "json", "ORC": "orc",
                     "CSV": "csv", "TXT": "txt"}


def branch_prop(state: State, key: str, branches: int, branch: int, default: str | None = None) -> str | None:
    """A branch's value of ``key`` with Gobblin's writer/publisher suffix rule (``.i`` only with branches > 1)."""
    return get_branch_prop(state, key, branches, branch, default)


def writer_file_path(state: State, branches: int, branch: int) -> str:
    """The relative path ``P(i)`` of a branch's files under the staging, output and final directories."""
    explicit = branch_prop(state, "writer.file.path", branches, branch)
    if explicit:
        return explicit.strip("/")
    path_type = (state.get_prop("writer.file.pathType") or state.get_prop("writer.file.path.type") or "DEFAULT").upper()
    namespace = (state.get_prop("extract.namespace") or "").replace(".", "/")
    table = state.get_prop("extract.table.name") or ""
    if path_type == "TABLENAME":
        return table
    if path_type == "NAMESPACE_TABLE":
        return posixpath.join(namespace, table) if namespace else table
    if path_type != "DEFAULT":
        raise UsageError(f"writer.file.pathType={path_type}: use DEFAULT, TABLENAME or NAMESPACE_TABLE")
    kind = "full" if state.get_prop_as_bool("extract.is.full") else "append"
    path = posixpath.join(*(p for p in (namespace, table, f"{state.get_prop('extract.extract.id', '')}_{kind}") if p))
    return path_for_branch(state, path, branches, branch)


def output_format(state: State, branches: int, branch: int, default: str = "OTHER") -> tuple[str, str]:
    """``(FORMAT, extension)`` from ``writer.output.format[.i]``; for OTHER the raw text is the extension."""
    raw = branch_prop(state, "writer.output.format", branches, branch) or default
    upper = raw.strip().upper()
    if upper in FORMAT_EXTENSIONS:
        return upper, FORMAT_EXTENSIONS[upper]
    return "OTHER", raw.strip()


def _branch_dir(state: State, key: str, branches: int, branch: int) -> str | None:
    """``key.i``, or with several branches and no ``key.i``: ``<key>/<branch name>`` (Gobblin would fail)."""
    value = branch_prop(state, key, branches, branch)
    if value or branches <= 1:
        return value
    shared = state.get_prop(key)
    return posixpath.join(shared, branch_name(state, branch)) if shared else None


def writer_dirs(state: State, branches: int, branch: int) -> tuple[str, str]:
    """``(staging dir, output dir)`` of a branch; both must be configured (the launcher derives the defaults)."""
    staging = _branch_dir(state, "writer.staging.dir", branches, branch)
    output = _branch_dir(state, "writer.output.dir", branches, branch)
    for key, value in ((branch_key("writer.staging.dir", branches, branch), staging),
                       (branch_key("writer.output.dir", branches, branch), output)):
        if not value:
            raise UsageError(f"{key} is not set: set it, or task.data.root.dir to derive it")
    attempt = state.get_prop("task.attempt.id")
    if attempt:  # each task attempt writes apart; the driver publishes the one whose state it received
        staging = posixpath.join(staging, ATTEMPTS_DIR, attempt)
        output = posixpath.join(output, ATTEMPTS_DIR, attempt)
    return staging, output


def file_name(state: State, branches: int, branch: int, writer_id: str, extension: str) -> str:
    name = branch_prop(state, "writer.file.name", branches, branch)
    if name:
        return name
    return f"part.{writer_id}.{extension}" if extension else f"part.{writer_id}"


def final_dir(state: State, branches: int, branch: int) -> str:
    """The publisher's destination ``F(i)`` for a branch."""
    root = _branch_dir(state, "data.publisher.final.dir", branches, branch)
    if not root:
        raise UsageError(f"{branch_key('data.publisher.final.dir', branches, branch)} is not set: name where data is published")
    if state.get_prop_as_bool("data.publisher.appendExtractToFinalDir", True):
        return posixpath.join(root, writer_file_path(state, branches, branch))
    return root
