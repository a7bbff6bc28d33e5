"""``QueryBasedSource``: database tables pulled incrementally by a delta column, one dataset per table.

Planning (on the driver, one connection): for each table, find its columns, the previous run's watermarks
of its dataset URN, and ``MIN/MAX/COUNT`` of the delta column above the previous high watermark; then cut
``[low, high)`` into work units (:mod:`~gobblin_py.connectors.sql.planner`), and pack everything into
MultiWorkUnits by estimated rows when there are more than ``mr.job.max.mappers``. Extraction
(:class:`~gobblin_py.connectors.sql.extractor.QueryBasedExtractor`, on the executors) reads each range in Arrow
batches. The keys are declared in :mod:`~gobblin_py.connectors.sql.settings`.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from gobblin_py.connectors.sql import keys as K
from gobblin_py.connectors.sql import newest
from gobblin_py.connectors.sql.arrow_types import ColumnSpec, parse_arrow_type
from gobblin_py.connectors.sql.connection import ConnectionConfig, text
from gobblin_py.connectors.sql.dialects import dialect_for
from gobblin_py.connectors.sql.dialects.base import Dialect
from gobblin_py.connectors.sql.errors import SqlConfigError
from gobblin_py.connectors.sql.newest import EVENT_KEY, no_event_time
from gobblin_py.connectors.sql.planner import RangePlanner
from gobblin_py.connectors.sql.positions import Previous, previous_codec, previous_watermarks
from gobblin_py.connectors.sql.settings import QueryBasedSettings, entity_key, entity_names
from gobblin_py.connectors.sql.skipped import empty_units
from gobblin_py.connectors.sql.table_plan import TablePlan
from gobblin_py.connectors.sql.watermarks import (
    SIMPLE,
    TIMESTAMP,
    WatermarkCodec,
    parse_value,
    source_zone,
    watermark_type,
)
from gobblin_py.io.contained_paths import path_problem, relative_parts
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.contracts import EmptyPlan, Extractor, Source
from gobblin_py.sdk.errors import GobblinPyError, UsageError
from gobblin_py.sdk.job_keys import TaskSlotSettings
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.packing import worst_fit_decreasing
from gobblin_py.sdk.run_states import SourceState
from gobblin_py.sdk.settings import Context, problem_at
from gobblin_py.sdk.states import Extract, MultiWorkUnit, WorkUnit, WorkUnitState
from gobblin_py.store.hadoop_io import LONG_MAX
from gobblin_py.store.progress import replay_low
from gobblin_py.store.startpoints import Startpoint, StartpointKind, no_partition, startpoint_for

log = get_logger(__name__)

_KEYED = (K.DELTA_FIELDS, K.PK_FIELDS, K.PARTITION_COLUMN, K.START_VALUE, K.END_VALUE, K.UNBOUNDED_NUMERIC)
# table keys each work unit carries for its extractor
_PASSED = ((K.FETCH_SIZE, "fetch_size"), (K.FETCH_METHOD, "fetch_method"), (K.SKIP_COUNT, "skip_count"),
           (K.UNBOUNDED_NUMERIC, "unbounded_numeric"))
ROW_GROUP_KEYS = ("parquet.block.size", "writer.file.block.size")  # with their .N branch variants
ROW_GROUP_BYTES = 8 << 20
_KINDS = {"number": pa.types.is_integer, "decimal": pa.types.is_decimal, "float": pa.types.is_floating,
          "time": lambda t: pa.types.is_timestamp(t) or pa.types.is_date(t), "text": pa.types.is_string}


class QueryBasedSource(Source):
    """Pulls database tables incrementally (SQLite, PostgreSQL, MySQL/MariaDB).

    Startpoints (per table, unpartitioned tables): ``OLDEST`` reads the table again from ``start.value`` or its
    oldest row, ``UPCOMING`` skips every row there is now, ``SPECIFIC`` starts at a delta value (as
    ``start.value`` is written), ``TIMESTAMP`` starts at the earliest committed range holding a row whose event
    time (``source.event.time.column``, default the delta column when it holds times) reaches the time, and
    drops the older rows it reads again (never a row past the watermark, read for the first time); a time after
    every row read replays nothing: the table goes on from its watermark.
    """

    settings_class = QueryBasedSettings
    startpoint_kinds = frozenset({"OLDEST", "UPCOMING", "SPECIFIC", "TIMESTAMP"})

    @classmethod
    def check_startpoint(cls, props: Mapping[str, str], urn: str, partition: str, point: Startpoint) -> None:
        """No partition; a SPECIFIC value must be a watermark of the table's type, and a TIMESTAMP needs rows with
        an event time (not an id-watermarked table without ``source.event.time.column``)."""
        no_partition("QueryBasedSource", partition)
        configured = watermark_type(props.get(entity_key(props, urn, K.WATERMARK_TYPE)))
        if point.kind is StartpointKind.TIMESTAMP:
            if configured == SIMPLE and not (props.get(entity_key(props, urn, EVENT_KEY)) or "").strip():
                delta = (props.get(entity_key(props, urn, K.DELTA_FIELDS)) or "?").split(",")[0].strip()
                raise no_event_time(urn, delta)
            return
        if point.kind is not StartpointKind.SPECIFIC:
            return
        value = str(point.value)
        try:
            if configured is not None:  # the zone only moves CURRENTDAY-n, which is valid in any zone
                parsed = parse_value(value, configured, "value", dt.timezone.utc)
            else:  # the column decides at the run: a whole number or a time
                try:
                    parsed = parse_value(value, SIMPLE, "value", dt.timezone.utc)
                except UsageError:
                    parsed = parse_value(value, TIMESTAMP, "value", dt.timezone.utc)
            if not -LONG_MAX - 1 <= parsed <= LONG_MAX:
                raise UsageError(f"value={value}: beyond a watermark's range (a Java long)")
        except UsageError as exc:
            raise UsageError(f"value {value!r} is not a watermark of table {urn} "
                             f"({configured or 'a whole number or a time'}): {exc}") from None
    default_driver: str | None = None

    @classmethod
    def newest_event_ms(cls, props: Mapping[str, str], urn: str, partition: str) -> int | None:
        """The newest event time of table ``urn``'s rows: ``MAX`` of its event column (see :mod:`.newest`)."""
        return newest.newest_event_ms(props, urn, cls.default_driver)

    @classmethod
    def validate(cls, props: Mapping[str, str]) -> list[ConfigError]:
        """Each table's own values (``source.querybased.entity.<table>.<key>``) checked as the job-level ones are."""
        key = next((k for k in ("source.entities", "source.entity", "extract.table.name") if props.get(k)),
                   "source.entities")
        tables = [name.strip() for name in (props.get(key) or "").split(",") if name.strip()]
        problems: list[ConfigError] = []
        if not tables:
            problems.append(problem_at(props, "source.entities", "is not set",
                                       "name the tables to pull (a comma list), or set extract.table.name"))
        for table in tables:  # a table's name becomes its output folder, unless it is given one
            renamed = props.get(f"{K.ENTITY_PREFIX}{table}.extract.table.name") or (
                key == "source.entity" and props.get("extract.table.name"))
            problem = None if renamed else path_problem(table) or path_problem(table.split(".", 1)[-1])
            if problem:
                problems.append(problem_at(props, key, f"table {table!r} {problem}",
                                           "its name becomes a folder below the final folder: rename the table, "
                                           f"or give it {K.ENTITY_PREFIX}<table>.extract.table.name"))
        for entity in dict.fromkeys(tables + entity_names(props)):
            for found in QueryBasedSettings.problems(props, Context(entity=entity)):
                specific = entity_key(props, entity, found.key) if found.key else None
                if specific and specific != found.key:
                    found = problem_at(props, specific, found.problem, found.hint)
                problems.append(found)
        return problems

    # ------------------------------------------------------------------ planning

    def get_workunits(self, state: SourceState) -> list[WorkUnit]:
        settings = QueryBasedSettings.load(state)
        config = ConnectionConfig.from_settings(settings, self.default_driver)
        dialect = dialect_for(config)
        tables = settings.tables()
        if not tables:
            raise UsageError("no table to pull: set extract.table.name (or source.entities, a comma list of tables)")
        entities = [t for t in tables if settings.passes(t)]
        skipped = [t for t in tables if t not in entities]
        previous = state.previous_workunit_states_by_urn()
        planned: dict[str, list[WorkUnit]] = {}
        frontiers: dict[str, Previous] = {}
        started = time.time()
        if entities:
            conn = dialect.connect(read_only_snapshot=False)
            try:
                for entity in entities:
                    try:
                        planned[entity], frontiers[entity] = self._plan_table(state, entity, dialect, conn,
                                                                              previous.get(entity, []))
                    except GobblinPyError:
                        raise
                    except Exception as exc:  # noqa: BLE001 - driver errors become one clear line
                        raise dialect.translate(exc, f"planning table {entity}") from None
            finally:
                dialect.close(conn)
        units = [u for entity in entities for u in planned[entity]]
        if settings.skipped_mode == K.EMPTY_WORKUNIT:
            units += empty_units(state, previous, planned, frontiers, skipped)
        if skipped:
            log.info("sql_tables_skipped", tables=skipped, mode=settings.skipped_mode)
        if not units:
            self._why_empty = _why_empty(entities, skipped, frontiers)
        packed = pack(units, settings.max_mappers)
        log.info("sql_planned", tables=len(entities), work_units=len(units), tasks_groups=len(packed),
                 seconds=round(time.time() - started, 3), connection=config.describe())
        return packed

    def _plan_table(self, state: SourceState, entity: str, dialect: Dialect, conn: Any,
                    previous_units: list[WorkUnitState]) -> tuple[list[WorkUnit], Previous]:
        settings = QueryBasedSettings.load(state, entity=entity)
        keys = {key: entity_key(state, entity, key) for key in _KEYED}
        found = _table_columns(settings, keys, entity, dialect, conn)
        class_name = text(settings.watermark_class)
        is_full = settings.is_full or found.table_type == "SNAPSHOT_ONLY"
        prev = Previous()
        if not is_full and previous_units:
            prev = previous_watermarks(state, previous_units,
                                       previous_codec(previous_units, settings.watermark_type, class_name))
        if found.table_type == "SNAPSHOT_APPEND" and not is_full and prev.empty:
            is_full = True  # the first run of a snapshot_append table is its snapshot
        output = _output_table(state, entity, found.table)
        relative_parts(output, f"table {entity!r}: its output name")  # it becomes a folder below the final folder
        extract = Extract.create(found.table_type, settings.namespace or "", output)
        if is_full:
            extract.set_prop("extract.is.full", "true")
            extract.set_prop("extract.full.run.time", int(time.time() * 1000))
        base = _unit_props(state, settings, entity, found, dialect.name, class_name)
        if not found.delta_cols:
            unit = WorkUnit.create(extract)
            unit.add_all(base)
            log.info("sql_table_planned", table=entity, dataset=entity, table_type=found.table_type.lower(),
                     work_units=1, note="no delta column: the whole table")
            return [unit], prev
        delta_cols = found.delta_cols
        expr = (dialect.quote(delta_cols[0].name) if len(delta_cols) == 1
                else "COALESCE(" + ", ".join(dialect.quote(c.name) for c in delta_cols) + ")")
        indexed = len(delta_cols) == 1 and delta_cols[0].name in dialect.indexed_columns(conn, found.schema,
                                                                                          found.table)
        plan = TablePlan(entity=entity, settings=settings, keys=keys, dialect=dialect, conn=conn,
                         qualified=dialect.qualified(found.schema, found.table), expr=expr, indexed=indexed,
                         delta_names=", ".join(c.name for c in delta_cols),
                         codec=WatermarkCodec(settings.watermark_type or "simple", class_name), prev=prev,
                         is_full=is_full, extract=extract, base=base, zone=source_zone(settings.timezone),
                         slots=TaskSlotSettings.load(state).slots)
        _plan_startpoint(state, plan, found.part_col)
        planner = RangePlanner(plan)
        units = planner.partitioned(found.part_col) if found.part_col else planner.single()
        return _share_row_groups(units, plan.slots), prev

    def explain_empty_plan(self) -> EmptyPlan | None:
        """Why the last plan was empty: tables with no row to pull (a first run), or none past its watermark."""
        return getattr(self, "_why_empty", None)

    # ------------------------------------------------------------------ extraction

    def get_extractor(self, state: WorkUnitState) -> Extractor:
        from gobblin_py.connectors.sql.extractor import QueryBasedExtractor

        return QueryBasedExtractor(state, self.default_driver)


def _row_groups(state: SourceState) -> dict[str, str]:
    """Parquet row groups of :data:`ROW_GROUP_BYTES` for a table's rows, unless the job sizes them itself.

    The writer holds a row group's batches until it is written; rows arrive from a database in small batches
    (as a bare driver-to-Parquet script writes them, one row group each), so holding 32 MB (the writer's default)
    only costs memory: about twice that at its peak, for each work unit running.
    """
    if any(key.startswith(ROW_GROUP_KEYS) for key in state.properties):
        return {}
    return {ROW_GROUP_KEYS[0]: str(ROW_GROUP_BYTES)}


def _share_row_groups(units: list[WorkUnit], slots: int) -> list[WorkUnit]:
    """A table's work units that run at once hold together the row group memory one unit would: each writes
    row groups of :data:`ROW_GROUP_BYTES` ÷ the units at once (unless the job sized them itself)."""
    at_once = min(len(units), slots)
    if at_once > 1:
        for unit in units:
            if unit.properties.get(ROW_GROUP_KEYS[0]) == str(ROW_GROUP_BYTES):
                unit.set_prop(ROW_GROUP_KEYS[0], str(ROW_GROUP_BYTES // at_once))
    return units


def _why_empty(entities: list[str], skipped: list[str], frontiers: Mapping[str, Previous]) -> EmptyPlan:
    """The reason no table planned a work unit: every table filtered out, tables without a row to pull (never
    pulled before: nothing at all), or tables without a row past their watermark (nothing new)."""
    if not entities:
        return EmptyPlan(f"every table is filtered out ({', '.join(skipped)})", nothing_found=True)
    old = [e for e in entities if not frontiers[e].empty]
    new = [e for e in entities if frontiers[e].empty]
    parts = ([f"no row past the watermark of {_tables(old)}"] if old else []) + (
        [f"{_tables(new)} {'has' if len(new) == 1 else 'have'} no row to pull"] if new else [])
    return EmptyPlan("; ".join(parts), nothing_found=not old)


def _tables(names: list[str]) -> str:
    return ("table " if len(names) == 1 else "tables ") + ", ".join(names)


def _output_table(state: SourceState, entity: str, table: str) -> str:
    """The output table's name: the table's own ``extract.table.name``, the job's with ``source.entity``, or the
    table (``$`` and ``&`` replaced)."""
    own = state.get_prop(f"{K.ENTITY_PREFIX}{entity}.extract.table.name")
    if own:
        return own
    if state.get_prop("source.entities") is None and state.get_prop("source.entity") is not None:
        named = state.get_prop("extract.table.name")
        if named:
            return named
    return re.sub(r"[$&]", "_", table)


def _column(columns: list[ColumnSpec], name: str, key: str, table: str) -> ColumnSpec:
    for spec in columns:
        if spec.name == name:
            return spec
    folded = [spec for spec in columns if spec.name.lower() == name.lower()]
    if len(folded) == 1:
        return folded[0]
    raise SqlConfigError(
        f"{key}={name}: table {table} has no column {name!r} (it has {', '.join(c.name for c in columns)})"
    )


def _kind_of(spec: ColumnSpec) -> str:
    return next((kind for kind, test in _KINDS.items() if test(spec.type)), str(spec.type))


def _check_delta_columns(delta_cols: list[ColumnSpec], key: str) -> None:
    """Delta columns that can order rows: no booleans or bytes, and several only of one kind (COALESCE)."""
    for col in delta_cols:
        if pa.types.is_boolean(col.type) or pa.types.is_binary(col.type):
            raise SqlConfigError(
                f"{key}={col.name}: a {col.db_type or col.type} column cannot order rows "
                "into watermark ranges; use a numeric, date or timestamp column"
            )
    kinds = {_kind_of(c) for c in delta_cols}
    numeric = {"number", "decimal", "float"}
    if len(kinds) > 1 and not kinds <= numeric and not kinds <= {"time", "text"}:
        listed = ", ".join(f"{c.name} ({c.db_type or c.type})" for c in delta_cols)
        raise SqlConfigError(f"{key}={','.join(c.name for c in delta_cols)}: the delta columns hold different kinds "
                             f"of values ({listed}); COALESCE needs columns of one kind: all numbers or all times")


def pack(units: list[WorkUnit], max_mappers: int) -> list[WorkUnit]:
    """More work units than ``mr.job.max.mappers``: that many MultiWorkUnits, heaviest unit to lightest bin."""
    if len(units) <= max_mappers:
        return units

    def rows(unit: WorkUnit) -> int:
        return unit.get_prop_as_int(K.ESTIMATED_ROWS, 0) or 0

    ordered = sorted(units, key=lambda u: -rows(u))  # by rows first: units of 0 and 1 rows weigh the same
    bins = worst_fit_decreasing(ordered, max_mappers, lambda u: max(1, rows(u)))
    return [MultiWorkUnit(work_units=members) for members in bins if members]


class SqliteSource(QueryBasedSource):
    """``QueryBasedSource`` with ``source.conn.driver`` defaulting to ``sqlite``."""

    default_driver = "sqlite"


class PostgresqlSource(QueryBasedSource):
    """``QueryBasedSource`` with ``source.conn.driver`` defaulting to ``postgresql`` (Gobblin's PostgresqlSource)."""

    default_driver = "postgresql"


class MysqlSource(QueryBasedSource):
    """``QueryBasedSource`` with ``source.conn.driver`` defaulting to ``mysql`` (Gobblin's MysqlSource)."""

    default_driver = "mysql"


@dataclass(frozen=True)
class _TableColumns:
    """One table as the database names it, the columns its keys name, and its table type."""

    schema: str
    table: str
    delta_cols: list[ColumnSpec]
    pk_cols: list[ColumnSpec]
    part_col: ColumnSpec | None
    table_type: str


def _table_columns(settings: QueryBasedSettings, keys: dict[str, str], entity: str, dialect: Dialect,
                   conn: Any) -> _TableColumns:
    """The table ``entity`` names, found in the database, with the columns its keys name (each checked)."""
    schema_name, table_name = text(settings.schema), entity
    if "." in entity and not schema_name:
        schema_name, table_name = entity.split(".", 1)
    schema, table = dialect.resolve_table(conn, schema_name, table_name)
    unbounded = parse_arrow_type(settings.unbounded_numeric, keys[K.UNBOUNDED_NUMERIC])
    columns = dialect.describe(conn, schema, table, unbounded)
    delta_cols = [_column(columns, c, keys[K.DELTA_FIELDS], table) for c in settings.delta_fields]
    pk_cols = [_column(columns, c, keys[K.PK_FIELDS], table) for c in settings.pk_fields]
    _check_delta_columns(delta_cols, keys[K.DELTA_FIELDS])
    part_name = text(settings.partition_column)
    part_col = _column(columns, part_name, keys[K.PARTITION_COLUMN], table) if part_name else None
    table_type = (settings.table_type or ("append_only" if delta_cols else "snapshot_only")).upper()
    if table_type != "SNAPSHOT_ONLY" and not delta_cols:
        raise UsageError(
            f"table {entity}: {table_type.lower()} needs a delta column to pull increments "
            f"({keys[K.DELTA_FIELDS]}), or use extract.table.type=snapshot_only"
        )
    return _TableColumns(schema, table, delta_cols, pk_cols, part_col, table_type)


def _unit_props(state: SourceState, settings: QueryBasedSettings, entity: str, found: _TableColumns, driver: str,
                class_name: str | None) -> dict[str, str]:
    """The properties every work unit of the table carries to its extractor."""
    base = {
        "source.entity": entity, "dataset.urn": entity, K.SCHEMA: found.schema, K.TABLE: found.table,
        K.DELTA_FIELDS: ",".join(c.name for c in found.delta_cols),
        K.PK_FIELDS: ",".join(c.name for c in found.pk_cols), K.WATERMARK_RANGE: K.HALF_OPEN, K.DRIVER: driver,
    }
    for key, field_name in _PASSED:
        if state.get_prop(entity_key(state, entity, key)) is not None:
            value = getattr(settings, field_name)
            base[key] = str(value).lower() if isinstance(value, bool) else str(value)
    if class_name:
        base[K.WATERMARK_CLASS] = class_name
    base.update(_row_groups(state))
    return base


def _plan_startpoint(state: SourceState, plan: TablePlan, part_col: ColumnSpec | None) -> None:
    """The operator's startpoint for the table, on ``plan`` (refused for a partitioned table)."""
    point = startpoint_for(state, plan.entity)
    if point is None:
        return
    if part_col is not None:
        raise UsageError(f"table {plan.entity}: startpoints are for tables without "
                         "source.querybased.partition.column; clear it with `gpy state startpoint clear`")
    plan.startpoint = point
    if point.kind is StartpointKind.TIMESTAMP:
        plan.replay = replay_low(state.previous_dataset_states.get(plan.entity), "", point.timestamp_ms)
