"""SQLite: the standard library's ``sqlite3`` for the catalogue, ADBC's SQLite driver (or ``fetchmany``) for rows.

The database is opened read-only (``mode=ro``). Arrow types come from the declared column types, with SQLite's
affinity rules. ADBC's driver types each column by the values of its first batch, and a later batch of other
types fails; so every read starts with one row of typed literals (dropped before the batch leaves), which fixes
each column's type whatever the first rows hold (NULLs, integers in a decimal column).
"""

from __future__ import annotations

import datetime as dt
import math
import os
import re
import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import quote

import pyarrow as pa

from gobblin_py.connectors.sql.arrow_types import ColumnSpec, decimal_type
from gobblin_py.connectors.sql.dialects import adbc
from gobblin_py.connectors.sql.dialects.base import CursorSession, Dialect, Session
from gobblin_py.connectors.sql.errors import SqlConfigError, SqlSourceError
from gobblin_py.sdk.errors import GobblinPyError

ADBC_MODULE = "adbc_driver_sqlite"
_DOUBLE_EXACT_DIGITS = 15  # decimals this wide survive a trip through a double
_MISMATCH = re.compile(r"Type mismatch in column (\d+)")


def _sentinel(spec: ColumnSpec) -> str:
    """A literal of the type ADBC must give the column."""
    if spec.convert == "number_decimal" or pa.types.is_floating(spec.type):
        return "0.5"
    if spec.convert == "bool_from_int" or pa.types.is_integer(spec.type):
        return "0"
    if pa.types.is_binary(spec.type):
        return "x''"
    return "''"


class SqliteAdbcSession(adbc.AdbcSession):
    """ADBC's SQLite driver; the typed first row is added to each query and removed from the first batch.
    Parameters become literals (:func:`inline`)."""

    def prepare(self, sql: str, params: Sequence[Any]) -> tuple[str, None]:
        return inline(sql, params), None

    def batches(self, cur: Any, sql: str, params: Sequence[Any], columns: list[ColumnSpec],
                fetch_size: int) -> Iterator[pa.RecordBatch]:
        typed = ", ".join(f"{_sentinel(c)} AS {self.dialect.quote(c.name)}" for c in columns)
        cur.adbc_statement.set_options(**{"adbc.sqlite.query.batch_rows": str(fetch_size)})
        cur.execute(inline(f"SELECT {typed} UNION ALL SELECT * FROM ({sql})", params))
        reader = cur.fetch_record_batch()
        first = True
        try:
            for batch in reader:
                if first:
                    batch, first = batch.slice(1), False
                yield batch
        except OSError as exc:
            match = _MISMATCH.search(str(exc))
            if not match or int(match.group(1)) >= len(columns):
                raise
            spec = columns[int(match.group(1))]
            raise SqlSourceError(f"column {spec.name} ({spec.db_type or spec.type}): cannot read its values as "
                                 f"{spec.type} (the table holds values of another type): {exc}") from None


# a quoted string or identifier (skipped), or a placeholder
_TOKEN = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|\?")


def inline(sql: str, params: Sequence[Any]) -> str:
    """``sql`` with each ``?`` outside quotes replaced by ``literal(param)``."""
    values = iter(params)
    return _TOKEN.sub(lambda m: literal(next(values)) if m.group(0) == "?" else m.group(0), sql)


def literal(value: Any) -> str:
    """A range bound or partition value as an SQLite literal (as the sqlite3 module would bind it)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "NULL"
        return repr(value) if math.isfinite(value) else ("9e999" if value > 0 else "-9e999")
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"X'{bytes(value).hex()}'"
    if isinstance(value, dt.datetime):
        value = value.isoformat(" ")
    elif isinstance(value, dt.date):
        value = value.isoformat()
    return "'" + str(value).replace("'", "''") + "'"


class SqliteDialect(Dialect):
    """SQLite files (standard library), read-only."""

    name = "sqlite"
    param = "?"
    default_schema = "main"
    methods = ("adbc", "cursor")

    def _uri(self) -> str:
        path = self.config.sqlite_path()
        if not os.path.isfile(path):
            raise SqlConfigError(f"no SQLite database file {path} (source.conn.database)")
        return f"file:{quote(path)}?mode=ro"

    def connect(self, read_only_snapshot: bool = True) -> sqlite3.Connection:
        uri = self._uri()
        try:
            conn = sqlite3.connect(uri, uri=True, timeout=self.config.timeout_seconds, isolation_level=None,
                                   check_same_thread=False)
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.Error as exc:
            raise SqlConfigError(f"cannot open SQLite database {self.config.sqlite_path()}: {exc}") from None
        return conn

    def unavailable(self, method: str, columns: list[ColumnSpec]) -> str | None:
        if method == "adbc":
            blocked = [c.name for c in columns if not c.arrow_ok]
            if blocked:
                return f"columns {', '.join(blocked)} would not arrive exactly"
            return adbc.missing(ADBC_MODULE)
        return super().unavailable(method, columns)

    def open_session(self, method: str, columns: list[ColumnSpec]) -> Session:
        if method == "adbc":
            conn = adbc.connect(ADBC_MODULE, self._uri())
            # as the sqlite3 path's timeout: wait for a writer's lock instead of failing at once ("database is locked")
            with conn.cursor() as cur:
                cur.execute(f"PRAGMA busy_timeout = {int(self.config.timeout_seconds * 1000)}")
                cur.fetchall()
            return SqliteAdbcSession(self, conn)
        return CursorSession(self, self.connect())

    def translate(self, exc: BaseException, what: str) -> GobblinPyError:
        text = str(exc)
        if isinstance(exc, sqlite3.OperationalError) and ("no such table" in text or "no such column" in text):
            return SqlConfigError(f"{what}: {text}")
        return super().translate(exc, what)

    def schemas(self, conn: sqlite3.Connection) -> list[str]:
        return [row[1] for row in conn.execute("PRAGMA database_list").fetchall()]

    def tables(self, conn: sqlite3.Connection, schema: str) -> list[str]:
        master = "sqlite_temp_master" if schema == "temp" else f"{self.quote(schema)}.sqlite_master"
        return [row[0] for row in conn.execute(f"SELECT name FROM {master} WHERE type IN ('table', 'view')")]

    def describe(self, conn: sqlite3.Connection, schema: str, table: str,
                 unbounded_numeric: pa.DataType) -> list[ColumnSpec]:
        rows = conn.execute(f"PRAGMA {self.quote(schema)}.table_info({self.quote(table)})").fetchall()
        return [self._column(name, declared or "", unbounded_numeric) for _, name, declared, *_ in rows]

    def indexed_columns(self, conn: sqlite3.Connection, schema: str, table: str) -> set[str]:
        quoted = self.quote(schema)
        columns = conn.execute(f"PRAGMA {quoted}.table_info({self.quote(table)})").fetchall()
        keys = [row for row in columns if row[5]]
        # an INTEGER PRIMARY KEY is the rowid itself: the table is ordered by it
        found = {keys[0][1]} if len(keys) == 1 and (keys[0][2] or "").upper() == "INTEGER" else set()
        for _, index, _unique, _origin, partial in conn.execute(f"PRAGMA {quoted}.index_list({self.quote(table)})"):
            if partial:
                continue  # covers some rows only
            first = conn.execute(f"PRAGMA {quoted}.index_info({self.quote(index)})").fetchone()
            if first is not None and first[2] is not None:  # None: an index on an expression
                found.add(first[2])
        return found

    def _column(self, name: str, declared: str, unbounded_numeric: pa.DataType) -> ColumnSpec:
        upper = declared.upper()
        select = self.quote(name)
        base = upper.split("(")[0].strip()
        if "BOOL" in upper:
            return ColumnSpec(name, pa.bool_(), select, declared, "bool_from_int")
        if base in ("DATE",):
            return ColumnSpec(name, pa.date32(), select, declared, "text_date")
        if "TIMESTAMPTZ" in upper or "WITH TIME ZONE" in upper:
            return ColumnSpec(name, pa.timestamp("us", tz="UTC"), select, declared, "text_timestamp")
        if "TIMESTAMP" in upper or "DATETIME" in upper:
            return ColumnSpec(name, pa.timestamp("us"), select, declared, "text_timestamp")
        if "INT" in upper:  # SQLite's affinity rules, in their order
            return ColumnSpec(name, pa.int64(), select, declared)
        if any(t in upper for t in ("CHAR", "CLOB", "TEXT")):
            return ColumnSpec(name, pa.string(), select, declared)
        if not upper:  # no declared type: any value, read as its text
            return ColumnSpec(name, pa.string(), f"CAST({select} AS TEXT) AS {select}", "(no type)")
        if "BLOB" in upper:
            return ColumnSpec(name, pa.binary(), select, declared)
        if any(t in upper for t in ("REAL", "FLOA", "DOUB")):
            return ColumnSpec(name, pa.float64(), select, declared)
        match = re.search(r"\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)", upper)
        if match:
            precision = int(match.group(1))
            return ColumnSpec(name, decimal_type(precision, int(match.group(2) or 0), unbounded_numeric),
                              select, declared, "number_decimal", arrow_ok=precision <= _DOUBLE_EXACT_DIGITS)
        return ColumnSpec(name, pa.float64(), select, declared)  # NUMERIC affinity without precision
