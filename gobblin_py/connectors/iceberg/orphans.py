"""The files under an Iceberg table's location that none of its snapshots or metadata references (orphans: the
files of expired snapshots, of a crashed writer's unfinished commit, of a killed rewrite), as Iceberg's
``remove_orphan_files`` finds them; pyiceberg has no such action. The table's location is listed through gpy's
filesystems (fsspec with the job's ``fs.*`` keys): local disk and object stores (``s3://``, …) alike.

A file younger than the retention is never an orphan: a writer's commit may be about to reference it (gpy's
publisher moves a run's files into the table's ``data`` folder before its commit). A file whose age the store
does not tell is kept.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from gobblin_py.io import fs as fsutil


def _url(path: str) -> str:
    """A path of the table's metadata as gpy's filesystems open it: ``file:/x`` (a Hive Metastore's spelling) as
    ``file:///x``."""
    if path.startswith("file:") and not path.startswith("file://"):
        return "file://" + path.removeprefix("file:")
    return path


def referenced(table: Any) -> set[str]:
    """Every file the table's metadata reaches, as URLs: data and delete files and manifests of every snapshot
    kept, the manifest lists, the statistics and partition statistics files (Puffin, written by Spark or Trino),
    and the current and earlier metadata files."""
    paths = set(table.inspect.all_files().column("file_path").to_pylist())
    paths |= set(table.inspect.all_manifests().column("path").to_pylist())
    paths |= {s.manifest_list for s in table.snapshots() if s.manifest_list}
    paths |= {f.statistics_path for f in [*table.metadata.statistics, *table.metadata.partition_statistics]}
    paths |= {entry.metadata_file for entry in table.metadata.metadata_log}
    paths.add(table.metadata_location)
    return {_url(str(p)) for p in paths}


def _modified(info: dict[str, Any]) -> float | None:
    """When a listed file was last written, seconds since the epoch, as its filesystem says it (local ``mtime``,
    S3 ``LastModified``, GCS ``updated``, Azure ``last_modified``); None when it does not."""
    for key in ("mtime", "LastModified", "last_modified", "updated", "modified", "created"):
        value = info.get(key)
        if isinstance(value, (int, float)):
            return float(value)
        if isinstance(value, datetime):
            return value.timestamp()
        if isinstance(value, str) and value:
            try:
                return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
            except ValueError:
                return None
    return None


class Orphans:
    """The orphans of a table (see the module), on its filesystem."""

    def __init__(self, table: Any, cutoff: float) -> None:
        """The table's files not :func:`referenced` and last modified before ``cutoff`` (seconds since the
        epoch)."""
        self.fs, root = fsutil.open_fs(_url(str(table.location())))
        keep = {self.fs._strip_protocol(url) for url in referenced(table)}
        self.paths: list[str] = []
        inside = self.fs._strip_protocol(root).rstrip("/") + "/"
        for path, info in sorted(self.fs.find(root, detail=True).items()):
            name = self.fs._strip_protocol(path)
            # only below the table's folder: never a sibling whose name starts as the table's (orders_v2)
            if info.get("type", "file") != "file" or not name.startswith(inside) or name in keep:
                continue
            modified = _modified(info)
            if modified is not None and modified < cutoff:
                self.paths.append(path)
        self.protocol = self.fs.protocol if isinstance(self.fs.protocol, str) else self.fs.protocol[0]

    def names(self) -> list[str]:
        """The orphans as messages name them: a local path, else a URL."""
        if fsutil.is_local(self.fs):
            return list(self.paths)
        return [f"{self.protocol}://{p}" for p in self.paths]

    def delete(self) -> None:
        if not self.paths:
            return
        if fsutil.is_object_store(self.fs):
            self.fs.rm(self.paths)  # batched: one request per thousand keys on S3
        else:
            for path in self.paths:
                fsutil.remove(self.fs, path)
