"""PostgreSQL (psycopg 3): ADBC's PostgreSQL driver, ``COPY … TO STDOUT`` parsed by Arrow, or a server-side cursor.

Every read session is one ``REPEATABLE READ, READ ONLY`` transaction, so a range's count and its rows come from
one snapshot; the session's ``TimeZone`` is UTC. Arrow types come from the result's type OIDs and modifiers.

- ``adbc`` (the default when ``adbc-driver-postgresql`` is installed): binary COPY decoded into Arrow by the
  driver; numerics arrive as text and are cast to their decimal type (exactly, or the task fails). Range bounds
  are written into the statement as typed literals, which lets the driver stream by COPY.
- ``copy``: ``COPY (SELECT …) TO STDOUT (FORMAT csv)`` read by Arrow's streaming CSV reader.
- ``cursor``: a server-side cursor and ``fetchmany``.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

import pyarrow as pa
import pyarrow.csv as pa_csv

from gobblin_py.connectors.sql.arrow_types import ColumnSpec, decimal_type
from gobblin_py.connectors.sql.dialects import adbc
from gobblin_py.connectors.sql.dialects.base import CursorSession, Dialect, Session, first_line
from gobblin_py.connectors.sql.errors import SqlConfigError, SqlSourceError
from gobblin_py.sdk.errors import GobblinPyError

ADBC_MODULE = "adbc_driver_postgresql"
_SESSION_SETTINGS = ("SET TimeZone = 'UTC'", "SET DateStyle = 'ISO, YMD'", "SET IntervalStyle = 'iso_8601'",
                     "SET standard_conforming_strings = on")
_SNAPSHOT = "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"

# type OID -> Arrow type, for the types read natively (others are selected as ::text)
_PG_TYPES: dict[int, pa.DataType] = {
    16: pa.bool_(), 17: pa.binary(), 18: pa.string(), 19: pa.string(), 20: pa.int64(), 21: pa.int16(),
    23: pa.int32(), 25: pa.string(), 26: pa.int64(), 700: pa.float32(), 701: pa.float64(), 1042: pa.string(),
    1043: pa.string(), 1082: pa.date32(), 1083: pa.time64("us"), 1114: pa.timestamp("us"),
    1184: pa.timestamp("us", tz="UTC"),
}
_PG_NUMERIC = 1700
_SCALED_DIGITS = 18  # numeric(p,s) with p at most this: its value × 10^s fits a bigint


class _CopyReader:
    """A read-only file over the chunks of a ``COPY … TO STDOUT``, for Arrow's streaming CSV reader."""

    def __init__(self, chunks: Iterator[Any], first: bytes) -> None:
        self._chunks = chunks
        self._pending = [first]
        self._size = len(first)
        self.closed = False

    def read(self, size: int = -1) -> bytes:
        while size < 0 or self._size < size:
            chunk = next(self._chunks, None)
            if chunk is None:
                break
            chunk = bytes(chunk)
            self._pending.append(chunk)
            self._size += len(chunk)
        data = b"".join(self._pending)
        if 0 <= size < len(data):
            self._pending, self._size = [data[size:]], len(data) - size
            return data[:size]
        self._pending, self._size = [], 0
        return data

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def close(self) -> None:
        self.closed = True


class PostgresDialect(Dialect):
    """PostgreSQL through psycopg 3 (catalogue, COPY, cursor) and ADBC (rows as Arrow)."""

    name = "postgresql"
    param = "%s"
    default_schema = "public"
    methods = ("adbc", "copy", "cursor")

    def _conninfo(self) -> tuple[str, dict[str, Any]]:
        cfg = self.config
        kwargs: dict[str, Any] = {"connect_timeout": max(1, int(cfg.timeout_seconds)), "application_name": "gpy"}
        conninfo = ""
        if cfg.url:
            conninfo = cfg.url[5:] if cfg.url.lower().startswith("jdbc:") else cfg.url
            conninfo = re.sub(r"//[^@/]*@", "//", conninfo, count=1)  # credentials come from the kwargs
        for key, value in (("host", cfg.host), ("port", cfg.port), ("user", cfg.username),
                           ("dbname", cfg.database), ("password", cfg.password)):
            if value:
                kwargs[key] = value
        return conninfo, kwargs

    def connect(self, read_only_snapshot: bool = True) -> Any:
        import psycopg

        conninfo, kwargs = self._conninfo()
        try:
            conn = psycopg.connect(conninfo, **kwargs)
        except psycopg.Error as exc:
            raise self._connect_error(exc) from None
        try:
            for statement in _SESSION_SETTINGS:
                conn.execute(statement)
            conn.commit()
            conn.read_only = True  # a source never writes
            if read_only_snapshot:
                conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        except psycopg.Error as exc:
            conn.close()
            raise self.translate(exc, f"cannot set up the session on {self.config.describe()}") from None
        return conn

    def _connect_error(self, exc: BaseException) -> GobblinPyError:
        text = str(exc)
        where = self.config.describe()
        if "password authentication failed" in text or "no password supplied" in text or (
            "role" in text and "does not exist" in text
        ):
            return SqlConfigError(self.config.scrub(
                f"cannot connect to {where}: authentication failed for user {self.config.username!r} "
                "(check source.conn.username and source.conn.password)"
            ))
        if "database" in text and "does not exist" in text:
            return SqlConfigError(self.config.scrub(f"cannot connect to {where}: {first_line(text)}"))
        return SqlSourceError(self.config.scrub(f"cannot connect to {where}: {first_line(text)}"))

    def translate(self, exc: BaseException, what: str) -> GobblinPyError:
        import psycopg
        from psycopg import errors

        if isinstance(exc, (errors.UndefinedTable, errors.UndefinedColumn, errors.InvalidSchemaName,
                            errors.InsufficientPrivilege)):
            return SqlConfigError(self.config.scrub(f"{what}: {first_line(str(exc))}"))
        if isinstance(exc, psycopg.OperationalError):
            return SqlSourceError(self.config.scrub(
                f"{what}: lost the connection to {self.config.describe()}: {first_line(str(exc)) or type(exc).__name__}"
            ))
        return SqlSourceError(self.config.scrub(f"{what}: {type(exc).__name__}: {first_line(str(exc))}"))

    def default_schema_of(self, conn: Any) -> str:
        row = self.query(conn, "SELECT current_schema()")
        return row[0][0] if row and row[0][0] else "public"

    def schemas(self, conn: Any) -> list[str]:
        return [r[0] for r in self.query(conn, "SELECT nspname FROM pg_catalog.pg_namespace")]

    def tables(self, conn: Any, schema: str) -> list[str]:
        return [r[0] for r in self.query(
            conn,
            "SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relkind IN ('r', 'v', 'm', 'p', 'f')",
            (schema,),
        )]

    def describe(self, conn: Any, schema: str, table: str, unbounded_numeric: pa.DataType) -> list[ColumnSpec]:
        cur = conn.cursor()
        try:
            cur.execute(f"SELECT * FROM {self.qualified(schema, table)} LIMIT 0", ())
            description = list(cur.description or [])
        finally:
            cur.close()
        return [self._column(col, unbounded_numeric) for col in description]

    def indexed_columns(self, conn: Any, schema: str, table: str) -> set[str]:
        return {r[0] for r in self.query(
            conn,
            "SELECT a.attname FROM pg_catalog.pg_index i "
            "JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid JOIN pg_catalog.pg_am am ON am.oid = ic.relam "
            "JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0] "
            "WHERE i.indrelid = %s::regclass AND am.amname = 'btree' AND i.indisvalid AND i.indpred IS NULL",
            (self.qualified(schema, table).replace("%%", "%"),),
        )}

    def _column(self, col: Any, unbounded_numeric: pa.DataType) -> ColumnSpec:
        name, oid, shown = col.name, col.type_code, col.type_display
        quoted = self.quote(name)
        if oid == _PG_NUMERIC:
            arrow = decimal_type(col.precision, col.scale, unbounded_numeric)
            if not col.precision:
                shown = f"{shown} without precision, read as source.querybased.unbounded.numeric.type={arrow}"
            if pa.types.is_string(arrow):
                return ColumnSpec(name, arrow, f"{quoted}::text AS {quoted}", shown)
            # Arrow's CSV reader has no decimal256: such tables are read by cursor
            return ColumnSpec(name, arrow, quoted, shown, copy_ok=not pa.types.is_decimal256(arrow))
        if oid in _PG_TYPES:
            # ADBC reads an oid (unsigned) as a signed int32
            return ColumnSpec(name, _PG_TYPES[oid], quoted, shown, copy_ok=oid != 17, arrow_ok=oid != 26)
        # json, jsonb, uuid, interval (ISO 8601), arrays, enums, money, ranges, …: their text form
        return ColumnSpec(name, pa.string(), f"{quoted}::text AS {quoted}", shown)

    def unavailable(self, method: str, columns: list[ColumnSpec]) -> str | None:
        if method == "adbc":
            blocked = [c.name for c in columns if not c.arrow_ok]
            return f"columns {', '.join(blocked)} would not arrive exactly" if blocked else adbc.missing(ADBC_MODULE)
        if method == "copy":
            blocked = [c.name for c in columns if not c.copy_ok]
            return f"COPY as CSV cannot carry columns {', '.join(blocked)}" if blocked else None
        return super().unavailable(method, columns)

    def open_session(self, method: str, columns: list[ColumnSpec]) -> Session:
        if method == "adbc":
            return self._adbc_session()
        session = PostgresCursorSession(self, self.connect(read_only_snapshot=True))
        session.method = method
        return session

    def _adbc_session(self) -> PostgresAdbcSession:
        import psycopg

        conninfo, kwargs = self._conninfo()
        kwargs.pop("application_name")
        try:
            conn = adbc.connect(ADBC_MODULE, psycopg.conninfo.make_conninfo(conninfo, **kwargs))
        except Exception as exc:  # noqa: BLE001 - the driver's errors become one clear line
            raise self._connect_error(exc) from None
        try:
            cur = conn.cursor()
            for statement in (*_SESSION_SETTINGS, _SNAPSHOT):
                cur.execute(statement)
            cur.close()
            conn.commit()  # the settings stay; the next transaction is the read's snapshot
        except Exception as exc:  # noqa: BLE001
            conn.close()
            raise self.translate(exc, f"cannot set up the session on {self.config.describe()}") from None
        return PostgresAdbcSession(self, conn)


class PostgresCursorSession(CursorSession):
    """psycopg: rows by ``COPY … TO STDOUT`` as CSV parsed by Arrow (``copy``), or by a server-side cursor."""

    def cursor(self) -> Any:
        return self.conn.cursor(name="gpy_extract")

    def stream(self, sql: str, params: Sequence[Any], columns: list[ColumnSpec], schema: pa.Schema,
               fetch_size: int) -> Iterator[pa.RecordBatch]:
        if self.method != "copy":
            yield from super().stream(sql, params, columns, schema, fetch_size)
            return
        cur = self.conn.cursor()
        # about fetch_size rows per batch: Arrow cuts CSV blocks by bytes, so estimate ~64 bytes a row
        block = max(64 << 10, min(fetch_size * 64, 64 << 20))
        try:
            with cur.copy(f"COPY ({sql}) TO STDOUT (FORMAT csv, FORCE_QUOTE *)", tuple(params)) as copy:
                chunks = iter(copy)
                first = next(chunks, None)
                if first is None:
                    return
                reader = pa_csv.open_csv(
                    _CopyReader(chunks, bytes(first)),
                    read_options=pa_csv.ReadOptions(column_names=[c.name for c in columns], use_threads=False,
                                                    block_size=block),
                    parse_options=pa_csv.ParseOptions(newlines_in_values=True),
                    convert_options=pa_csv.ConvertOptions(
                        column_types={c.name: c.type for c in columns}, null_values=[""], strings_can_be_null=True,
                        quoted_strings_can_be_null=False, true_values=["t"], false_values=["f"],
                    ),
                )
                for batch in reader:
                    if batch.schema != schema:
                        batch = pa.RecordBatch.from_arrays(batch.columns, schema=schema)
                    yield batch
        finally:
            try:
                cur.close()
            except Exception:  # noqa: BLE001
                pass


class PostgresAdbcSession(adbc.AdbcSession):
    """ADBC's PostgreSQL driver; parameters become literals so that the driver reads by COPY."""

    def prepare(self, sql: str, params: Sequence[Any]) -> tuple[str, None]:
        return adbc.inline(sql, params, literal), None

    def select_columns(self, columns: list[ColumnSpec]) -> list[ColumnSpec]:
        """A numeric(p,s) of at most 18 digits is selected as its value × 10^s in a bigint: the driver decodes a
        numeric into its text, value by value (the most costly column of a table), and a bigint as it is."""
        return [_scaled(spec, self.dialect.quote(spec.name)) for spec in columns]

    def batches(self, cur: Any, sql: str, params: Sequence[Any], columns: list[ColumnSpec],
                fetch_size: int) -> Iterator[pa.RecordBatch]:
        # the driver cuts its batches by bytes (16 MB unless told): about fetch_size rows of ~64 bytes instead,
        # as the COPY reader's blocks, so that the batches read ahead stay small
        hint = max(256 << 10, min(fetch_size * 64, 16 << 20))
        cur.adbc_statement.set_options(**{"adbc.postgresql.batch_size_hint_bytes": str(hint)})
        try:
            yield from super().batches(cur, sql, params, columns, fetch_size)
        except Exception as exc:
            scaled = [c for c in columns if c.convert == "scaled_decimal"]
            if not scaled or "NaN" not in str(exc):
                raise
            named = ", ".join(f"{c.name} ({c.db_type})" for c in scaled)
            raise SqlSourceError(f"column{'s' if len(scaled) > 1 else ''} {named}: cannot read its values as "
                                 f"{scaled[0].type} (a NaN, which a decimal cannot hold): "
                                 f"{first_line(str(exc))}") from None


def _scaled(spec: ColumnSpec, quoted: str) -> ColumnSpec:
    decimal = spec.type
    if (spec.convert != "plain" or spec.select != quoted or not pa.types.is_decimal128(decimal)
            or decimal.precision > _SCALED_DIGITS):
        return spec
    value = f"({quoted} * {10 ** decimal.scale})" if decimal.scale else quoted
    return replace(spec, select=f"{value}::int8 AS {quoted}", convert="scaled_decimal")


def literal(value: Any) -> str:
    """A range bound or partition value as a typed PostgreSQL literal (standard_conforming_strings is on)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"'{value!r}'::float8"
    if isinstance(value, dt.datetime):
        kind = "timestamptz" if value.tzinfo is not None else "timestamp"
        return f"'{value.isoformat(sep=' ')}'::{kind}"
    if isinstance(value, dt.date):
        return f"'{value.isoformat()}'::date"
    return "'" + str(value).replace("'", "''") + "'"
