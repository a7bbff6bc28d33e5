"""Connection settings (``source.conn.*``) and the rule that a password never leaves them.

The password is read from the job's properties only when a connection is opened, is never copied into a
work unit, task state, log event or error message: every error text that passes through :meth:`scrub`
has the password (and any password embedded in a URL) replaced by ``***``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from gobblin_py.errors import UsageError
from gobblin_py.state import State

DRIVER_KEY = "source.conn.driver"
URL_KEY = "source.conn.url"
HOST_KEY = "source.conn.host"
PORT_KEY = "source.conn.port"
USERNAME_KEY = "source.conn.username"
PASSWORD_KEY = "source.conn.password"
DATABASE_KEY = "source.conn.database"
TIMEOUT_KEY = "source.conn.timeout"

# driver names as written in job files (Gobblin's JDBC driver classes included) -> our dialect name
DRIVER_ALIASES = {
    "sqlite": "sqlite", "sqlite3": "sqlite", "org.sqlite.jdbc": "sqlite",
    "postgresql": "postgresql", "postgres": "postgresql", "pg": "postgresql", "psycopg": "postgresql",
    "org.postgresql.driver": "postgresql",
    "mysql": "mysql", "mariadb": "mysql", "com.mysql.jdbc.driver": "mysql", "com.mysql.cj.jdbc.driver": "mysql",
    "org.mariadb.jdbc.driver": "mysql",
}
DEFAULT_PORTS = {"postgresql": 5432, "mysql": 3306}
_URL_PASSWORD = re.compile(r"(://[^:/@\s]*:)([^@\s]*)(@)")


@dataclass(frozen=True)
class ConnectionConfig:
    """Where and as whom to connect. ``password`` is never rendered by ``repr`` or :meth:`describe`."""

    driver: str
    host: str | None = None
    port: int | None = None
    username: str | None = None
    database: str | None = None
    url: str | None = None
    timeout_seconds: float = 30.0
    password: str | None = None

    def __repr__(self) -> str:
        return f"ConnectionConfig({self.describe()})"

    @classmethod
    def from_state(cls, state: State, default_driver: str | None = None) -> "ConnectionConfig":
        for key in (URL_KEY, HOST_KEY, PORT_KEY, USERNAME_KEY, DATABASE_KEY, PASSWORD_KEY, DRIVER_KEY):
            if "${" in (state.get_prop(key) or ""):
                shown = "" if key == PASSWORD_KEY else f"={state.get_prop(key)}"
                raise UsageError(f"{key}{shown}: holds an unresolved ${{…}} reference (an environment variable not set?)")
        url = (state.get_prop(URL_KEY) or "").strip() or None
        driver_text = (state.get_prop(DRIVER_KEY) or "").strip() or None
        driver = None
        if driver_text:
            driver = DRIVER_ALIASES.get(driver_text.lower())
            if driver is None:
                raise UsageError(f"{DRIVER_KEY}={driver_text}: use sqlite, postgresql or mysql")
        url_driver, url_parts = _parse_url(url) if url else (None, {})
        driver = driver or url_driver or default_driver or "sqlite"
        timeout_ms = state.get_prop_as_float(TIMEOUT_KEY, 30000.0) or 30000.0  # Gobblin: milliseconds
        port_text = state.get_prop(PORT_KEY)
        try:
            port = int(port_text) if port_text and port_text.strip() else url_parts.get("port")
        except ValueError:
            raise UsageError(f"{PORT_KEY}={port_text}: not a port number") from None
        return cls(
            driver=driver,
            host=(state.get_prop(HOST_KEY) or "").strip() or url_parts.get("host"),
            port=port,
            username=(state.get_prop(USERNAME_KEY) or "").strip() or url_parts.get("username"),
            database=(state.get_prop(DATABASE_KEY) or "").strip() or url_parts.get("database"),
            url=url,
            timeout_seconds=max(1.0, timeout_ms / 1000.0),
            password=state.get_prop(PASSWORD_KEY) or url_parts.get("password"),
        )

    def describe(self) -> str:
        """Where the connection goes, for messages: ``postgresql://user@host:port/db`` (no password)."""
        if self.driver == "sqlite":
            return f"sqlite:{self.sqlite_path()}"
        env = os.environ if self.driver == "postgresql" else {}  # what libpq falls back to
        username = self.username or env.get("PGUSER")
        user = f"{username}@" if username else ""
        port = self.port or env.get("PGPORT") or DEFAULT_PORTS.get(self.driver, "")
        host = self.host or env.get("PGHOST") or "localhost"
        return f"{self.driver}://{user}{host}:{port}/{self.database or env.get('PGDATABASE') or ''}"

    def sqlite_path(self) -> str:
        path = self.database
        if not path:
            raise UsageError(
                f"{DATABASE_KEY} is not set: name the SQLite database file (or set {URL_KEY}=jdbc:sqlite:<file>)"
            )
        return os.path.abspath(os.path.expanduser(path))

    def scrub(self, text: str) -> str:
        """``text`` with the password (and URL-embedded passwords) replaced by ``***``."""
        text = _URL_PASSWORD.sub(r"\1***\3", text)
        if self.password and len(self.password) >= 3:
            text = text.replace(self.password, "***")
        return text


def _parse_url(url: str) -> tuple[str | None, dict]:
    """``jdbc:postgresql://h:p/db``, ``postgresql://u:pw@h/db``, ``jdbc:sqlite:/path``, ``sqlite:///path``."""
    text = url[5:] if url.lower().startswith("jdbc:") else url
    scheme, _, rest = text.partition(":")
    driver = DRIVER_ALIASES.get(scheme.lower())
    if driver is None:
        raise UsageError(f"{URL_KEY}: unknown scheme {scheme!r}; use sqlite:, postgresql: or mysql: URLs")
    if driver == "sqlite":
        path = rest[2:] if rest.startswith("//") else rest
        return driver, {"database": unquote(path.split("?", 1)[0]) or None}
    parts = urlsplit(f"{scheme}:{rest}")
    try:
        port = parts.port
    except ValueError:
        raise UsageError(f"{URL_KEY}: bad port") from None
    return driver, {
        "host": parts.hostname,
        "port": port,
        "username": unquote(parts.username) if parts.username else None,
        "password": unquote(parts.password) if parts.password else None,
        "database": unquote(parts.path.lstrip("/")) or None,
    }
