"""What every database dialect shares: identifiers, the catalogue lookup, and reading through a DB-API cursor.

A dialect opens *sessions*: a connection with the two things an extractor does on it, count a range's rows and
stream them as Arrow batches. :class:`CursorSession` does both through the DB-API (rows become Arrow one value
at a time: the portable, slow path); a dialect adds faster sessions where its database allows (PostgreSQL's
COPY, ADBC's Arrow-native drivers).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa

from gobblin_py.connectors.sql.arrow_types import ColumnSpec, fetch_batches
from gobblin_py.connectors.sql.connection import ConnectionConfig
from gobblin_py.connectors.sql.errors import SqlConfigError, SqlSourceError
from gobblin_py.sdk.errors import GobblinPyError
from gobblin_py.sdk.logs import get_logger

log = get_logger(__name__)


class Session:
    """An open connection for one extraction: counts and streams ranges, then is closed."""

    dialect: Dialect
    method = ""

    def select_columns(self, columns: list[ColumnSpec]) -> list[ColumnSpec]:
        """The columns as this session selects them (the same Arrow types; a faster form where it has one)."""
        return columns

    def count(self, sql: str, params: Sequence[Any]) -> int:
        raise NotImplementedError

    def stream(self, sql: str, params: Sequence[Any], columns: list[ColumnSpec], schema: pa.Schema,
               fetch_size: int) -> Iterator[pa.RecordBatch]:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class CursorSession(Session):
    """Rows through a DB-API cursor and ``fetchmany``, made into Arrow batches value by value."""

    method = "cursor"

    def __init__(self, dialect: Dialect, conn: Any) -> None:
        self.dialect, self.conn = dialect, conn

    def count(self, sql: str, params: Sequence[Any]) -> int:
        return int(self.dialect.query(self.conn, sql, params)[0][0])

    def cursor(self) -> Any:
        return self.conn.cursor()

    def stream(self, sql: str, params: Sequence[Any], columns: list[ColumnSpec], schema: pa.Schema,
               fetch_size: int) -> Iterator[pa.RecordBatch]:
        yield from fetch_batches(self.cursor(), sql, params, columns, schema, fetch_size)

    def close(self) -> None:
        try:
            self.conn.rollback()  # read only: nothing to keep
        except Exception:  # noqa: BLE001 - the server may be gone
            pass
        self.dialect.close(self.conn)


class Dialect:
    """What differs between databases. One instance per connection config; ``connect()`` opens a connection."""

    name = ""
    param = "?"
    default_schema = ""
    methods: tuple[str, ...] = ("cursor",)  # fastest first; "auto" takes the first that can read the columns

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

    def close(self, conn: Any) -> None:
        try:
            conn.close()
        except Exception:  # noqa: BLE001 - closing a dead connection must not hide the real error
            pass

    # -- sessions
    def session(self, requested: str, columns: list[ColumnSpec]) -> Session:
        """A session reading with ``requested`` (auto: the fastest available that reads every column exactly)."""
        method = self.resolve_method(requested, columns)
        return self.open_session(method, columns)

    def resolve_method(self, requested: str, columns: list[ColumnSpec]) -> str:
        candidates = self.methods if requested == "auto" else (requested,)
        for method in candidates:
            reason = self.unavailable(method, columns)
            if reason is None:
                return method
            if requested != "auto":
                fallback = next(m for m in self.methods if self.unavailable(m, columns) is None)
                log.warning("sql_fetch_method_fallback", requested=requested, used=fallback, reason=reason,
                            key="source.querybased.fetch.method")
                return fallback
        return "cursor"

    def unavailable(self, method: str, columns: list[ColumnSpec]) -> str | None:
        """Why ``method`` cannot read these columns here (None: it can)."""
        return None if method == "cursor" else f"{self.name} has no {method} reader"

    def open_session(self, method: str, columns: list[ColumnSpec]) -> Session:
        return CursorSession(self, self.connect(read_only_snapshot=True))

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

    def indexed_columns(self, conn: Any, schema: str, table: str) -> set[str]:
        """Columns that lead an ordered index over every row, whose ``MIN``/``MAX`` the database reads from the
        index's ends (none known: planning reads them in one scan with the counts)."""
        return set()

    def query(self, conn: Any, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        cur = conn.cursor()
        try:
            cur.execute(sql, tuple(params))
            return cur.fetchall()
        finally:
            cur.close()


def first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""
