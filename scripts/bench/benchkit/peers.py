"""The peers' and the limit scripts' environments, and the output counts every suite checks.

- ``bare``: the libraries gpy itself builds on (pyarrow, the ADBC drivers, confluent-kafka), at the versions
  installed beside gpy, for the limit scripts;
- ``dlt``: dlt with its Parquet, filesystem and SQL extras, connectorx (its fastest SQL backend on PostgreSQL) and
  psycopg (SQLAlchemy's PostgreSQL driver, for dlt's table reflection);
- ``pyspark``: PySpark alone, at gpy's version (it finds the same Java runtime gpy does, through
  ``JAVA_HOME``); ``pyspark-connect``: the same with its Spark Connect client (grpcio, pandas …);
- ``polars``: Polars, with connectorx (its ``read_database_uri`` engine, the version dlt gets) and pyarrow at
  gpy's version;
- ``duckdb``: DuckDB, the newest release, for files; ``duckdb-scanners``: the DuckDB release whose
  ``sqlite_scanner`` and ``postgres_scanner`` extensions the package index ships (``duckdb-ext-sqlite``,
  ``duckdb-ext-postgres``), since DuckDB's own extension repository is not reachable from every machine.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from benchkit.venvs import VenvSpec, pinned

DLT_VERSION = "1.31.0"
CONNECTORX_VERSION = "0.4.6"

# numpy as gpy's environment has it: pyarrow imports it at start when it is installed (about 0.1 s of CPU), so
# without it the bare script would start quicker on account of its environment, not its code
BARE = VenvSpec("bare", (pinned("pyarrow"), pinned("numpy"), pinned("adbc-driver-manager"), pinned("adbc-driver-sqlite"),
                         pinned("adbc-driver-postgresql"), pinned("confluent-kafka")))
DLT = VenvSpec("dlt", (f"dlt[parquet,filesystem,sql-database]=={DLT_VERSION}", f"connectorx=={CONNECTORX_VERSION}",
                       pinned("pyarrow"), pinned("psycopg", "[binary]")))
PYSPARK = VenvSpec("pyspark", (pinned("pyspark"),))
PYSPARK_CONNECT = VenvSpec("pyspark-connect", (pinned("pyspark", "[connect]"),))
POLARS_VERSION = "2.1.0"
DUCKDB_VERSION = "2.0.1"
DUCKDB_SCANNERS_VERSION = "1.4.4"
POLARS = VenvSpec("polars", (f"polars=={POLARS_VERSION}", f"connectorx=={CONNECTORX_VERSION}", pinned("pyarrow")))
DUCKDB = VenvSpec("duckdb", (f"duckdb=={DUCKDB_VERSION}",))
DUCKDB_SCANNERS = VenvSpec("duckdb-scanners", (f"duckdb=={DUCKDB_SCANNERS_VERSION}",
                                               f"duckdb-ext-sqlite=={DUCKDB_SCANNERS_VERSION}.20260205",
                                               f"duckdb-ext-postgres=={DUCKDB_SCANNERS_VERSION}.20260205"))


def parquet_rows(path: Path) -> int:
    """Rows in a Parquet file, or in every visible Parquet file under a folder (0 when there is none)."""
    if path.is_file():
        return pq.ParquetFile(path).metadata.num_rows
    if not path.exists():
        return 0
    return sum(pq.ParquetFile(f).metadata.num_rows for f in path.rglob("*.parquet")
               if not f.name.startswith((".", "_")))
