"""Arrow-native reads through ADBC drivers (``pip install 'gobblin_py[sql-fast]'``): the database's rows arrive
as Arrow batches, with no Python object per value.

The drivers are optional: :func:`missing` says why one cannot be used, and the dialect falls back to its
DB-API reader with a warning naming the extra to install.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa

from gobblin_py.connectors.sql.arrow_types import ColumnSpec, conform_batch
from gobblin_py.connectors.sql.dialects.base import Session
from gobblin_py.io.prefetch import prefetched

EXTRA = "pip install 'gobblin_py[sql-fast]'"


def missing(module: str) -> str | None:
    """Why the ADBC driver ``module`` cannot be imported (None when it can)."""
    try:
        importlib.import_module(module)
        importlib.import_module("adbc_driver_manager")
    except ImportError as exc:
        return f"{module} is not installed ({exc.name}); {EXTRA}"
    return None


def dbapi(module: str) -> Any:
    return importlib.import_module(f"{module}.dbapi")


class AdbcSession(Session):
    """A DB-API connection of an ADBC driver: counts by ``fetchone``, streams by ``fetch_record_batch``."""

    method = "adbc"

    def __init__(self, dialect: Any, conn: Any) -> None:
        self.dialect, self.conn = dialect, conn

    def prepare(self, sql: str, params: Sequence[Any]) -> tuple[str, Sequence[Any] | None]:
        """The statement and parameters as this driver takes them."""
        return sql, (tuple(params) or None)

    def count(self, sql: str, params: Sequence[Any]) -> int:
        statement, bound = self.prepare(sql, params)
        cur = self.conn.cursor()
        try:
            cur.execute(statement, bound)
            return int(cur.fetchone()[0])
        finally:
            cur.close()

    def batches(self, cur: Any, sql: str, params: Sequence[Any], columns: list[ColumnSpec],
                fetch_size: int) -> Iterator[pa.RecordBatch]:
        statement, bound = self.prepare(sql, params)
        cur.execute(statement, bound)
        yield from cur.fetch_record_batch()

    def stream(self, sql: str, params: Sequence[Any], columns: list[ColumnSpec], schema: pa.Schema,
               fetch_size: int) -> Iterator[pa.RecordBatch]:
        cur = self.conn.cursor()
        # the driver decodes the next batch while this one is conformed and written
        reader = prefetched(self.batches(cur, sql, params, columns, fetch_size), name="gpy-sql-read")
        try:
            for batch in reader:
                if batch.num_rows:
                    yield conform_batch(batch, columns, schema)
        finally:
            reader.close()  # the reading thread is done with the cursor before it closes
            try:
                cur.close()
            except Exception:  # noqa: BLE001 - the connection may be gone; the error that got us here matters
                pass

    def close(self) -> None:
        try:
            self.conn.rollback()
        except Exception:  # noqa: BLE001 - the server may be gone
            pass
        try:
            self.conn.close()
        except Exception:  # noqa: BLE001
            pass


_PLACEHOLDER = re.compile(r"%%|%s")


def inline(sql: str, params: Sequence[Any], literal) -> str:
    """``sql`` with each ``%s`` replaced by ``literal(param)`` and ``%%`` by ``%`` (psycopg's placeholder rules)."""
    values = iter(params)
    return _PLACEHOLDER.sub(lambda m: "%" if m.group(0) == "%%" else literal(next(values)), sql)
