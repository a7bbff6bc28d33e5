"""Reading Iceberg tables the way other engines do: pyiceberg's scan, and DuckDB's iceberg extension (offline)."""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow as pa

from tests.support.environment import missing


def catalog(state_dir: Path, warehouse: Path):
    """The embedded catalog a job with these folders uses (named gpy, SQLite in the state store folder)."""
    from pyiceberg.catalog import load_catalog

    return load_catalog("gpy", type="sql", uri=f"sqlite:///{state_dir}/iceberg_catalog.db",
                        warehouse=f"file://{warehouse}")


def duckdb_connection():
    """A DuckDB connection with the iceberg extension loaded from its PyPI package (no download)."""
    import duckdb

    folder = next((Path(p) / "duckdb_ext" / "extensions" for p in sys.path
                   if (Path(p) / "duckdb_ext" / "extensions").is_dir()), None)
    if folder is None:
        missing("DuckDB's extensions (pip install duckdb-ext-iceberg duckdb-ext-avro duckdb-ext-delta)")
    con = duckdb.connect(config={"extension_directory": str(folder), "autoinstall_known_extensions": "false"})
    con.execute("LOAD iceberg")
    return con


def duckdb_rows(metadata_location: str, columns: str = "*") -> pa.Table:
    """The table's current rows as DuckDB reads them from its metadata file."""
    con = duckdb_connection()
    try:
        return con.execute(f"SELECT {columns} FROM iceberg_scan('{metadata_location}')").fetch_arrow_table()
    finally:
        con.close()


def referenced_files(table) -> set[str]:
    """The data files the table's current snapshot holds (paths without the file:// scheme)."""
    return {task.file.file_path.removeprefix("file://") for task in table.scan().plan_files()}
