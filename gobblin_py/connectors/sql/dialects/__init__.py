"""Database dialects behind one base (:class:`~gobblin_py.connectors.sql.dialects.base.Dialect`): one module each."""

from __future__ import annotations

from gobblin_py.connectors.sql.connection import ConnectionConfig
from gobblin_py.connectors.sql.dialects.base import Dialect
from gobblin_py.connectors.sql.dialects.mysql import MysqlDialect
from gobblin_py.connectors.sql.dialects.postgres import PostgresDialect
from gobblin_py.connectors.sql.dialects.sqlite import SqliteDialect

DIALECTS: dict[str, type[Dialect]] = {"sqlite": SqliteDialect, "postgresql": PostgresDialect, "mysql": MysqlDialect}


def dialect_for(config: ConnectionConfig) -> Dialect:
    """The dialect of the configured driver."""
    return DIALECTS[config.driver](config)
