"""Arrow-native reads through ADBC drivers (``pip install 'gobblin_py[sql-fast]'``): the database's rows arrive
as Arrow batches, with no Python object per value.

The drivers are optional: :func:`missing` says why one cannot be used, and the dialect falls back to its
DB-API reader with a warning naming the extra to install.

A driver is used through ``adbc_driver_manager``'s own handles (:class:`Connection`), not its DB-API module:
that module imports ``pyarrow.dataset``, which imports pandas (half a second of CPU and some 50 MB for every
run that reads a table). For the same reason no parameter goes through ``pa.array``: the dialects write range
bounds into the statement as literals (:func:`inline`).
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


class Cursor:
    """One statement of a :class:`Connection`: ``execute``, then its rows (``fetchone``/``fetchall``) or its
    Arrow stream (``fetch_record_batch``); ``adbc_statement`` takes the driver's statement options."""

    def __init__(self, conn: Any) -> None:
        manager = importlib.import_module("adbc_driver_manager")
        self.adbc_statement = manager.AdbcStatement(conn)
        self._reader: pa.RecordBatchReader | None = None

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> Cursor:
        if params:
            raise ValueError("ADBC statements take no parameters here: write them into the SQL (inline)")
        self._release()
        self.adbc_statement.set_sql_query(sql)
        handle, _rows = self.adbc_statement.execute_query()
        self._reader = pa.RecordBatchReader.from_stream(handle)
        return self

    def fetch_record_batch(self) -> pa.RecordBatchReader:
        if self._reader is None:
            raise ValueError("fetch_record_batch() before execute()")
        return self._reader

    def fetchall(self) -> list[tuple]:
        table = self.fetch_record_batch().read_all()
        self._release()
        columns = [column.to_pylist() for column in table.columns]
        return list(zip(*columns, strict=True)) if columns else []

    def fetchone(self) -> tuple | None:
        rows = self.fetchall()
        return rows[0] if rows else None

    def _release(self) -> None:
        if self._reader is not None:
            reader, self._reader = self._reader, None
            reader.close()

    def close(self) -> None:
        try:
            self._release()
        finally:
            self.adbc_statement.close()

    def __enter__(self) -> Cursor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Connection:
    """An ADBC driver's database and connection, in a transaction (autocommit off, as DB-API's)."""

    def __init__(self, module: str, uri: str) -> None:
        manager = importlib.import_module("adbc_driver_manager")
        self._db = importlib.import_module(module).connect(uri)
        try:
            self._conn = manager.AdbcConnection(self._db)
        except BaseException:
            self._db.close()
            raise
        try:
            self._conn.set_autocommit(False)
        except BaseException:
            self.close()
            raise

    def cursor(self) -> Cursor:
        return Cursor(self._conn)

    def commit(self) -> None:
        self._conn.commit()

    def rollback(self) -> None:
        self._conn.rollback()

    def close(self) -> None:
        try:
            self._conn.close()
        finally:
            self._db.close()


def connect(module: str, uri: str) -> Connection:
    """A connection of the ADBC driver ``module`` (``adbc_driver_postgresql``, ``adbc_driver_sqlite``)."""
    return Connection(module, uri)


class AdbcSession(Session):
    """A DB-API connection of an ADBC driver: counts by ``fetchone``, streams by ``fetch_record_batch``."""

    method = "adbc"

    def __init__(self, dialect: Any, conn: Any) -> None:
        self.dialect, self.conn = dialect, conn

    def prepare(self, sql: str, params: Sequence[Any]) -> tuple[str, Sequence[Any] | None]:
        """The statement as this driver takes it, its parameters written in as literals."""
        raise NotImplementedError

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
