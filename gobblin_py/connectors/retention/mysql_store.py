"""Retention of a Gobblin MySQL state store (``state.store.type=mysql``): the rows of Gobblin's
``MysqlDatasetStateStore`` table (``state.store.db.table``, ``gobblin_job_state``: ``store_name`` the job,
``table_name`` ``<urn>-<job id>.jst`` or ``<urn>-current.jst``, ``modified_time``, ``state``) are the versions,
timestamped by ``modified_time``; a selected row is deleted by its key. Each dataset's ``current`` row and its
newest run (by the job id's sequence, as Gobblin finds the latest state) are never deleted.

The connection keys are read as the MySQL state store of a job reads them (:mod:`gobblin_py.store.mysql_db`); an
``ENC(…)`` password comes here decrypted (the job loader decrypts with the ``encrypt.key.loc`` master password).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from gobblin_py.connectors.retention.settings import CleanerSettings
from gobblin_py.io.crash_points import phase
from gobblin_py.sdk.errors import StateStoreError
from gobblin_py.store import mysql_db
from gobblin_py.store.mysql_db import MysqlStoreSettings
from gobblin_py.store.retention import DELETE_PHASE, Policy, Version
from gobblin_py.store.store import CURRENT, TABLE_NAME_RE

_SEQUENCE = re.compile(r"_(\d+)$")


@dataclass(frozen=True)
class RowDeletion:
    """A state row retention deletes."""

    store: str
    table: str
    time: float


def _db(settings: CleanerSettings) -> MysqlStoreSettings:
    return MysqlStoreSettings(store_type="mysql", url=settings.db_url, user=settings.db_user,
                              password=settings.db_password, table=settings.db_table)


def check_connection(settings: CleanerSettings) -> None:
    """ConfigError naming the key when the connection keys cannot be used (before any work)."""
    mysql_db.connection_args(_db(settings))


def where(settings: CleanerSettings) -> str:
    """``host:port/database table`` of the store, for messages."""
    return mysql_db.where(_db(settings))


def _connect(settings: CleanerSettings) -> Any:
    return mysql_db.connect(_db(settings))


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
