"""Every key the query-based source reads, declared once: the connection, the tables and how rows are fetched.

Table keys are entity-scoped: ``source.querybased.entity.<table>.<key>`` sets ``<key>`` for one table
(``QueryBasedSettings.load(state, entity="orders")``). Values that need each other or the database — a start
value for the configured watermark type, a regular expression, a time zone — are checked in :meth:`check`, so
``gpy validate`` and the start of ``gpy run`` refuse them before any work.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from gobblin_py.connectors.sql import keys as K
from gobblin_py.connectors.sql.arrow_types import parse_arrow_type
from gobblin_py.connectors.sql.connection import DRIVER_ALIASES, parse_url
from gobblin_py.connectors.sql.watermarks import WATERMARK_TYPES, max_watermark_limit, parse_value
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.settings import Scope, Settings, setting

ENTITY = Scope.ENTITY
FETCH_METHODS = ("auto", "adbc", "copy", "cursor")
TABLE_TYPES = ("append_only", "snapshot_only", "snapshot_append")


@dataclass(frozen=True)
class ConnectionSettings(Settings):
    """Where and as whom to connect (job-level keys)."""

    driver: str | None = setting(K.DRIVER, default_doc="sqlite (or the source class's)", example="postgresql",
                                 doc="sqlite, postgresql or mysql (JDBC driver class names accepted)")
    url: str | None = setting(K.URL, doc="instead of the keys below: jdbc:sqlite:/path, "
                                         "jdbc:postgresql://host:port/db, postgresql://…, mysql://…")
    host: str | None = setting(K.HOST, default_doc="libpq's / localhost", doc="database server")
    port: int | None = setting(K.PORT, minimum=1, maximum=65535, default_doc="5432 / 3306", doc="server port")
    username: str | None = setting(K.USERNAME, default_doc="libpq's", doc="user to log in as")
    password: str | None = setting(K.PASSWORD, secret=True, default_doc="libpq's (PGPASSWORD, ~/.pgpass)",
                                   doc="password; used to connect and nowhere else")
    database: str | None = setting(K.DATABASE, doc="SQLite: the database file (opened read-only); else the "
                                                   "database name")
    timeout_ms: float = setting(K.TIMEOUT, default=30000.0, minimum=0, doc="connect timeout, milliseconds")

    def check(self) -> list[ConfigError]:
        problems = []
        if self.driver and self.driver.strip().lower() not in DRIVER_ALIASES:
            problems.append(ConfigError(f"{self.driver.strip()!r} is not a supported driver", key=K.DRIVER,
                                        hint="use sqlite, postgresql or mysql"))
        if self.url and self.url.strip():
            try:
                parse_url(self.url.strip())
            except UsageError as exc:
                problems.append(ConfigError(str(exc).split(": ", 1)[-1], key=K.URL,
                                            hint="e.g. jdbc:postgresql://host:5432/db or jdbc:sqlite:/path/to.db"))
        return problems


@dataclass(frozen=True)
class TableSettings(Settings):
    """What to pull from each table and how (each key settable for one table as entity.<table>.<key>)."""

    schema: str | None = setting(K.SCHEMA, scope=ENTITY, default_doc="main / current_schema() / the database",
                                 doc="schema of the tables")
    delta_fields: tuple[str, ...] = setting(K.DELTA_FIELDS, default=(), scope=ENTITY,
                                            doc="the delta (watermark) column; several: COALESCE(a, b, …) of "
                                                "columns of one kind")
    pk_fields: tuple[str, ...] = setting(K.PK_FIELDS, default=(), scope=ENTITY, doc="order within a range")
    table_type: str | None = setting(K.TABLE_TYPE, choices=TABLE_TYPES, scope=ENTITY,
                                     default_doc="append_only with a delta column, else snapshot_only",
                                     doc="append_only: rows with delta in [low, high); snapshot_only: the whole table "
                                         "each run; snapshot_append: the whole table first, then appends")
    is_full: bool = setting("extract.is.full", default=False, scope=ENTITY, doc="pull the whole table this run")
    namespace: str = setting("extract.namespace", default="", scope=ENTITY, doc="namespace of the output")
    watermark_type: str | None = setting(K.WATERMARK_TYPE, choices=WATERMARK_TYPES, scope=ENTITY,
                                         default_doc="from the column", doc="simple, timestamp, hour or date")
    watermark_class: str | None = setting(K.WATERMARK_CLASS, scope=ENTITY, default_doc="built-in",
                                          doc="a custom Watermark class by dotted path (from_long / to_long)")
    start_value: str | None = setting(K.START_VALUE, scope=ENTITY, default_doc="the column's minimum",
                                      example="20240101000000",
                                      doc="first low watermark: yyyyMMddHHmmss, ISO 8601, CURRENTDAY-n, a number")
    end_value: str | None = setting(K.END_VALUE, scope=ENTITY, doc="inclusive cap on the high watermark")
    override: bool = setting(K.WATERMARK_OVERRIDE, default=False, scope=ENTITY,
                             doc="start at start.value whatever the state says")
    max_watermark_limit: str | None = setting(K.MAX_WATERMARK_LIMIT, scope=ENTITY, example="CURRENTDATE-1",
                                              doc="cap at CURRENTDATE-n, CURRENTHOUR-n, CURRENTMINUTE-n or "
                                                  "CURRENTSECOND (in source.timezone)")
    timezone: str = setting("source.timezone", default="UTC", scope=ENTITY,
                            doc="time zone of CURRENT… values")
    partition_interval: float = setting(K.PARTITION_INTERVAL, default=0.0, minimum=0, scope=ENTITY,
                                        default_doc="0 (one range)",
                                        doc="range width: hours for time types, units for simple")
    max_partitions: int = setting(K.MAX_PARTITIONS, default=20, minimum=1, scope=ENTITY,
                                  doc="most ranges (or partition groups) per table and run")
    split_rows: int = setting(K.SPLIT_ROWS, default=1_000_000, minimum=0, scope=ENTITY,
                              doc="with no partition.interval: a range of more rows is cut into ranges of about "
                                  "this many (at most max.number.of.partitions), read at once; 0: one range")
    split_min_rows: int = setting(K.SPLIT_MIN_ROWS, default=500_000, minimum=0, scope=ENTITY,
                                  doc="with no partition.interval: a range of at least this many rows (a first "
                                      "load, say) is read as at least one range per task slot of the job "
                                      "(taskexecutor.threadpool.size, or gpy.taskexecutor.processes when set), "
                                      "at once; 0: never")
    partition_column: str | None = setting(K.PARTITION_COLUMN, scope=ENTITY,
                                           doc="a column whose values each keep their own watermark "
                                               "(MultiLongWatermark)")
    partition_values: tuple[str, ...] = setting(K.PARTITION_VALUES, default=(), scope=ENTITY,
                                                doc="only these values of the partition column")
    fetch_size: int = setting(K.FETCH_SIZE, default=10000, minimum=1, scope=ENTITY,
                              doc="rows per Arrow batch (cursor reads; ADBC and COPY batches are about this size)")
    fetch_method: str = setting(K.FETCH_METHOD, default="auto", choices=FETCH_METHODS, scope=ENTITY,
                                doc="auto: ADBC where installed (SQLite, PostgreSQL), else COPY (PostgreSQL) or "
                                    "cursor; adbc; copy (PostgreSQL COPY … TO STDOUT); cursor (DB-API fetchmany)")
    skip_count: bool = setting(K.SKIP_COUNT, default=False, scope=ENTITY,
                               doc="skip COUNT(*) (planning estimates and the expected record count)")
    unbounded_numeric: str = setting(K.UNBOUNDED_NUMERIC, default="decimal128(38,9)", scope=ENTITY,
                                     doc="Arrow type of numeric without precision: decimal128(p,s), "
                                         "decimal256(p,s), float64 or string")
    event_column: str | None = setting("source.event.time.column", scope=ENTITY,
                                       default_doc="the delta column, when it holds times",
                                       doc="the column holding each row's event time: completeness and replay from a "
                                           "time follow it")

    def check(self) -> list[ConfigError]:
        problems: list[ConfigError] = []
        problems += _try(K.UNBOUNDED_NUMERIC, lambda: parse_arrow_type(self.unbounded_numeric, K.UNBOUNDED_NUMERIC),
                         "use decimal128(p,s), decimal256(p,s), float64 or string")
        try:
            zone = ZoneInfo(self.timezone.strip())
        except (ZoneInfoNotFoundError, ValueError):
            problems.append(ConfigError(f"{self.timezone!r} is not a known time zone", key="source.timezone",
                                        hint="e.g. UTC or Europe/Zurich"))
            zone = None
        if zone is not None:
            for key, value in ((K.START_VALUE, self.start_value), (K.END_VALUE, self.end_value)):
                if value and value.strip():
                    problems += _try(key, lambda v=value, k=key: _parse_any(v, self.watermark_type, k, zone),
                                     "use a number (simple), yyyyMMddHHmmss, ISO 8601 or CURRENTDAY-n")
            if self.max_watermark_limit and self.max_watermark_limit.strip():
                problems += _try(K.MAX_WATERMARK_LIMIT, lambda: max_watermark_limit(self.max_watermark_limit, zone),
                                 "use CURRENTDATE-n, CURRENTHOUR-n, CURRENTMINUTE-n or CURRENTSECOND")
        if self.watermark_class and self.watermark_class.strip() and self.partition_column:
            problems.append(ConfigError("cannot be combined with source.querybased.partition.column",
                                        key=K.WATERMARK_CLASS,
                                        hint="partitioned datasets keep a MultiLongWatermark; drop one of the two"))
        if self.watermark_class and self.watermark_class.strip():
            from gobblin_py.connectors.sql.watermarks import WatermarkCodec

            problems += _try(K.WATERMARK_CLASS, lambda: WatermarkCodec("simple", self.watermark_class.strip()),
                             "name a Watermark class with from_long(int) and to_long(), or a LongWatermark")
        if self.table_type in ("append_only", "snapshot_append") and not self.delta_fields:
            problems.append(ConfigError(f"{self.table_type} needs a delta column", key=K.TABLE_TYPE,
                                        hint=f"set {K.DELTA_FIELDS}, or use extract.table.type=snapshot_only"))
        return problems


@dataclass(frozen=True)
class QueryBasedSettings(ConnectionSettings, TableSettings):
    """The keys of :class:`QueryBasedSource`: the connection, the tables (``entity.<table>.`` per table), the run."""

    entities: tuple[str, ...] = setting("source.entities", default=(), aliases=("source.entity",),
                                        default_doc="extract.table.name",
                                        doc="the tables (comma list; schema.table allowed)")
    table_name: str | None = setting("extract.table.name",
                                     doc="the table when source.entities is not set; with source.entity, the output "
                                         "table's name")
    whitelist: tuple[str, ...] = setting(K.WHITELIST, default=(), aliases=("entity.whitelist",),
                                         doc="regular expressions (comma list, full match, any case): tables to pull")
    blacklist: tuple[str, ...] = setting(K.BLACKLIST, default=(), aliases=("entity.blacklist",),
                                         doc="regular expressions (comma list, full match, any case): tables left out")
    skipped_mode: str = setting(K.SKIPPED_MODE, default=K.URN_STATE, choices=(K.URN_STATE, K.EMPTY_WORKUNIT),
                                doc="a table not pulled keeps its watermark through its URN's last state, or "
                                    "through an empty work unit")
    max_mappers: int = setting("mr.job.max.mappers", default=100, minimum=1,
                               doc="more work units than this are packed into that many MultiWorkUnits by "
                                   "estimated rows")

    def check(self) -> list[ConfigError]:
        problems = ConnectionSettings.check(self) + TableSettings.check(self)
        for key, patterns in ((K.WHITELIST, self.whitelist), (K.BLACKLIST, self.blacklist)):
            for pattern in patterns:
                try:
                    re.compile(pattern)
                except re.error as exc:
                    problems.append(ConfigError(f"{pattern!r} is not a regular expression ({exc})", key=key,
                                                hint="give a comma list of regular expressions over table names"))
        return problems

    def tables(self) -> list[str]:
        """The tables listed, in order, once each."""
        names = self.entities or tuple(n.strip() for n in (self.table_name or "").split(",") if n.strip())
        return list(dict.fromkeys(names))

    def passes(self, table: str) -> bool:
        """Whitelisted (when there is a whitelist) and not blacklisted: full matches, any case."""
        def matches(patterns: tuple[str, ...]) -> bool:
            return any(re.fullmatch(p, table, re.IGNORECASE) for p in patterns)

        return (not self.whitelist or matches(self.whitelist)) and not matches(self.blacklist)


def entity_key(props: Any, entity: str, key: str) -> str:
    """The key a table's value of ``key`` comes from: ``source.querybased.entity.<table>.<key>`` when set."""
    specific = f"{K.ENTITY_PREFIX}{entity}.{key}"
    getter = props.get if hasattr(props, "get") and not hasattr(props, "get_prop") else props.get_prop
    return specific if getter(specific) is not None else key


def entity_names(props: Any) -> list[str]:
    """Tables named in ``source.querybased.entity.<table>.`` keys (their overrides are checked too)."""
    items = props.keys() if hasattr(props, "keys") else props.all_properties().keys()
    names = []
    for key in items:
        if key.startswith(K.ENTITY_PREFIX):
            rest = key[len(K.ENTITY_PREFIX):]
            for declared in _ENTITY_KEYS:
                if rest.endswith("." + declared):
                    names.append(rest[: -len(declared) - 1])
                    break
    return list(dict.fromkeys(names))


def _parse_any(value: str, wtype: str | None, key: str, zone) -> int:
    """The value parsed for the configured watermark type, or for any type when none is configured."""
    if wtype:
        return parse_value(value, wtype, key, zone)
    try:
        return parse_value(value, "simple", key, zone)
    except UsageError:
        return parse_value(value, "timestamp", key, zone)


def _try(key: str, action, hint: str) -> list[ConfigError]:
    try:
        action()
    except UsageError as exc:
        message = str(exc)
        prefix = f"{key}="
        if message.startswith(prefix):  # "key=value: problem" -> "'value': problem"
            value, _, problem = message[len(prefix):].partition(": ")
            message = f"{value!r}: {problem}"
        return [ConfigError(message, key=key, hint=hint)]
    return []


_ENTITY_KEYS = tuple(sorted((key.name for key in TableSettings.keys()), key=len, reverse=True)) + (
    "extract.table.name",)
