"""The files under an Iceberg table's location that none of its snapshots or metadata references (orphans: the
files of expired snapshots, of a crashed writer's unfinished commit), as Iceberg's ``remove_orphan_files``
finds them; pyiceberg has no such action. Only tables on local disk are listed here.

A file younger than the retention is never an orphan: a writer's commit may be about to reference it (gpy's
publisher moves a run's files into the table's ``data`` folder before its commit).
"""

from __future__ import annotations

import os
from typing import Any


def _local(path: str) -> str | None:
    if path.startswith("file:"):
        path = path[len("file:"):]
        path = "/" + path.lstrip("/")
    elif "://" in path:
        return None
    return os.path.normpath(path)


def referenced(table: Any) -> set[str]:
    """Every file the table's metadata reaches: data and delete files and manifests of every snapshot kept, the
    manifest lists, and the current and earlier metadata files (local paths)."""
    paths = set(table.inspect.all_files().column("file_path").to_pylist())
    paths |= set(table.inspect.all_manifests().column("path").to_pylist())
    paths |= {s.manifest_list for s in table.snapshots() if s.manifest_list}
    paths |= {entry.metadata_file for entry in table.metadata.metadata_log}
    paths.add(table.metadata_location)
    return {p for p in (_local(str(path)) for path in paths) if p is not None}


def orphan_files(table: Any, cutoff: float) -> list[str] | None:
    """The table's files not :func:`referenced` and last modified before ``cutoff`` (seconds since the epoch),
    sorted; None when the table is not on local disk."""
    root = _local(str(table.location()))
    if root is None:
        return None
    keep = referenced(table)
    found: list[str] = []
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            if path not in keep and os.path.getmtime(path) < cutoff:
                found.append(path)
    return sorted(found)
