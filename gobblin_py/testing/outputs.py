"""Reading back what a job or a writer produced, and checking that every record arrived exactly once.

Files are read by their names: ``.parquet``, ``.avro``, ``.orc``, ``.json`` / ``.jsonl`` and ``.csv`` (each also
gzipped, ``….gz``). Hidden files and folders (``.…``, ``_…``: Hadoop's markers and temporary files) are skipped,
as gpy's file source skips them.
"""

from __future__ import annotations

import gzip
import io
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

READABLE = (".parquet", ".avro", ".orc", ".json", ".jsonl", ".csv")


def data_files(root: Path | str) -> list[Path]:
    """Every readable data file under ``root``, in path order."""
    root = Path(root)
    if not root.exists():
        return []
    found = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        if any(part.startswith((".", "_")) for part in path.relative_to(root).parts):
            continue
        name = path.name[:-3] if path.name.endswith(".gz") else path.name
        if name.endswith(READABLE):
            found.append(path)
    return found


def _format(path: Path) -> str:
    name = path.name[:-3] if path.name.endswith(".gz") else path.name
    for ext in READABLE:
        if name.endswith(ext):
            return ext.lstrip(".")
    raise ValueError(f"{path}: cannot tell the format from the name")


def read_file(path: Path | str, schema: pa.Schema | None = None) -> pa.Table:
    """One data file as a table (``schema``: the types to read CSV and JSON columns as)."""
    path = Path(path)
    fmt = _format(path)
    raw = path.read_bytes()
    if path.name.endswith(".gz"):
        raw = gzip.decompress(raw)
    if fmt == "parquet":
        import pyarrow.parquet as pq

        return pq.read_table(io.BytesIO(raw))
    if fmt == "orc":
        import pyarrow.orc as orc

        return orc.read_table(io.BytesIO(raw))
    if fmt == "avro":
        import fastavro

        records = list(fastavro.reader(io.BytesIO(raw)))
        return pa.Table.from_pylist(records, schema=schema) if schema is not None else pa.Table.from_pylist(records)
    if fmt in ("json", "jsonl"):
        import pyarrow.json as pj

        options = pj.ParseOptions(explicit_schema=schema) if schema is not None else None
        return pj.read_json(io.BytesIO(raw), parse_options=options) if raw.strip() else pa.table({})
    import pyarrow.csv as pcsv

    convert = pcsv.ConvertOptions(column_types=schema, strings_can_be_null=True, quoted_strings_can_be_null=False) \
        if schema is not None else None
    return pcsv.read_csv(io.BytesIO(raw), convert_options=convert)


def read_files(paths: Iterable[Path | str], schema: pa.Schema | None = None) -> pa.Table:
    """Several data files as one table (columns unified by name)."""
    tables = [read_file(p, schema) for p in paths]
    tables = [t for t in tables if t.num_columns]
    if not tables:
        return pa.table({})
    return pa.concat_tables(tables, promote_options="permissive")


def read_tree(root: Path | str, schema: pa.Schema | None = None) -> pa.Table:
    """Every data file under ``root`` as one table."""
    return read_files(data_files(root), schema)


def keys_of(table: pa.Table, key_columns: Sequence[str]) -> list[Any]:
    """The key of each row: the value of the one key column, or a tuple of several."""
    if table.num_rows == 0:
        return []
    missing = [c for c in key_columns if c not in table.column_names]
    if missing:
        raise AssertionError(f"the published rows have no column {missing} (columns: {table.column_names})")
    columns = [table.column(c).to_pylist() for c in key_columns]
    return columns[0] if len(columns) == 1 else list(zip(*columns, strict=True))


def keys_under(root: Path | str, key_columns: Sequence[str]) -> list[Any]:
    """The key of every row of every data file under ``root`` (files may differ in their other columns)."""
    keys: list[Any] = []
    for path in data_files(root):
        keys.extend(keys_of(read_file(path), key_columns))
    return keys


def exactly_once(published: Iterable[Hashable], expected: Iterable[Hashable], allow_more: bool = False) -> None:
    """Assert every expected key was published exactly once, and nothing else (unless ``allow_more``)."""
    counts = Counter(published)
    wanted = Counter(expected)
    twice = sorted((k for k, n in counts.items() if n > 1), key=repr)
    assert not twice, f"{len(twice)} record(s) published more than once, e.g. {twice[:5]}"
    missing = sorted((k for k in wanted if k not in counts), key=repr)
    assert not missing, f"{len(missing)} record(s) never published, e.g. {missing[:5]}"
    extra = sorted((k for k in counts if k not in wanted), key=repr)
    assert allow_more or not extra, f"{len(extra)} record(s) published that nobody made, e.g. {extra[:5]}"


def rows(table: pa.Table | pa.RecordBatch, order_by: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The rows as dicts, sorted by ``order_by`` (or by their text when none is given)."""
    found = table.to_pylist()
    if order_by:
        return sorted(found, key=lambda r: tuple(repr(r.get(c)) for c in order_by))
    return sorted(found, key=repr)
