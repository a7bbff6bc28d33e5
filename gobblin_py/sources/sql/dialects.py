"""Database dialects: connecting, finding tables and columns, Arrow types, and streaming rows as batches.

- **SQLite** (stdlib ``sqlite3``): opened read-only (``mode=ro``); Arrow types from the declared column types;
  rows by ``fetchmany``.
- **PostgreSQL** (psycopg 3): one ``REPEATABLE READ, READ ONLY`` transaction per task, so the count and the
  rows come from one snapshot; session ``TimeZone=UTC``; rows by ``COPY (SELECT …) TO STDOUT (FORMAT csv)``
  parsed by Arrow's CSV reader (the default, ``source.querybased.fetch.method=copy``) or by a server-side
  cursor and ``fetchmany`` (``cursor``). Arrow types from the result's type OIDs and type modifiers.
- **MySQL / MariaDB** (PyMySQL or mysqlclient, when installed): unbuffered cursor and ``fetchmany``; Arrow
  types from ``information_schema.columns``. Tested against MariaDB when ``mariadbd`` and PyMySQL are installed.

Errors are translated into :class:`SqlSourceError` (exit code 1: the server or the data) or
:class:`SqlConfigError` (exit code 2: wrong credentials, a missing table or column), their text scrubbed of
the password.
"""

from __future__ import annotations

import datetime as dt
import importlib
import re
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import pyarrow as pa
import pyarrow.csv as pa_csv

from gobblin_py.errors import GobblinPyError, UsageError
from gobblin_py.sources.sql.connection import DEFAULT_PORTS, ConnectionConfig


class SqlSourceError(GobblinPyError):
    """The database failed or returned what cannot be read (exit code 1)."""


class SqlConfigError(UsageError):
    """The job names a database, user, table or column that is not there, or a wrong password (exit code 2)."""


@dataclass
class ColumnSpec:
    """One output column: its name, Arrow type, the SQL that selects it and how its values become Arrow."""

    name: str
    type: pa.DataType
    select: str
    db_type: str = ""
    convert: str = "plain"  # plain | bool_from_int | text_timestamp | text_date | number_decimal
    copy_ok: bool = True


def parse_arrow_type(text: str, key: str) -> pa.DataType:
    """``decimal128(38,9)``, ``decimal256(76,20)``, ``float64`` or ``string``."""
    value = text.strip().lower().replace(" ", "")
    match = re.fullmatch(r"decimal(128|256)?\((\d+),(\d+)\)", value)
    if match:
        precision, scale = int(match.group(2)), int(match.group(3))
        if match.group(1) == "256" or precision > 38:
            return pa.decimal256(precision, scale)
        return pa.decimal128(precision, scale)
    if value in ("float64", "double"):
        return pa.float64()
    if value in ("string", "text"):
        return pa.string()
    raise UsageError(f"{key}={text}: use decimal128(p,s), decimal256(p,s), float64 or string")


def decimal_type(precision: int | None, scale: int | None, unbounded: pa.DataType) -> pa.DataType:
    if precision is None or precision <= 0:
        return unbounded
    scale = scale or 0
    return pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(min(precision, 76), scale)


def rows_to_batch(rows: Sequence[Sequence[Any]], columns: Sequence[ColumnSpec], schema: pa.Schema) -> pa.RecordBatch:
    """A record batch from DB-API rows, column by column with the columns' declared Arrow types."""
    if not rows:
        return pa.RecordBatch.from_pylist([], schema=schema)
    arrays = []
    for spec, values in zip(columns, zip(*rows)):
        try:
            arrays.append(_column_array(values, spec))
        except (pa.ArrowException, TypeError, ValueError, OverflowError) as exc:
            sample = next((v for v in values if v is not None), None)
            raise SqlSourceError(
                f"column {spec.name} ({spec.db_type or spec.type}): cannot read its values as {spec.type} "
                f"(e.g. {sample!r:.60}): {exc}"
            ) from None
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _column_array(values: Sequence[Any], spec: ColumnSpec) -> pa.Array:
    if spec.convert == "plain":
        return pa.array(values, type=spec.type)
    if spec.convert == "bool_from_int":
        return pa.array(values, type=pa.int64()).cast(pa.bool_())
    if spec.convert in ("text_timestamp", "text_date"):
        return pa.array(values, type=pa.string()).cast(spec.type)
    if spec.convert == "number_decimal":  # SQLite keeps NUMERIC values as integers or doubles
        array = pa.array(values)
        if pa.types.is_floating(array.type):
            import pyarrow.compute as pc

            array = pc.round(array, ndigits=spec.type.scale)
        return array.cast(spec.type)
    raise ValueError(f"unknown conversion {spec.convert}")



def fetch_batches(cur: Any, sql: str, params: Sequence[Any], columns: list[ColumnSpec], schema: pa.Schema,
                  fetch_size: int) -> Iterator[pa.RecordBatch]:
    """Run ``sql`` on a DB-API cursor and stream its rows as Arrow batches of ``fetch_size`` rows; closes it."""
    try:
        cur.execute(sql, tuple(params))
        while True:
            rows = cur.fetchmany(fetch_size)
            if not rows:
                break
            yield rows_to_batch(rows, columns, schema)
    finally:
        try:
            cur.close()
        except Exception:  # noqa: BLE001 - the connection may be gone; the error that got us here matters
            pass


class Dialect:
    """What differs between databases. One instance per connection config; ``connect()`` opens a connection."""

    name = ""
    param = "?"
    default_schema = ""

    def __init__(self, config: ConnectionConfig) -> None:
        self.config = config

    # -- identifiers
    def quote(self, identifier: str) -> str:
        quoted = '"' + identifier.replace('"', '""') + '"'
        return quoted.replace("%", "%%") if self.param == "%s" else quoted

    def qualified(self, schema: str, table: str) -> str:
        return f"{self.quote(schema)}.{self.quote(table)}"

    # -- connections and errors
    def connect(self, read_only_snapshot: bool = True) -> Any:
        raise NotImplementedError

    def translate(self, exc: BaseException, what: str) -> GobblinPyError:
        """A user-facing error for a driver exception raised while doing ``what``; password scrubbed."""
        return SqlSourceError(self.config.scrub(f"{what}: {type(exc).__name__}: {exc}".strip()))

    # -- catalogue
    def schemas(self, conn: Any) -> list[str]:
        raise NotImplementedError

    def tables(self, conn: Any, schema: str) -> list[str]:
        raise NotImplementedError

    def resolve_table(self, conn: Any, schema: str | None, table: str) -> tuple[str, str]:
        """``(schema, table)`` as the database spells them (matched case-insensitively when not exact)."""
        schema = schema or self.default_schema_of(conn)
        known_schemas = self.schemas(conn)
        if schema not in known_schemas:
            folded = [s for s in known_schemas if s.lower() == schema.lower()]
            if len(folded) != 1:
                raise SqlConfigError(
                    f"no schema {schema!r} in {self.config.describe()} (source.querybased.schema); "
                    f"it has {', '.join(sorted(known_schemas)[:20]) or 'none'}"
                )
            schema = folded[0]
        names = self.tables(conn, schema)
        if table in names:
            return schema, table
        folded = [n for n in names if n.lower() == table.lower()]
        if len(folded) == 1:
            return schema, folded[0]
        listing = ", ".join(sorted(names)[:20]) + (" …" if len(names) > 20 else "")
        raise SqlConfigError(
            f"no table {table!r} in schema {schema!r} of {self.config.describe()}; "
            f"tables there: {listing or 'none'}"
        )

    def default_schema_of(self, conn: Any) -> str:
        return self.default_schema

    def describe(self, conn: Any, schema: str, table: str, unbounded_numeric: pa.DataType) -> list[ColumnSpec]:
        raise NotImplementedError

    # -- reading
    def query(self, conn: Any, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        cur = conn.cursor()
        try:
            cur.execute(sql, tuple(params))
            return cur.fetchall()
        finally:
            cur.close()

    def stream(self, conn: Any, sql: str, params: Sequence[Any], columns: list[ColumnSpec], schema: pa.Schema,
               fetch_size: int, method: str) -> Iterator[pa.RecordBatch]:
        cur = conn.cursor()
        yield from fetch_batches(cur, sql, params, columns, schema, fetch_size)

    def close(self, conn: Any) -> None:
        try:
            conn.close()
        except Exception:  # noqa: BLE001 - closing a dead connection must not hide the real error
            pass


# ------------------------------------------------------------------------------------------------ SQLite


class SqliteDialect(Dialect):
    name = "sqlite"
    param = "?"
    default_schema = "main"

    def connect(self, read_only_snapshot: bool = True) -> sqlite3.Connection:
        path = self.config.sqlite_path()
        import os

        if not os.path.isfile(path):
            raise SqlConfigError(f"no SQLite database file {path} (source.conn.database)")
        try:
            conn = sqlite3.connect(f"file:{quote(path)}?mode=ro", uri=True, timeout=self.config.timeout_seconds,
                                   isolation_level=None, check_same_thread=False)
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.Error as exc:
            raise SqlConfigError(f"cannot open SQLite database {path}: {exc}") from None
        return conn

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

    def describe(self, conn: sqlite3.Connection, schema: str, table: str, unbounded_numeric: pa.DataType) -> list[ColumnSpec]:
        rows = conn.execute(f"PRAGMA {self.quote(schema)}.table_info({self.quote(table)})").fetchall()
        return [self._column(name, declared or "", unbounded_numeric) for _, name, declared, *_ in rows]

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
            return ColumnSpec(name, decimal_type(int(match.group(1)), int(match.group(2) or 0), unbounded_numeric),
                              select, declared, "number_decimal")
        return ColumnSpec(name, pa.float64(), select, declared)  # NUMERIC affinity without precision


# ------------------------------------------------------------------------------------------------ PostgreSQL

# type OID -> Arrow type, for the types read natively (others are selected as ::text)
_PG_TYPES: dict[int, pa.DataType] = {
    16: pa.bool_(), 17: pa.binary(), 18: pa.string(), 19: pa.string(), 20: pa.int64(), 21: pa.int16(),
    23: pa.int32(), 25: pa.string(), 26: pa.int64(), 700: pa.float32(), 701: pa.float64(), 1042: pa.string(),
    1043: pa.string(), 1082: pa.date32(), 1083: pa.time64("us"), 1114: pa.timestamp("us"),
    1184: pa.timestamp("us", tz="UTC"),
}
_PG_NUMERIC = 1700


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
    name = "postgresql"
    param = "%s"
    default_schema = "public"

    def connect(self, read_only_snapshot: bool = True) -> Any:
        import psycopg

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
        try:
            conn = psycopg.connect(conninfo, **kwargs)
        except psycopg.Error as exc:
            raise self._connect_error(exc) from None
        try:
            conn.execute("SET TimeZone = 'UTC'")
            conn.execute("SET DateStyle = 'ISO, YMD'")
            conn.execute("SET IntervalStyle = 'iso_8601'")
            conn.commit()
            conn.read_only = True  # a source never writes
            if read_only_snapshot:
                conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        except psycopg.Error as exc:
            conn.close()
            raise self.translate(exc, f"cannot set up the session on {cfg.describe()}") from None
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
            return SqlConfigError(self.config.scrub(f"cannot connect to {where}: {_first_line(text)}"))
        return SqlSourceError(self.config.scrub(f"cannot connect to {where}: {_first_line(text)}"))

    def translate(self, exc: BaseException, what: str) -> GobblinPyError:
        import psycopg
        from psycopg import errors

        if isinstance(exc, (errors.UndefinedTable, errors.UndefinedColumn, errors.InvalidSchemaName,
                            errors.InsufficientPrivilege)):
            return SqlConfigError(self.config.scrub(f"{what}: {_first_line(str(exc))}"))
        if isinstance(exc, psycopg.OperationalError):
            return SqlSourceError(self.config.scrub(
                f"{what}: lost the connection to {self.config.describe()}: {_first_line(str(exc)) or type(exc).__name__}"
            ))
        return SqlSourceError(self.config.scrub(f"{what}: {type(exc).__name__}: {_first_line(str(exc))}"))

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
            return ColumnSpec(name, _PG_TYPES[oid], quoted, shown, copy_ok=oid != 17)
        # json, jsonb, uuid, interval (ISO 8601), arrays, enums, money, ranges, …: their text form
        return ColumnSpec(name, pa.string(), f"{quoted}::text AS {quoted}", shown)

    def stream(self, conn: Any, sql: str, params: Sequence[Any], columns: list[ColumnSpec], schema: pa.Schema,
               fetch_size: int, method: str) -> Iterator[pa.RecordBatch]:
        if method == "copy" and all(c.copy_ok for c in columns):
            yield from self._stream_copy(conn, sql, params, columns, schema, fetch_size)
            return
        cur = conn.cursor(name="gpy_extract")
        cur.itersize = fetch_size
        yield from fetch_batches(cur, sql, params, columns, schema, fetch_size)

    def _stream_copy(self, conn: Any, sql: str, params: Sequence[Any], columns: list[ColumnSpec],
                     schema: pa.Schema, fetch_size: int) -> Iterator[pa.RecordBatch]:
        cur = conn.cursor()
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


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


# ------------------------------------------------------------------------------------------------ MySQL


_MYSQL_TYPES: dict[str, pa.DataType] = {
    "tinyint": pa.int8(), "smallint": pa.int16(), "mediumint": pa.int32(), "int": pa.int32(),
    "integer": pa.int32(), "bigint": pa.int64(), "float": pa.float32(), "double": pa.float64(),
    "real": pa.float64(), "date": pa.date32(), "datetime": pa.timestamp("us"),
    "timestamp": pa.timestamp("us", tz="UTC"), "time": pa.duration("us"), "year": pa.int16(),
    "binary": pa.binary(), "varbinary": pa.binary(), "tinyblob": pa.binary(), "blob": pa.binary(),
    "mediumblob": pa.binary(), "longblob": pa.binary(), "bit": pa.binary(),
}


class MysqlDialect(Dialect):
    name = "mysql"
    param = "%s"

    def quote(self, identifier: str) -> str:
        return ("`" + identifier.replace("`", "``") + "`").replace("%", "%%")

    def _driver(self) -> Any:
        for module in ("pymysql", "MySQLdb"):
            try:
                return importlib.import_module(module)
            except ImportError:
                continue
        raise UsageError("source.conn.driver=mysql needs PyMySQL (pip install pymysql) or mysqlclient")

    def connect(self, read_only_snapshot: bool = True) -> Any:
        driver = self._driver()
        cfg = self.config
        kwargs: dict[str, Any] = {"host": cfg.host or "localhost", "port": cfg.port or DEFAULT_PORTS["mysql"],
                                  "user": cfg.username or "", "password": cfg.password or "",
                                  "connect_timeout": int(cfg.timeout_seconds), "charset": "utf8mb4"}
        if cfg.database:
            kwargs["database" if driver.__name__ == "pymysql" else "db"] = cfg.database
        try:
            conn = driver.connect(**kwargs)
            cur = conn.cursor()
            cur.execute("SET time_zone = '+00:00'")
            if read_only_snapshot:
                cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY")
            cur.close()
        except driver.Error as exc:
            text = str(exc)
            if "Access denied" in text:
                raise SqlConfigError(cfg.scrub(
                    f"cannot connect to {cfg.describe()}: authentication failed for user {cfg.username!r} "
                    "(check source.conn.username and source.conn.password)"
                )) from None
            raise SqlSourceError(cfg.scrub(f"cannot connect to {cfg.describe()}: {text}")) from None
        return conn

    def translate(self, exc: BaseException, what: str) -> GobblinPyError:
        text = str(exc)
        if "doesn't exist" in text or "Unknown column" in text:
            return SqlConfigError(self.config.scrub(f"{what}: {text}"))
        return super().translate(exc, what)

    def default_schema_of(self, conn: Any) -> str:
        row = self.query(conn, "SELECT DATABASE()")
        if not row or not row[0][0]:
            raise SqlConfigError("no database selected: set source.querybased.schema or source.conn.database")
        return row[0][0]

    def schemas(self, conn: Any) -> list[str]:
        return [r[0] for r in self.query(conn, "SELECT schema_name FROM information_schema.schemata")]

    def tables(self, conn: Any, schema: str) -> list[str]:
        return [r[0] for r in self.query(
            conn, "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (schema,))]

    def describe(self, conn: Any, schema: str, table: str, unbounded_numeric: pa.DataType) -> list[ColumnSpec]:
        rows = self.query(
            conn,
            "SELECT column_name, data_type, numeric_precision, numeric_scale, column_type "
            "FROM information_schema.columns WHERE table_schema = %s AND table_name = %s ORDER BY ordinal_position",
            (schema, table),
        )
        specs = []
        for name, data_type, precision, scale, column_type in rows:
            kind = str(data_type).lower()
            quoted = self.quote(name)
            if kind in ("decimal", "numeric"):
                arrow = decimal_type(precision, scale, unbounded_numeric)
            elif kind == "tinyint" and str(column_type).lower().startswith("tinyint(1)"):
                arrow = pa.bool_()
            elif kind == "bigint" and "unsigned" in str(column_type).lower():
                arrow = pa.uint64()
            else:
                arrow = _MYSQL_TYPES.get(kind, pa.string())
            convert = "bool_from_int" if pa.types.is_boolean(arrow) else "plain"
            specs.append(ColumnSpec(name, arrow, quoted, str(column_type), convert))
        return specs

    def stream(self, conn: Any, sql: str, params: Sequence[Any], columns: list[ColumnSpec], schema: pa.Schema,
               fetch_size: int, method: str) -> Iterator[pa.RecordBatch]:
        driver = self._driver()
        cursor_class = getattr(getattr(driver, "cursors", None), "SSCursor", None)
        cur = conn.cursor(cursor_class) if cursor_class is not None else conn.cursor()
        yield from fetch_batches(cur, sql, params, columns, schema, fetch_size)


DIALECTS: dict[str, type[Dialect]] = {"sqlite": SqliteDialect, "postgresql": PostgresDialect, "mysql": MysqlDialect}


def dialect_for(config: ConnectionConfig) -> Dialect:
    return DIALECTS[config.driver](config)


def jsonable(value: Any) -> Any:
    """A partition-column value as JSON can hold it (times as ISO text)."""
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, (int, float, str)) or value is None:
        return value
    return str(value)
