"""From published files to a table's layout: where the table is, its partitions, and its columns.

The table is over the branch's final folder ``F(i)`` (``data.publisher.final.dir[/<writer file path>]``), as
Gobblin registers the folder its publisher published to. A file in ``F(i)`` itself makes an unpartitioned table;
files in folders below it make one partition per folder:

- ``name=value`` folders (``writer.include.partition.in.file.names=true``, the Hive layout) give partition
  columns of those names (a column of the files of such a name is left out of the table's columns: the writer
  named the folders by it, and readers take it from the folder);
- any other folders (the time-partitioned writer's ``2015/02/01``) give one partition column,
  ``hive.partition.key.name`` (``datepartition``), valued by the folders joined with ``-`` (``2015-02-01``,
  Gobblin's ``yyyy-MM-dd-HH`` partition values), the writer's ``writer.partition.prefix`` and ``.suffix``
  folders left out (``daily/2015/02/01`` is ``2015-02-01``).

The columns are those of the files: one file's per folder (its footer or header), the folders' columns merged.
Files whose names begin with ``_`` or ``.`` are not data (Hive passes over them too).
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass

from gobblin_py.connectors.hive.registration import PartitionSpec
from gobblin_py.connectors.hive.schema import FileSchema, read_file_schema
from gobblin_py.io import fs as fsutil
from gobblin_py.io.rename_step import FsRenameStep
from gobblin_py.sdk.errors import GobblinPyError


@dataclass(frozen=True)
class Layout:
    """What the files published into one final folder make of a table."""

    row_format: str
    columns: tuple[tuple[str, str], ...]
    partition_keys: tuple[str, ...]
    partitions: tuple[PartitionSpec, ...]
    avro_schema: str | None


def location_uri(folder: str, fs_uri: str | None) -> str:
    """The URI Hive gets for ``folder`` (a local path, or a URL already): on ``fs_uri`` when given, else file://."""
    if "://" in folder:
        return folder.rstrip("/")
    base = (fs_uri or "file://").rstrip("/")
    if base == "file:":
        base = "file://"
    return base + "/" + folder.strip("/")


def is_data(path: str) -> bool:
    return not posixpath.basename(path).startswith(("_", "."))


def partition_of(folder: str, key: str, prefix: str, suffix: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(partition columns, values)`` of a folder relative to the table's (see the module)."""
    parts = [p for p in folder.split("/") if p]
    if not parts:
        return (), ()
    if all("=" in p and not p.startswith("=") for p in parts):
        pairs = [p.split("=", 1) for p in parts]
        return tuple(k.lower() for k, _ in pairs), tuple(v for _, v in pairs)
    head = [p for p in prefix.split("/") if p]
    tail = [p for p in suffix.split("/") if p]
    if head and parts[:len(head)] == head and len(parts) > len(head):
        parts = parts[len(head):]
    if tail and parts[-len(tail):] == tail and len(parts) > len(tail):
        parts = parts[:-len(tail)]
    return (key,), ("-".join(parts),)


def layout(moves: Sequence[FsRenameStep], folder: str, location: str, key: str, prefix: str = "",
           suffix: str = "", row_format: str | None = None) -> Layout:
    """The layout of the files ``moves`` publish into ``folder`` (a final folder, as the moves name it), whose
    URI for Hive is ``location``; ``row_format``: the format the files must be in (``hive.row.format``)."""
    by_folder: dict[str, list[FsRenameStep]] = {}
    for move in moves:
        if is_data(move.dst):
            relative = posixpath.relpath(posixpath.dirname(move.dst), folder)
            by_folder.setdefault("" if relative == "." else relative, []).append(move)
    schemas: list[FileSchema] = []
    keys: tuple[str, ...] | None = None
    partitions = []
    for relative, group in sorted(by_folder.items()):
        last = max(group, key=lambda m: m.dst)
        fs, path = fsutil.open_fs(last.src, last.src_fs_uri)
        schemas.append(read_file_schema(fs, path, last.src))
        names, values = partition_of(relative, key, prefix, suffix)
        if keys is not None and names != keys:
            raise GobblinPyError(f"{folder}: its files lie in folders of different shapes ({relative or 'the folder'}"
                                 f" gives partition columns {list(names)}, others {list(keys)}): a Hive table has "
                                 "one set of partition columns")
        keys = names
        if names:
            partitions.append(PartitionSpec(values, f"{location}/{relative}"))
    formats = {s.row_format for s in schemas}
    if len(formats) > 1:
        raise GobblinPyError(f"{folder}: its files are in several formats ({', '.join(sorted(formats))}); a Hive "
                             "table reads one")
    found = formats.pop()
    if row_format and row_format != found:
        raise GobblinPyError(f"hive.row.format={row_format}, but the files published to {folder} are {found}: the "
                             "table could not read them (set hive.row.format to their format, or leave it unset)")
    columns = merged_columns(schemas, folder)
    named = set(keys or ()) & {name for name, _ in columns}
    if named and keys != (key,):  # name=value folders: the column is read from the folders, as Hive reads it
        columns = tuple(c for c in columns if c[0] not in named)
    elif named:
        raise GobblinPyError(f"{folder}: partition column {key!r} is also a column of the files; Hive refuses a "
                             "table with both (set hive.partition.key.name to another name)")
    avro = next((s.avro_schema for s in reversed(schemas) if s.avro_schema), None)
    return Layout(found, columns, keys or (), tuple(partitions), avro)


def merged_columns(schemas: Sequence[FileSchema], folder: str) -> tuple[tuple[str, str], ...]:
    """The columns of every file, in the order they first appear; GobblinPyError when two files disagree on a
    column's type."""
    merged: dict[str, str] = {}
    for schema in schemas:
        for name, kind in schema.columns:
            if merged.setdefault(name, kind) != kind:
                raise GobblinPyError(f"{folder}: column {name!r} is {merged[name]} in one published file and {kind} "
                                     "in another: a Hive table column has one type")
    return tuple(merged.items())
