"""Gobblin's ``HiveRegistrationPolicyBase``: the databases and tables a published folder is registered as.

The database is ``hive.database.name``, else group 1 of ``hive.database.regex`` matched against the whole folder
(``Matcher.matches``), with ``hive.database.name.prefix``/``.suffix`` around it, plus each of
``additional.hive.database.names``; the table likewise from ``hive.table.name``/``hive.table.regex``, prefix,
suffix and ``additional.hive.table.names``, where ``$PRIMARY_TABLE`` stands for the first table's name. The
folder is registered in every database under every table name (the cross product). As in Gobblin, the prefix
and suffix go around each additional name too, after ``$PRIMARY_TABLE`` is replaced by the (prefixed) first
name: the tables are named as a Gobblin job named them.

Names follow Gobblin's rule: lower case; valid when they start with a letter or digit, hold only letters, digits
and ``_``, and are not digits only. An invalid name has every other character replaced with ``_`` when
``hive.sanitize.invalid.names`` is true (the default), and is refused, naming its key, when it is still invalid.
Unlike Gobblin, the whole name (prefix and suffix included) and the additional names are checked too: Gobblin
hands those to the metastore as they are, which refuses them mid-registration.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gobblin_py.connectors.hive.settings import HiveRegistrationSettings
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.errors import UsageError

PRIMARY_TABLE = "$PRIMARY_TABLE"
_VALID = re.compile(r"[a-z0-9][a-z0-9_]*")
_NOT_ONLY_DIGITS = re.compile(r".*[a-z_].*")
_INVALID_CHAR = re.compile(r"[^a-zA-Z0-9_]")
RULE = "a Hive name starts with a letter or digit, holds only letters, digits and _, and is not digits only"


@dataclass(frozen=True)
class TableName:
    """A database and table a folder is registered as."""

    database: str
    table: str

    def __str__(self) -> str:
        return f"{self.database}.{self.table}"


class HiveNameError(UsageError):
    """A database or table name that is not a valid Hive name: ``key`` is the key it comes from."""

    def __init__(self, key: str, message: str) -> None:
        self.key = key
        super().__init__(f"{key}: {message}")


def is_valid(name: str) -> bool:
    lowered = name.lower()
    return bool(_VALID.fullmatch(lowered) and _NOT_ONLY_DIGITS.fullmatch(lowered))


def checked(name: str, key: str, sanitize: bool) -> str:
    """``name`` lower-cased, sanitised when allowed and needed (Gobblin's rule); HiveNameError naming ``key`` when it
    is not a valid Hive name then."""
    lowered = name.lower()
    if sanitize and not is_valid(lowered):
        lowered = _INVALID_CHAR.sub("_", lowered)
    if is_valid(lowered):
        return lowered
    shown = f"{name!r}" + (f" (sanitised: {lowered!r})" if lowered != name.lower() else "")
    hint = "" if sanitize else "; hive.sanitize.invalid.names=true would replace the other characters with _"
    raise HiveNameError(key, f"{shown} is not a valid Hive database or table name ({RULE}){hint}")


def _primary(name: str | None, regex: re.Pattern | None, key: str, path: str) -> tuple[str, str] | None:
    """The name before prefix and suffix, and the key it comes from; None when neither key is set."""
    if name is not None:
        return name, f"{key}.name"
    if regex is None:
        return None
    match = regex.fullmatch(path)
    if match is None or match.re.groups < 1 or match.group(1) is None:
        raise HiveNameError(f"{key}.regex", f"'{regex.pattern}' does not match the published folder {path} "
                                         "with a group 1 (the whole folder is matched)")
    return match.group(1), f"{key}.regex"


def databases(settings: HiveRegistrationSettings, path: str) -> list[str]:
    """The databases ``path`` is registered in (Gobblin's getDatabaseNames), each checked."""
    s = settings
    found = []
    primary = _primary(s.database, s.database_regex, "hive.database", path)
    if primary is not None:
        found.append(checked(f"{s.database_prefix}{primary[0]}{s.database_suffix}", primary[1], s.sanitize))
    found += [checked(f"{s.database_prefix}{extra}{s.database_suffix}", "additional.hive.database.names", s.sanitize)
              for extra in s.additional_databases]
    if not found:
        raise HiveNameError("hive.database.name", "no Hive database is named (set it or hive.database.regex)")
    return list(dict.fromkeys(found))


def tables(settings: HiveRegistrationSettings, path: str) -> list[str]:
    """The table names ``path`` is registered as (Gobblin's getTableNames), each checked."""
    s = settings
    found = []
    primary = _primary(s.table, s.table_regex, "hive.table", path)
    first = None
    if primary is not None:
        first = checked(f"{s.table_prefix}{primary[0]}{s.table_suffix}", primary[1], s.sanitize)
        found.append(first)
    for extra in s.additional_tables:
        name = extra.replace(PRIMARY_TABLE, first) if first is not None else extra
        found.append(checked(f"{s.table_prefix}{name}{s.table_suffix}", "additional.hive.table.names", s.sanitize))
    if not found:
        raise HiveNameError("hive.table.name", "no Hive table is named (set it or hive.table.regex)")
    return list(dict.fromkeys(found))


def table_names(settings: HiveRegistrationSettings, path: str) -> list[TableName]:
    """Every database and table ``path`` is registered as: the cross product."""
    return [TableName(db, table) for db in databases(settings, path) for table in tables(settings, path)]


def static_problems(settings: HiveRegistrationSettings) -> list[ConfigError]:
    """The names the keys give without a folder (not those of a regex), each that is not a valid Hive name."""
    s = settings
    candidates: list[tuple[str, str]] = []
    if s.database is not None:
        candidates.append((f"{s.database_prefix}{s.database}{s.database_suffix}", "hive.database.name"))
    candidates += [(f"{s.database_prefix}{d}{s.database_suffix}", "additional.hive.database.names")
                   for d in s.additional_databases]
    if s.table is not None:
        candidates.append((f"{s.table_prefix}{s.table}{s.table_suffix}", "hive.table.name"))
    primary = f"{s.table_prefix}{'table' if s.table is None else s.table}{s.table_suffix}"
    candidates += [(f"{s.table_prefix}{t.replace(PRIMARY_TABLE, primary)}{s.table_suffix}",
                    "additional.hive.table.names") for t in s.additional_tables]
    problems = []
    for name, key in candidates:
        try:
            checked(name, key, s.sanitize)
        except HiveNameError as exc:
            problems.append(ConfigError(str(exc).removeprefix(f"{key}: "), key=key,
                                        hint="name it with letters, digits and _ (see hive.sanitize.invalid.names)"))
    return problems
