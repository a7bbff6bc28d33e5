"""Reading Delta tables the way other engines do: DuckDB's delta extension (offline), Polars, delta-rs itself."""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow as pa

from tests.support.environment import missing


def duckdb_rows(table: str | Path, columns: str = "*", storage: dict[str, str] | None = None) -> pa.Table:
    """The table's current rows as DuckDB's delta extension reads them (loaded from its PyPI package)."""
    import duckdb

    folder = next((Path(p) / "duckdb_ext" / "extensions" for p in sys.path
                   if (Path(p) / "duckdb_ext" / "extensions").is_dir()), None)
    if folder is None:
        missing("DuckDB's extensions (pip install duckdb-ext-delta)")
    con = duckdb.connect(config={"extension_directory": str(folder), "autoinstall_known_extensions": "false"})
    try:
        con.execute("LOAD delta")
        return con.execute(f"SELECT {columns} FROM delta_scan('{table}')").fetch_arrow_table()
    finally:
        con.close()


def polars_rows(table: str | Path, storage: dict[str, str] | None = None) -> pa.Table:
    """The table's current rows as Polars reads them."""
    import polars as pl

    return pl.read_delta(str(table), storage_options=storage).to_arrow()


def commits(table: str | Path, storage: dict[str, str] | None = None) -> list[dict]:
    """The table's commits, oldest first, as ``DESCRIBE HISTORY`` lists them."""
    from deltalake import DeltaTable

    return list(reversed(DeltaTable(str(table), storage_options=storage).history()))


def referenced_files(table: str | Path) -> set[str]:
    """The data files the table's current version holds (local paths)."""
    from deltalake import DeltaTable

    return {uri.removeprefix("file://") for uri in DeltaTable(str(table)).file_uris()}
