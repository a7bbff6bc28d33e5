"""Which database errors a retry can help, for :func:`gobblin_py.sdk.failures.classify` (registered as an entry
point of group ``gobblin_py.failures``).

In order: the SQLSTATE a driver gives (PostgreSQL's psycopg, and any driver with a ``sqlstate`` attribute), SQLite's
result codes (``sqlite3``), ADBC's status codes, then the DB-API exception types that always mean the statement or
its data are wrong. Recognised by attributes and type names: no driver is imported.
"""

from __future__ import annotations

from gobblin_py.sdk.failures import PERMANENT, TRANSIENT, Failure, by_message, module_of, type_names

# SQLSTATE classes: connection, rollback, resources and shutdown pass; syntax, undefined objects, rights, bad data
# and constraints do not
_SQLSTATE_TRANSIENT_CLASSES = {"08", "40", "53", "58"}
_SQLSTATE_TRANSIENT = {"55P03", "57P01", "57P02", "57P03", "57014"}
_SQLSTATE_PERMANENT_CLASSES = {"0A", "22", "23", "28", "2B", "3D", "3F", "42", "44"}
# DB-API exception types (sqlite3, psycopg, ADBC, …) that always mean the statement or its data are wrong
_DBAPI_PERMANENT = {"ProgrammingError", "DataError", "IntegrityError", "NotSupportedError"}
# SQLite's primary result codes: busy and locked pass; no permission, read-only, corrupt, not a database do not
_SQLITE_TRANSIENT = {5, 6, 15}
_SQLITE_PERMANENT = {3, 8, 11, 14, 18, 19, 20, 23, 26}
# ADBC status codes (adbc_driver_manager.AdbcStatusCode): IO and TIMEOUT pass
_ADBC_TRANSIENT = {10, 12}
_ADBC_PERMANENT = {2, 3, 4, 5, 7, 8, 13, 14}
# SQLite's messages under its generic SQLITE_ERROR code
_TRANSIENT_WORDS = ("database is locked", "database table is locked")
_PERMANENT_WORDS = ("no such table", "no such column", "syntax error")


def classify_database_error(exc: BaseException) -> Failure | None:
    """The kind of a database driver's error, or None when it is not one this module knows."""
    sqlstate = getattr(exc, "sqlstate", None)
    if isinstance(sqlstate, str) and len(sqlstate) == 5:
        if sqlstate in _SQLSTATE_TRANSIENT or sqlstate[:2] in _SQLSTATE_TRANSIENT_CLASSES:
            return Failure(TRANSIENT, f"SQLSTATE {sqlstate}")
        if sqlstate[:2] in _SQLSTATE_PERMANENT_CLASSES:
            return Failure(PERMANENT, f"SQLSTATE {sqlstate}")
    sqlite_code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(sqlite_code, int):
        name = getattr(exc, "sqlite_errorname", None) or f"SQLite code {sqlite_code}"
        if sqlite_code & 0xFF in _SQLITE_TRANSIENT:
            return Failure(TRANSIENT, name)
        if sqlite_code & 0xFF in _SQLITE_PERMANENT:
            return Failure(PERMANENT, name)
        return by_message(exc, _TRANSIENT_WORDS, _PERMANENT_WORDS)  # SQLITE_ERROR: a missing table and much else
    status = getattr(exc, "status_code", None)
    if module_of(exc).startswith("adbc_driver") and isinstance(status, int):
        if status in _ADBC_TRANSIENT:
            return Failure(TRANSIENT, f"ADBC status {status}")
        if status in _ADBC_PERMANENT:
            return Failure(PERMANENT, f"ADBC status {status}")
    names = type_names(exc)
    if names & _DBAPI_PERMANENT and {"DatabaseError", "Error"} & names:
        return Failure(PERMANENT, sorted(names & _DBAPI_PERMANENT)[0])
    return None
