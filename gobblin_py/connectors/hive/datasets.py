"""Which Hive tables a job works on (Gobblin's ``HiveDatasetFinder`` and ``WhitelistBlacklist``), shared by the
Avro-to-ORC conversion (``HiveSource``) and the Hive copy (``HiveDatasetFinder`` of the copy job).

``hive.dataset.database`` with ``hive.dataset.table.pattern`` (default ``*``) names the tables; without a database,
``hive.dataset.whitelist`` does, and ``hive.dataset.blacklist`` leaves tables out. A list entry is ``db``,
``db.table``, with ``*`` for any characters and ``|`` between alternatives of one part (``db1.t1|t2``), entries
separated by commas; names match without regard to case, as Hive's are. Views are never datasets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from gobblin_py.connectors.hive.client import Metastore
from gobblin_py.connectors.hive.settings import URI
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.settings import Settings, setting


@dataclass(frozen=True)
class HiveDatasetSettings(Settings):
    """The keys that say which Hive tables a Hive job works on, and in which metastore."""

    metastore_uris: tuple[str, ...] = setting(
        "hive.dataset.hive.metastore.uri", required=True, example="thrift://metastore.example.com:9083",
        doc="the Hive metastore holding the tables (a comma list is tried in order)")
    database: str | None = setting("hive.dataset.database",
                                   doc="the database of the tables (with hive.dataset.table.pattern)")
    table_pattern: str = setting("hive.dataset.table.pattern", default="*",
                                 doc="the tables of hive.dataset.database: * for any characters, | between "
                                     "alternatives")
    whitelist: str = setting("hive.dataset.whitelist", default="",
                             doc="without hive.dataset.database: the tables, as db, db.table or patterns (db*.t*, "
                                 "db.t1|t2), comma-separated")
    blacklist: str = setting("hive.dataset.blacklist", default="",
                             doc="tables left out, written as hive.dataset.whitelist")
    timeout_s: int = setting("hive.metastore.client.socket.timeout", default=60, minimum=1, maximum=3600,
                             doc="seconds a metastore call may take")

    def check(self) -> list[ConfigError]:
        problems = [ConfigError(f"{uri!r} is not a metastore URI", key="hive.dataset.hive.metastore.uri",
                                hint="thrift://HOST:PORT, e.g. thrift://metastore.example.com:9083")
                    for uri in self.metastore_uris if not URI.match(uri)]
        if not self.database and not self.whitelist:
            problems.append(ConfigError("is not set", key="hive.dataset.database",
                                        hint="name the database (and hive.dataset.table.pattern), or list the "
                                             "tables in hive.dataset.whitelist"))
        return problems

    def selection(self) -> TableSelection:
        whitelist = f"{self.database}.{self.table_pattern}" if self.database else self.whitelist
        return TableSelection(_entries(whitelist), _entries(self.blacklist))


def _part(pattern: str) -> re.Pattern:
    alternatives = [re.escape(a.strip()).replace(r"\*", ".*") for a in pattern.split("|")]
    return re.compile("|".join(f"(?:{a})" for a in alternatives), re.IGNORECASE)


def _entries(text: str) -> tuple[tuple[re.Pattern, re.Pattern], ...]:
    entries = []
    for entry in (e.strip() for e in text.split(",")):
        if entry:
            database, _, table = entry.partition(".")
            entries.append((_part(database), _part(table or "*")))
    return tuple(entries)


@dataclass(frozen=True)
class TableSelection:
    """Gobblin's WhitelistBlacklist: a table is selected when the whitelist takes it and the blacklist does not."""

    whitelist: tuple[tuple[re.Pattern, re.Pattern], ...]
    blacklist: tuple[tuple[re.Pattern, re.Pattern], ...]

    @staticmethod
    def _takes(entries: tuple[tuple[re.Pattern, re.Pattern], ...], database: str, table: str | None) -> bool:
        return any(d.fullmatch(database) and (table is None or t.fullmatch(table)) for d, t in entries)

    def database(self, name: str) -> bool:
        """Whether some table of database ``name`` may be selected."""
        return self._takes(self.whitelist, name, None)

    def table(self, database: str, name: str) -> bool:
        return self._takes(self.whitelist, database, name) and not self._takes(self.blacklist, database, name)


def find_tables(metastore: Metastore, settings: HiveDatasetSettings) -> list[Any]:
    """The selected tables (thrift ``Table`` objects, views left out), by database and name."""
    selection = settings.selection()
    found = []
    for database in sorted(metastore.databases()):
        if not selection.database(database):
            continue
        for name in sorted(metastore.table_names(database)):
            if selection.table(database, name):
                table = metastore.table(database, name)
                if table is not None and table.tableType != "VIRTUAL_VIEW":
                    found.append(table)
    return found


def partition_name(table: Any, values: list[str]) -> str:
    """``key=value/…`` of a partition of ``table`` (the values as stored; the path escaping is the metastore's)."""
    return "/".join(f"{k.name}={v}" for k, v in zip(table.partitionKeys, values, strict=True))


def storage_path(location: str) -> str:
    """A metastore location as gpy's filesystems take it: Hadoop's ``file:/x`` (and ``file:///x``) is ``/x``."""
    if location.startswith("file:"):
        return "/" + location[len("file:"):].lstrip("/")
    return location


def qualified(path: str) -> str:
    """A folder as the metastore keeps it: a bare local path gets Hadoop's ``file:``."""
    return f"file:{path}" if path.startswith("/") else path
