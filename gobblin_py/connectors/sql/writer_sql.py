"""The database side of Gobblin's JDBC writer and publisher: keys, connections and the SQL per database.

``writer.destination.type`` picks the SQL: ``POSTGRES`` (psycopg), ``SQLITE`` (gpy's, standard library) and
``MYSQL`` (PyMySQL or mysqlclient). Tables are ``<jdbc.publisher.database_name>.<table>`` (the schema in
PostgreSQL, the database in MySQL; SQLite has one, ``main``: the name is not used there). The password is read
from the job's properties when a connection opens and is never written anywhere else.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from typing import Any

from gobblin_py.connectors.sql.connection import ConnectionConfig, parse_url
from gobblin_py.connectors.sql.settings import ConnectionSettings
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.errors import GobblinPyError, UsageError
from gobblin_py.sdk.settings import Scope, Settings, setting

DESTINATIONS = ("POSTGRES", "SQLITE", "MYSQL", "TERADATA")
MARKER_TABLE = "gpy_commits"


@dataclass(frozen=True)
class JdbcSettings(Settings):
    """The keys of the JDBC writer and publisher (Gobblin's spellings, underscores included; per branch)."""

    url: str = setting("jdbc.publisher.url", required=True, scope=Scope.BRANCH,
                       doc="the database: jdbc:postgresql://host:port/db, jdbc:sqlite:/path/file.db, jdbc:mysql://…")
    driver: str | None = setting("jdbc.publisher.driver", scope=Scope.BRANCH, doc="JDBC driver class (informational)")
    username: str | None = setting("jdbc.publisher.username", scope=Scope.BRANCH, doc="user")
    password: str | None = setting("jdbc.publisher.password", scope=Scope.BRANCH, secret=True,
                                   doc="password (used to connect, never written anywhere)")
    database: str | None = setting("jdbc.publisher.database_name", scope=Scope.BRANCH,
                                   doc="schema (PostgreSQL) or database (MySQL) of the tables; not used by SQLite")
    table: str = setting("jdbc.publisher.table_name", required=True, scope=Scope.BRANCH,
                         doc="the final table (it must exist); different for each branch")
    replace: bool = setting("jdbc.publisher.replace_table", default=False, scope=Scope.BRANCH,
                            doc="empty the final table in the publishing transaction before inserting")
    encrypt_key_loc: str | None = setting("jdbc.publisher.encrypt_key_loc", scope=Scope.BRANCH,
                                          doc="the master password file of an ENC(…) jdbc.publisher.password "
                                              "(else encrypt.key.loc; docs: secrets)")
    timeout: str | None = setting("jdbc.publisher.timeout", scope=Scope.BRANCH, doc="accepted, unused (as in Gobblin)")
    destination: str = setting("writer.destination.type", required=True, choices=DESTINATIONS, scope=Scope.BRANCH,
                               doc="the database's SQL: POSTGRES, SQLITE, MYSQL (TERADATA is not supported)")
    staging_table: str | None = setting("writer.staging.table", scope=Scope.BRANCH,
                                        doc="not supported: gpy makes a staging table per task")
    truncate_staging: bool = setting("writer.truncate.staging.table", default=False, scope=Scope.BRANCH,
                                     doc="not supported (there is no shared staging table)")
    overwrite: bool = setting("allow.jdbc.record.overwrite", default=False,
                              doc="MySQL: REPLACE instead of INSERT (a row with the same key replaces the old)")

    def check(self) -> list[ConfigError]:
        problems = []
        if self.destination == "TERADATA":
            problems.append(ConfigError("TERADATA is not supported by gpy", key="writer.destination.type",
                                        hint="use POSTGRES, SQLITE or MYSQL"))
        if self.staging_table:
            problems.append(ConfigError("is not supported: gpy writes each task into a staging table of its own",
                                        key="writer.staging.table", hint="remove it (gpy needs CREATE TABLE rights)"))
        if self.overwrite and self.destination != "MYSQL":
            problems.append(ConfigError("replacing records is supported for MYSQL only (as in Gobblin)",
                                        key="allow.jdbc.record.overwrite"))
        for key, name in (("jdbc.publisher.table_name", self.table), ("jdbc.publisher.database_name", self.database)):
            if name and "\x00" in name:
                problems.append(ConfigError(f"{name!r} holds a NUL byte", key=key, hint="no table or schema is so named"))
        missing = self._missing_sqlite_file()
        if missing:
            problems.append(ConfigError(f"no SQLite database file {missing}", key="jdbc.publisher.url",
                                        hint="create the database and its final table first (gpy never creates it)"))
        return problems

    def _missing_sqlite_file(self) -> str | None:
        """The SQLite database file the URL names, when it does not exist (opening it would create it empty)."""
        try:
            driver, parts = parse_url(self.url)
        except UsageError:
            return None  # the URL's own problem is reported when the writer connects
        if driver != "sqlite" or not parts.get("database"):
            return None
        path = ConnectionConfig(driver, database=parts["database"]).sqlite_path()
        return None if os.path.isfile(path) else path


@dataclass
class Target:
    """Where a branch publishes: the connection (no password kept) and the final table."""

    destination: str
    url: str
    username: str | None
    database: str | None
    table: str
    password_key: str

    @classmethod
    def of(cls, settings: JdbcSettings, password_key: str) -> Target:
        return cls(settings.destination, settings.url, settings.username, settings.database, settings.table, password_key)

    def describe(self) -> str:
        return f"{self.url} table {self.table}"

    def dialect(self, props: Any) -> JdbcDialect:
        password = props.get(self.password_key)
        connection = ConnectionSettings.load({"source.conn.url": self.url, "source.conn.username": self.username or "",
                                              "source.conn.password": password or ""})
        config = ConnectionConfig.from_settings(connection)
        expected = {"POSTGRES": "postgresql", "SQLITE": "sqlite", "MYSQL": "mysql"}[self.destination]
        if config.driver != expected:
            raise UsageError(f"jdbc.publisher.url={self.url} is a {config.driver} URL but writer.destination.type="
                             f"{self.destination}")
        return {"postgresql": PostgresWriting, "sqlite": SqliteWriting, "mysql": MysqlWriting}[config.driver](
            config, self.database)


class JdbcDialect:
    """SQL of one database for writing: quoting, connecting, staging tables, the commit marker."""

    param = "%s"
    quote_char = '"'

    def __init__(self, config: ConnectionConfig, database: str | None) -> None:
        self.config = config
        self.database = database

    def quote(self, name: str) -> str:
        q = self.quote_char
        return q + name.replace(q, q + q) + q

    def table(self, name: str) -> str:
        return f"{self.quote(self.database)}.{self.quote(name)}" if self.database else self.quote(name)

    def connect(self) -> Any:
        raise NotImplementedError

    def error(self, exc: BaseException, what: str) -> GobblinPyError:
        return GobblinPyError(self.config.scrub(f"{what} ({self.config.describe()}): {type(exc).__name__}: {exc}"))

    def columns(self, conn: Any, table: str) -> list[tuple[str, str]]:
        """``(name, lower-case type)`` of a table's columns, in order; empty when it does not exist."""
        raise NotImplementedError

    def create_like(self, conn: Any, new: str, like: str) -> None:
        conn.cursor().execute(f"CREATE TABLE {self.table(new)} (LIKE {self.table(like)})")

    def insert_sql(self, table: str, columns: list[str], overwrite: bool = False) -> str:
        marks = ", ".join([self.param] * len(columns))
        return f"INSERT INTO {self.table(table)} ({', '.join(self.quote(c) for c in columns)}) VALUES ({marks})"

    def copy_sql(self, final: str, staging: str, overwrite: bool = False) -> str:
        return f"INSERT INTO {self.table(final)} SELECT * FROM {self.table(staging)}"

    def marker_ddl(self) -> str:
        return (f"CREATE TABLE IF NOT EXISTS {self.table(MARKER_TABLE)} (job_id VARCHAR(255) NOT NULL, "
                "dataset_urn VARCHAR(255) NOT NULL, target VARCHAR(255) NOT NULL, committed_at VARCHAR(40) NOT NULL, "
                "PRIMARY KEY (job_id, dataset_urn, target))")

    def begin(self, conn: Any) -> None:
        """Start the publishing transaction."""


class PostgresWriting(JdbcDialect):
    def connect(self) -> Any:
        import psycopg

        cfg = self.config
        kwargs: dict[str, Any] = {"connect_timeout": max(1, int(cfg.timeout_seconds)), "application_name": "gpy"}
        for key, value in (("host", cfg.host), ("port", cfg.port), ("user", cfg.username), ("dbname", cfg.database),
                           ("password", cfg.password)):
            if value:
                kwargs[key] = value
        try:
            conn = psycopg.connect(**kwargs)
            conn.execute("SET TimeZone = 'UTC'")
            conn.commit()
        except psycopg.Error as exc:
            raise self.error(exc, "cannot connect") from None
        return conn

    def columns(self, conn: Any, table: str) -> list[tuple[str, str]]:
        cur = conn.execute(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = %s "
            "AND table_schema = COALESCE(%s, current_schema()) ORDER BY ordinal_position", (table, self.database))
        return [(name, str(kind).lower()) for name, kind in cur.fetchall()]


class SqliteWriting(JdbcDialect):
    param = "?"

    def table(self, name: str) -> str:
        return f"main.{self.quote(name)}"

    def connect(self) -> Any:
        import os

        path = self.config.sqlite_path()
        if not os.path.isfile(path):
            raise UsageError(f"jdbc.publisher.url: no SQLite database file {path}")
        # autocommit mode: transactions are begun explicitly; a long busy timeout lets parallel tasks take turns
        return sqlite3.connect(path, timeout=600, isolation_level=None, check_same_thread=False)

    def columns(self, conn: Any, table: str) -> list[tuple[str, str]]:
        rows = conn.execute(f"PRAGMA main.table_info({self.quote(table)})").fetchall()
        return [(row[1], str(row[2]).lower()) for row in rows]

    def create_like(self, conn: Any, new: str, like: str) -> None:
        conn.execute(f"CREATE TABLE {self.table(new)} AS SELECT * FROM {self.table(like)} WHERE 0")

    def begin(self, conn: Any) -> None:
        conn.execute("BEGIN IMMEDIATE")


class MysqlWriting(JdbcDialect):
    quote_char = "`"

    def connect(self) -> Any:
        from gobblin_py.connectors.sql.dialects import MysqlDialect

        driver = MysqlDialect(self.config)._driver()
        cfg = self.config
        try:
            conn = driver.connect(host=cfg.host or "localhost", port=cfg.port or 3306, user=cfg.username or "",
                                  password=cfg.password or "", database=cfg.database, charset="utf8mb4",
                                  autocommit=False)
            conn.cursor().execute("SET time_zone = '+00:00'")
        except driver.Error as exc:
            raise self.error(exc, "cannot connect") from None
        return conn

    def columns(self, conn: Any, table: str) -> list[tuple[str, str]]:
        cur = conn.cursor()
        cur.execute("SELECT column_name, data_type FROM information_schema.columns WHERE table_name = %s "
                    "AND table_schema = COALESCE(%s, DATABASE()) ORDER BY ordinal_position", (table, self.database))
        return [(name, str(kind).lower()) for name, kind in cur.fetchall()]

    def create_like(self, conn: Any, new: str, like: str) -> None:
        conn.cursor().execute(f"CREATE TABLE {self.table(new)} LIKE {self.table(like)}")

    def insert_sql(self, table: str, columns: list[str], overwrite: bool = False) -> str:
        sql = super().insert_sql(table, columns)
        return "REPLACE" + sql[len("INSERT"):] if overwrite else sql

    def copy_sql(self, final: str, staging: str, overwrite: bool = False) -> str:
        sql = super().copy_sql(final, staging)
        return "REPLACE" + sql[len("INSERT"):] if overwrite else sql


def execute(conn: Any, sql: str, params: tuple = ()) -> Any:
    cur = conn.cursor()
    cur.execute(sql, params)
    return cur
