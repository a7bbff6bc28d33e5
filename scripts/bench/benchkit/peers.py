"""The peers' and the limit scripts' environments, and the output counts every suite checks.

- ``bare``: the libraries gpy itself builds on (pyarrow, the ADBC drivers, confluent-kafka), at the versions
  installed beside gpy, for the limit scripts;
- ``dlt``: dlt with its Parquet, filesystem and SQL extras, connectorx (its fastest SQL backend on PostgreSQL) and
  psycopg (SQLAlchemy's PostgreSQL driver, for dlt's table reflection);
- ``pyspark``: PySpark alone, at gpy's version (it finds the same Java runtime gpy does, through
  ``JAVA_HOME``).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from benchkit.venvs import VenvSpec, pinned

DLT_VERSION = "1.31.0"
CONNECTORX_VERSION = "0.4.6"

BARE = VenvSpec("bare", (pinned("pyarrow"), pinned("adbc-driver-manager"), pinned("adbc-driver-sqlite"),
                         pinned("adbc-driver-postgresql"), pinned("confluent-kafka")))
DLT = VenvSpec("dlt", (f"dlt[parquet,filesystem,sql-database]=={DLT_VERSION}", f"connectorx=={CONNECTORX_VERSION}",
                       pinned("pyarrow"), pinned("psycopg", "[binary]")))
PYSPARK = VenvSpec("pyspark", (pinned("pyspark"),))


def parquet_rows(path: Path) -> int:
    """Rows in a Parquet file, or in every visible Parquet file under a folder (0 when there is none)."""
    if path.is_file():
        return pq.ParquetFile(path).metadata.num_rows
    if not path.exists():
        return 0
    return sum(pq.ParquetFile(f).metadata.num_rows for f in path.rglob("*.parquet")
               if not f.name.startswith((".", "_")))
