"""Retention of a Gobblin MySQL state store (``state.store.type=mysql``): the rows of Gobblin's
``MysqlDatasetStateStore`` table (``state.store.db.table``, ``gobblin_job_state``: ``store_name`` the job,
``table_name`` ``<urn>-<job id>.jst`` or ``<urn>-current.jst``, ``modified_time``, ``state``) are the versions,
timestamped by ``modified_time``; a selected row is deleted by its key. Each dataset's ``current`` row and its
newest run (by the job id's sequence, as Gobblin finds the latest state) are never deleted.

gpy's own runs keep their state in files; this cleans a store Gobblin wrote. Passwords are read plain:
``ENC(…)`` (Gobblin's encryption with the ``encrypt.key.loc`` master key) is refused by name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from gobblin_py.connectors.retention.settings import DB_PASSWORD_KEY, DB_TABLE_KEY, DB_URL_KEY, CleanerSettings
from gobblin_py.io.crash_points import phase
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.errors import StateStoreError, UsageError
from gobblin_py.store.retention import DELETE_PHASE, Policy, Version
from gobblin_py.store.store import CURRENT, TABLE_NAME_RE

_URL = re.compile(r"^jdbc:(?:mysql|mariadb)://(?P<host>[^/:?]+)(?::(?P<port>\d+))?/(?P<db>[^/?]+)(?:\?.*)?$")
_IDENTIFIER = re.compile(r"^[A-Za-z0-9_$]{1,64}$")
_SEQUENCE = re.compile(r"_(\d+)$")


@dataclass(frozen=True)
class RowDeletion:
    """A state row retention deletes."""

    store: str
    table: str
    time: float


def check_connection(settings: CleanerSettings) -> None:
    """UsageError naming the key when the connection keys cannot be used (before any work)."""
    _connection_args(settings)


def _connection_args(settings: CleanerSettings) -> dict[str, Any]:
    match = _URL.match((settings.db_url or "").strip())
    if not match:
        # the value is not echoed: a URL's parameters may hold a password
        raise ConfigError("is not a jdbc:mysql://host[:port]/database URL", key=DB_URL_KEY)
    if not _IDENTIFIER.match(settings.db_table):
        raise ConfigError(f"{settings.db_table!r} is not a table name (letters, digits, _ and $)", key=DB_TABLE_KEY)
    password = settings.db_password or ""
    if password.startswith("ENC("):
        raise ConfigError("ENC(…) needs Gobblin's master key (encrypt.key.loc) to decrypt; gpy reads plain "
                          "passwords only", key=DB_PASSWORD_KEY, hint="give the password itself")
    return {"host": match.group("host"), "port": int(match.group("port") or 3306), "database": match.group("db"),
            "user": settings.db_user or "", "password": password, "autocommit": True}


def where(settings: CleanerSettings) -> str:
    """``host:port/database table`` of the store, for messages (never the URL's parameters: they may hold a
    password)."""
    args = _connection_args(settings)
    return f"{args['host']}:{args['port']}/{args['database']} table {settings.db_table}"


def _connect(settings: CleanerSettings) -> Any:
    import importlib

    args = _connection_args(settings)
    try:
        pymysql = importlib.import_module("pymysql")  # the mysql extra
    except ImportError:
        raise UsageError(f"{DB_URL_KEY}: cleaning a MySQL state store needs PyMySQL (pip install pymysql)") from None
    try:
        return pymysql.connect(**args)
    except pymysql.err.Error as exc:
        raise StateStoreError(f"{where(settings)}: cannot connect: {exc}") from None


def _sequence(table: str) -> int:
    """The sequence of a run's job id (``job_<name>_<epoch ms>``): what orders a dataset's runs in Gobblin."""
    match = _SEQUENCE.search(table[:-len(".jst")])
    return int(match.group(1)) if match else -1


def plan_rows(settings: CleanerSettings, policy: Policy, store_name: str | None,
              now: float) -> list[RowDeletion]:
    """The rows ``policy`` selects, per job and dataset, oldest first; never a current row nor a newest run."""
    sql = f"SELECT store_name, table_name, UNIX_TIMESTAMP(modified_time) FROM `{settings.db_table}`"
    connection = _connect(settings)
    try:
        with connection.cursor() as cursor:
            cursor.execute(sql + (" WHERE store_name = %s" if store_name else ""), (store_name,) if store_name else None)
            rows = cursor.fetchall()
    except Exception as exc:  # noqa: BLE001 - pymysql's errors, named with the table
        raise StateStoreError(f"{where(settings)}: cannot read the state rows: {exc}") from None
    finally:
        connection.close()
    datasets: dict[tuple[str, str], list[tuple[str, float, bool]]] = {}
    for store, table, modified in rows:
        match = TABLE_NAME_RE.match(table)
        if match:
            key = (store, match.group(1) or "")
            datasets.setdefault(key, []).append((table, float(modified), match.group(2) == CURRENT))
    planned = []
    for (store, _), tables in datasets.items():
        runs = [t for t, _, current in tables if not current]
        protected = {t for t, _, current in tables if current}
        if runs:
            protected.add(max(runs, key=_sequence))
        versions = sorted((Version(t, m) for t, m, _ in tables), key=lambda v: (v.time, v.path), reverse=True)
        planned += [RowDeletion(store, v.path, v.time) for v in policy(versions, now) if v.path not in protected]
    return sorted(planned, key=lambda r: (r.store, r.time, r.table))


def delete_rows(settings: CleanerSettings, deletions: Iterable[RowDeletion]) -> int:
    """Delete the planned rows, one statement each (each its own crash point); returns how many went."""
    sql = f"DELETE FROM `{settings.db_table}` WHERE store_name = %s AND table_name = %s"
    connection = _connect(settings)
    deleted = 0
    try:
        with connection.cursor() as cursor:
            for row in deletions:
                with phase(DELETE_PHASE):
                    deleted += cursor.execute(sql, (row.store, row.table))
    finally:
        connection.close()
    return deleted
