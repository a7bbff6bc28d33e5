"""MySQL / MariaDB (PyMySQL, or mysqlclient): an unbuffered cursor and ``fetchmany``.

Arrow types come from ``information_schema.columns``; the session's time zone is UTC and a read is one
``REPEATABLE READ`` consistent snapshot.
"""

from __future__ import annotations

import importlib
from typing import Any

import pyarrow as pa

from gobblin_py.connectors.sql.arrow_types import ColumnSpec, decimal_type
from gobblin_py.connectors.sql.connection import DEFAULT_PORTS
from gobblin_py.connectors.sql.dialects.base import CursorSession, Dialect, Session
from gobblin_py.connectors.sql.errors import SqlConfigError, SqlSourceError
from gobblin_py.sdk.errors import GobblinPyError, UsageError

_MYSQL_TYPES: dict[str, pa.DataType] = {
    "tinyint": pa.int8(), "smallint": pa.int16(), "mediumint": pa.int32(), "int": pa.int32(),
    "integer": pa.int32(), "bigint": pa.int64(), "float": pa.float32(), "double": pa.float64(),
    "real": pa.float64(), "date": pa.date32(), "datetime": pa.timestamp("us"),
    "timestamp": pa.timestamp("us", tz="UTC"), "time": pa.duration("us"), "year": pa.int16(),
    "binary": pa.binary(), "varbinary": pa.binary(), "tinyblob": pa.binary(), "blob": pa.binary(),
    "mediumblob": pa.binary(), "longblob": pa.binary(), "bit": pa.binary(),
}


class MysqlDialect(Dialect):
    """MySQL and MariaDB through PyMySQL or mysqlclient."""

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

    def indexed_columns(self, conn: Any, schema: str, table: str) -> set[str]:
        return {r[0] for r in self.query(
            conn, "SELECT column_name FROM information_schema.statistics WHERE table_schema = %s AND table_name = %s "
                  "AND seq_in_index = 1 AND index_type = 'BTREE'", (schema, table))}

    def open_session(self, method: str, columns: list[ColumnSpec]) -> Session:
        return MysqlCursorSession(self, self.connect(read_only_snapshot=True))


class MysqlCursorSession(CursorSession):
    """An unbuffered (server-side) cursor, so a range's rows are not all held in memory."""

    dialect: MysqlDialect

    def cursor(self) -> Any:
        cursor_class = getattr(getattr(self.dialect._driver(), "cursors", None), "SSCursor", None)
        return self.conn.cursor(cursor_class) if cursor_class is not None else self.conn.cursor()
