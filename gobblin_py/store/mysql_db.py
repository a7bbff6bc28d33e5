"""The MySQL database of a Gobblin ``MysqlDatasetStateStore``: its keys (Gobblin's ``state.store.db.*``), and
connections to it.

One place reads the connection keys: a ``jdbc:mysql://`` (or ``jdbc:mariadb://``) URL, the user, the password
(:func:`read_password`, the only reader of ``state.store.db.password``) and the table name. Messages name the
server as ``host:port/database``, never the URL's parameters (they may hold a password).
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from typing import Any

from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.errors import StateStoreError, StateStoreUnavailable, UsageError
from gobblin_py.sdk.settings import Settings, same_as, setting
from gobblin_py.store.store import STORE_TYPE_KEY, StateStoreSettings

DB_URL_KEY = "state.store.db.url"
DB_USER_KEY = "state.store.db.user"
DB_PASSWORD_KEY = "state.store.db.password"
DB_TABLE_KEY = "state.store.db.table"
DB_DRIVER_KEY = "state.store.db.jdbc.driver"
COMPRESSED_KEY = "state.store.compressedValues"
DEFAULT_TABLE = "gobblin_job_state"
CONNECT_TIMEOUT_SECONDS = 10

_URL = re.compile(r"^jdbc:(?:mysql|mariadb)://(?P<host>[^/:?]+)(?::(?P<port>\d+))?/(?P<db>[^/?]+)(?:\?.*)?$")
_IDENTIFIER = re.compile(r"^[A-Za-z0-9_$]{1,64}$")
_DRIVERS = ("com.mysql.cj.jdbc.Driver", "com.mysql.jdbc.Driver", "org.mariadb.jdbc.Driver")


@dataclass(frozen=True)
class MysqlStoreSettings(Settings):
    """The keys of a MySQL state store (``state.store.type=mysql``), Gobblin's names."""

    store_type: str | None = same_as(StateStoreSettings, "store_type")
    url: str | None = setting(DB_URL_KEY, example="jdbc:mysql://localhost:3306/gobblin",
                              doc="mysql: the database of the state store (jdbc:mysql:// or jdbc:mariadb://)")
    user: str | None = setting(DB_USER_KEY, doc="mysql: the user")
    password: str | None = setting(DB_PASSWORD_KEY, secret=True,
                                   doc="mysql: the password (plain, or ENC(…) with encrypt.key.loc)")
    table: str = setting(DB_TABLE_KEY, default=DEFAULT_TABLE, doc="mysql: the table of the state rows (Gobblin's "
                         "layout; created if missing)")
    driver: str | None = setting(DB_DRIVER_KEY, default_doc="com.mysql.cj.jdbc.Driver",
                                 doc="mysql: Gobblin's JDBC driver class; gpy talks to the server with PyMySQL, so "
                                     "only a MySQL or MariaDB driver is accepted")
    compressed: bool = setting(COMPRESSED_KEY, default=True, doc="mysql: gzip each state row (as Gobblin does); "
                               "rows are read either way")

    @property
    def is_mysql(self) -> bool:
        return (self.store_type or "").strip().lower() == "mysql"

    def check(self) -> list:
        if not self.is_mysql:
            return []
        problems = []
        if not _URL.match((self.url or "").strip()):
            # the value is not echoed: a URL's parameters may hold a password
            problems.append(ConfigError("is not a jdbc:mysql://host[:port]/database URL" if self.url else
                                        f"is not set ({STORE_TYPE_KEY}=mysql keeps the state in this database)",
                                        key=DB_URL_KEY))
        if not _IDENTIFIER.match(self.table):
            problems.append(ConfigError(f"{self.table!r} is not a table name (letters, digits, _ and $)",
                                        key=DB_TABLE_KEY))
        if self.driver and self.driver.strip() not in _DRIVERS:
            problems.append(ConfigError(f"{self.driver!r}: gpy reaches MySQL and MariaDB only", key=DB_DRIVER_KEY,
                                        hint=f"use one of {', '.join(_DRIVERS)}, or remove it"))
        return problems


def read_password(settings: MysqlStoreSettings) -> str:
    """The password of the state store's user: the one place ``state.store.db.password`` is read (an ``ENC(…)``
    value comes here decrypted by the job loader, with the ``encrypt.key.loc`` master password)."""
    return settings.password or ""


def connection_args(settings: MysqlStoreSettings) -> dict[str, Any]:
    """PyMySQL's arguments for the store's database; ConfigError naming the key when they cannot be used."""
    match = _URL.match((settings.url or "").strip())
    if not match:
        raise ConfigError("is not a jdbc:mysql://host[:port]/database URL", key=DB_URL_KEY)
    if not _IDENTIFIER.match(settings.table):
        raise ConfigError(f"{settings.table!r} is not a table name (letters, digits, _ and $)", key=DB_TABLE_KEY)
    return {"host": match.group("host"), "port": int(match.group("port") or 3306), "database": match.group("db"),
            "user": settings.user or "", "password": read_password(settings), "autocommit": True,
            "connect_timeout": CONNECT_TIMEOUT_SECONDS}


def where(settings: MysqlStoreSettings) -> str:
    """``host:port/database table`` of the store, for messages."""
    args = connection_args(settings)
    return f"{args['host']}:{args['port']}/{args['database']} table {settings.table}"


def driver() -> Any:
    """The PyMySQL module (the mysql extra)."""
    try:
        return importlib.import_module("pymysql")
    except ImportError:
        raise UsageError(f"{DB_URL_KEY}: a MySQL state store needs PyMySQL (pip install pymysql)") from None


def connect(settings: MysqlStoreSettings, autocommit: bool = True) -> Any:
    """A connection to the store's database; StateStoreUnavailable naming ``state.store.db.url`` when the server
    cannot be reached (a run stops before it changes anything: no state is lost)."""
    args = {**connection_args(settings), "autocommit": autocommit}
    pymysql = driver()
    try:
        return pymysql.connect(**args)
    except pymysql.err.OperationalError as exc:
        raise StateStoreUnavailable(f"{DB_URL_KEY} ({where(settings)}): cannot connect to the MySQL state store: "
                                    f"{exc.args[-1] if exc.args else exc}") from None
    except pymysql.err.Error as exc:
        raise StateStoreError(f"{DB_URL_KEY} ({where(settings)}): {exc}") from None
