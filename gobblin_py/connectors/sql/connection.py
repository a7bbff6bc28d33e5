"""Connection settings (``source.conn.*``) and the rule that a password never leaves them.

The password is read from the job's properties only when a connection is opened, is never copied into a
work unit, task state, log event or error message: every error text that passes through :meth:`scrub`
has the password (and any password embedded in a URL) replaced by ``***``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from gobblin_py.connectors.sql import keys as K
from gobblin_py.sdk.errors import UsageError

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
    def from_settings(cls, settings: Any, default_driver: str | None = None) -> ConnectionConfig:
        """The connection the settings name (``source.conn.url`` filling what the other keys leave unset)."""
        url = text(settings.url)
        driver = DRIVER_ALIASES.get((text(settings.driver) or "").lower()) if text(settings.driver) else None
        if text(settings.driver) and driver is None:
            raise UsageError(f"{K.DRIVER}={settings.driver.strip()}: use sqlite, postgresql or mysql")
        url_driver, url_parts = parse_url(url) if url else (None, {})
        return cls(
            driver=driver or url_driver or default_driver or "sqlite",
            host=text(settings.host) or url_parts.get("host"),
            port=settings.port or url_parts.get("port"),
            username=text(settings.username) or url_parts.get("username"),
            database=text(settings.database) or url_parts.get("database"),
            url=url,
            timeout_seconds=max(1.0, (settings.timeout_ms or 30000.0) / 1000.0),  # Gobblin: milliseconds
            password=settings.password or url_parts.get("password"),
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
                f"{K.DATABASE} is not set: name the SQLite database file (or set {K.URL}=jdbc:sqlite:<file>)"
            )
        return os.path.abspath(os.path.expanduser(path))

    def scrub(self, text: str) -> str:
        """``text`` with the password (and URL-embedded passwords) replaced by ``***``."""
        text = _URL_PASSWORD.sub(r"\1***\3", text)
        if self.password and len(self.password) >= 3:
            text = text.replace(self.password, "***")
        return text


def text(value: str | None) -> str | None:
    """A text setting with blanks read as unset."""
    return value.strip() or None if value else None


def parse_url(url: str) -> tuple[str | None, dict]:
    """``jdbc:postgresql://h:p/db``, ``postgresql://u:pw@h/db``, ``jdbc:sqlite:/path``, ``sqlite:///path``."""
    text = url[5:] if url.lower().startswith("jdbc:") else url
    scheme, _, rest = text.partition(":")
    driver = DRIVER_ALIASES.get(scheme.lower())
    if driver is None:
        raise UsageError(f"{K.URL}: unknown scheme {scheme!r}; use sqlite:, postgresql: or mysql: URLs")
    if driver == "sqlite":
        path = rest[2:] if rest.startswith("//") else rest
        return driver, {"database": unquote(path.split("?", 1)[0]) or None}
    parts = urlsplit(f"{scheme}:{rest}")
    try:
        port = parts.port
    except ValueError:
        raise UsageError(f"{K.URL}: bad port") from None
    return driver, {
        "host": parts.hostname,
        "port": port,
        "username": unquote(parts.username) if parts.username else None,
        "password": unquote(parts.password) if parts.password else None,
        "database": unquote(parts.path.lstrip("/")) or None,
    }
