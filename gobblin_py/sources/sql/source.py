"""``QueryBasedSource``: database tables pulled incrementally by a delta column, one dataset per table.

Planning (on the driver, one connection): for each table, find its columns, the previous run's watermarks
of its dataset URN, and ``MIN/MAX/COUNT`` of the delta column above the previous high watermark; then cut
``[low, high)`` into work units (``source.querybased.partition.interval``, at most
``source.max.number.of.partitions``), add the previous run's failed ranges again (``workunit.retry.policy``),
and pack everything into MultiWorkUnits by estimated rows when there are more than ``mr.job.max.mappers``.
Extraction (``QueryBasedExtractor``, on the executors) reads each range in Arrow batches.

See ``gobblin_py.sources.sql`` for the keys and ``watermarks`` for the algebra.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from gobblin_py.api import Extractor, Source
from gobblin_py.errors import GobblinPyError, UsageError
from gobblin_py.logs import get_logger
from gobblin_py.sources.retry import workunits_to_retry
from gobblin_py.sources.sql import delta as deltas
from gobblin_py.sources.sql import keys as K
from gobblin_py.sources.sql.connection import ConnectionConfig
from gobblin_py.sources.sql.dialects import ColumnSpec, Dialect, SqlConfigError, dialect_for, jsonable, parse_arrow_type
from gobblin_py.sources.sql.watermarks import (
    GOBBLIN_STEP,
    TIME_TYPES,
    WatermarkCodec,
    decode_multi,
    exclusive_high,
    floor_to_step,
    interval_units,
    max_watermark_limit,
    multi,
    parse_gobblin_digits,
    parse_value,
    source_zone,
    split_range,
    watermark_type,
)
from gobblin_py.state import Extract, MultiWorkUnit, SourceState, WatermarkInterval, WorkingState, WorkUnit, WorkUnitState

log = get_logger(__name__)

SINGLE = ""  # the key of the one position of an unpartitioned dataset


class EntityConfig:
    """Job keys as seen by one table: ``source.querybased.entity.<entity>.<key>`` overrides ``<key>``."""

    def __init__(self, state: SourceState, entity: str) -> None:
        self.state = state
        self.entity = entity

    def key_for(self, key: str) -> str:
        specific = f"{K.ENTITY_PREFIX}{self.entity}.{key}"
        return specific if self.state.get_prop(specific) is not None else key

    def get(self, key: str, default: str | None = None) -> str | None:
        value = self.state.get_prop(self.key_for(key))
        return default if value is None or not str(value).strip() else str(value).strip()

    def get_list(self, key: str) -> list[str]:
        value = self.get(key)
        return [item.strip() for item in value.split(",") if item.strip()] if value else []

    def get_int(self, key: str, default: int | None = None) -> int | None:
        value = self.get(key)
        if value is None:
            return default
        try:
            return int(value)
        except ValueError:
            raise UsageError(f"{self.key_for(key)}={value}: not a whole number") from None

    def get_float(self, key: str, default: float | None = None) -> float | None:
        value = self.get(key)
        if value is None:
            return default
        try:
            return float(value)
        except ValueError:
            raise UsageError(f"{self.key_for(key)}={value}: not a number") from None

    def get_bool(self, key: str, default: bool = False) -> bool:
        value = self.get(key)
        return default if value is None else value.lower() == "true"


@dataclass
class Retry:
    """A range of a previous run's work unit that did not commit, to pull again."""

    low: dict[str, int]
    high: dict[str, int]
    kind: str | None


@dataclass
class Previous:
    """What the previous runs left for one dataset: the next low watermark per position, ranges to retry."""

    frontier: dict[str, int] = field(default_factory=dict)
    retries: list[Retry] = field(default_factory=list)
    kind: str | None = None
    wtype: str | None = None
    partitioned: bool = False
    template: WorkUnitState | None = None

    @property
    def empty(self) -> bool:
        return not self.frontier and not self.retries


def _key(value: Any) -> str:
    return json.dumps(jsonable(value), sort_keys=True)


def previous_watermarks(state: SourceState, units: list[WorkUnitState], codec: WatermarkCodec,
                        retry: bool = True) -> Previous:
    """The next run's starting point from a dataset's previous work-unit states.

    Committed units move the frontier to their expected (= actual) high watermark. A unit that did not commit
    leaves the gap ``[actual high, expected high)``: pulled again as a retry when ``workunit.retry.policy``
    selects the unit (and ``retry``), else the frontier goes back to the gap's start so nothing is lost (the
    ranges after it are then pulled twice).
    """
    result = Previous()
    to_retry = {id(u) for u in workunits_to_retry(state, units)} if retry else set()
    ends: dict[str, int] = {}
    gaps: dict[str, int] = {}
    for unit in units:
        interval = unit.workunit.watermark_interval
        if interval is None or interval.low_json is None:
            continue
        try:
            decoded = _decode_unit(unit, codec)
        except (ValueError, TypeError) as exc:
            raise UsageError(
                f"dataset {unit.get_prop('dataset.urn', '')!r}: cannot read the previous run's watermark "
                f"({exc}); the watermark type or class changed? Reset the dataset's state, or set "
                f"{K.WATERMARK_OVERRIDE}=true with {K.START_VALUE}"
            ) from None
        if decoded is None:
            continue
        low, expected, actual, partitioned = decoded
        result.partitioned = result.partitioned or partitioned
        result.kind = unit.get_prop(K.DELTA_KIND) or result.kind
        result.wtype = unit.get_prop(K.WATERMARK_TYPE) or result.wtype
        result.template = unit
        committed = unit.working_state is WorkingState.COMMITTED
        for key, high in expected.items():
            ends[key] = max(ends.get(key, high), high)
        retried = not committed and id(unit) in to_retry
        if retried and any(actual[k] < expected[k] for k in expected):
            result.retries.append(Retry(dict(actual), dict(expected), unit.get_prop(K.DELTA_KIND)))
        elif not retried:
            for key, high in expected.items():
                if actual.get(key, high) < high:
                    gaps[key] = min(gaps.get(key, actual[key]), actual[key])
    for key, end in ends.items():
        result.frontier[key] = min(end, gaps[key]) if key in gaps else end
    return result


def _decode_unit(unit: WorkUnitState, codec: WatermarkCodec):
    """``(low, expected high, actual high, partitioned)`` of a previous unit, as half-open longs per key."""
    interval = unit.workunit.watermark_interval
    assert interval is not None
    actual_json = unit.actual_high_watermark()
    values = unit.get_prop(K.PARTITION_VALUES_STATE)
    if values:
        keys = [_key(v) for v in json.loads(values)]
        low = dict(zip(keys, decode_multi(interval.low_json)))
        high = dict(zip(keys, decode_multi(interval.expected_high_json)))
        actual = dict(zip(keys, decode_multi(actual_json))) if actual_json is not None else dict(low)
        partitioned = True
    else:
        low = {SINGLE: codec.decode_json(interval.low_json)}
        high = {SINGLE: codec.decode_json(interval.expected_high_json)}
        actual = {SINGLE: codec.decode_json(actual_json)} if actual_json is not None else dict(low)
        partitioned = False
    if unit.get_prop(K.WATERMARK_RANGE) != K.HALF_OPEN:
        # written by Gobblin: inclusive ranges, yyyyMMddHHmmss digits for time types, -1 for "none"
        wtype = watermark_type(unit.get_prop(K.WATERMARK_TYPE)) or codec.wtype
        step = GOBBLIN_STEP[wtype]

        def convert(value: int) -> int | None:
            if value == -1:
                return None
            if wtype in TIME_TYPES:
                parsed = parse_gobblin_digits(str(value))
                if parsed is None:
                    raise ValueError(f"{value} is not a yyyyMMddHHmmss time")
                return parsed
            return value

        low_c = {k: convert(v) for k, v in low.items()}
        if any(v is None for v in low_c.values()):
            return None
        high_c = {k: (convert(v) + step if convert(v) is not None else low_c[k]) for k, v in high.items()}
        actual_c = {}
        for k, v in actual.items():
            c = convert(v)
            actual_c[k] = low_c[k] if c is None or v == low[k] else c + step
        return low_c, high_c, actual_c, partitioned
    return low, high, actual, partitioned


class QueryBasedSource(Source):
    """Pulls database tables incrementally (SQLite, PostgreSQL; MySQL/MariaDB with PyMySQL installed)."""

    default_driver: str | None = None

    # ------------------------------------------------------------------ planning

    def get_workunits(self, state: SourceState) -> list[WorkUnit]:
        config = ConnectionConfig.from_state(state, self.default_driver)
        dialect = dialect_for(config)
        entities, skipped = self._entities(state)
        mode = (state.get_prop(K.SKIPPED_MODE) or K.URN_STATE).strip().lower()
        if mode not in (K.URN_STATE, K.EMPTY_WORKUNIT):
            raise UsageError(f"{K.SKIPPED_MODE}={mode}: use {K.URN_STATE} or {K.EMPTY_WORKUNIT}")
        previous = state.previous_workunit_states_by_urn()
        planned: dict[str, list[WorkUnit]] = {}
        frontiers: dict[str, tuple[Previous, EntityConfig]] = {}
        started = time.time()
        if entities:
            conn = dialect.connect(read_only_snapshot=False)
            try:
                for entity in entities:
                    ec = EntityConfig(state, entity)
                    try:
                        units, prev = self._plan_entity(state, ec, dialect, conn, previous.get(entity, []))
                    except GobblinPyError:
                        raise
                    except Exception as exc:  # noqa: BLE001 - driver errors become one clear line
                        raise dialect.translate(exc, f"planning table {entity}") from None
                    planned[entity] = units
                    frontiers[entity] = (prev, ec)
            finally:
                dialect.close(conn)
        units = [u for entity in entities for u in planned[entity]]
        if mode == K.EMPTY_WORKUNIT:
            units += self._empty_units(state, previous, planned, frontiers, skipped)
        if skipped:
            log.info("sql_tables_skipped", tables=skipped, mode=mode)
        max_mappers = state.get_prop_as_int("mr.job.max.mappers", 100) or 100
        packed = pack(units, max_mappers)
        log.info("sql_planned", tables=len(entities), work_units=len(units), tasks_groups=len(packed),
                 seconds=round(time.time() - started, 3), connection=config.describe())
        return packed

    @staticmethod
    def _entities(state: SourceState) -> tuple[list[str], list[str]]:
        names = (state.get_prop_as_list("source.entities") or state.get_prop_as_list("source.entity")
                 or state.get_prop_as_list("extract.table.name"))
        if not names:
            raise UsageError("no table to pull: set extract.table.name (or source.entities, a comma list of tables)")
        names = list(dict.fromkeys(names))
        white = state.get_prop_as_list(K.WHITELIST) + state.get_prop_as_list("entity.whitelist")
        black = state.get_prop_as_list(K.BLACKLIST) + state.get_prop_as_list("entity.blacklist")

        def matches(patterns: list[str], name: str) -> bool:
            for pattern in patterns:
                try:
                    if re.fullmatch(pattern, name, re.IGNORECASE):
                        return True
                except re.error as exc:
                    raise UsageError(f"table pattern {pattern!r}: {exc}") from None
            return False

        kept = [n for n in names if (not white or matches(white, n)) and not matches(black, n)]
        return kept, [n for n in names if n not in kept]

    def _plan_entity(self, state: SourceState, ec: EntityConfig, dialect: Dialect, conn: Any,
                     previous_units: list[WorkUnitState]) -> tuple[list[WorkUnit], Previous]:
        entity = ec.entity
        schema_name = ec.get(K.SCHEMA)
        table_name = entity
        if "." in entity and not ec.get(K.SCHEMA):
            schema_name, table_name = entity.split(".", 1)
        schema, table = dialect.resolve_table(conn, schema_name, table_name)
        unbounded = parse_arrow_type(ec.get(K.UNBOUNDED_NUMERIC, "decimal128(38,9)") or "", ec.key_for(K.UNBOUNDED_NUMERIC))
        columns = dialect.describe(conn, schema, table, unbounded)
        delta_cols = [_column(columns, c, ec.key_for(K.DELTA_FIELDS), table) for c in ec.get_list(K.DELTA_FIELDS)]
        pk_cols = [_column(columns, c, ec.key_for(K.PK_FIELDS), table) for c in ec.get_list(K.PK_FIELDS)]
        for col in delta_cols:
            if pa.types.is_boolean(col.type) or pa.types.is_binary(col.type):
                raise UsageError(
                    f"{ec.key_for(K.DELTA_FIELDS)}={col.name}: a {col.db_type or col.type} column cannot order rows "
                    "into watermark ranges; use a numeric, date or timestamp column"
                )
        part_col = ec.get(K.PARTITION_COLUMN)
        part_col = _column(columns, part_col, ec.key_for(K.PARTITION_COLUMN), table) if part_col else None
        table_type = (ec.get(K.TABLE_TYPE) or ("APPEND_ONLY" if delta_cols else "SNAPSHOT_ONLY")).upper()
        if table_type not in K.TABLE_TYPES:
            raise UsageError(f"{ec.key_for(K.TABLE_TYPE)}={table_type}: use snapshot_only, append_only or snapshot_append")
        if table_type != "SNAPSHOT_ONLY" and not delta_cols:
            raise UsageError(
                f"table {entity}: {table_type.lower()} needs a delta column to pull increments "
                f"({ec.key_for(K.DELTA_FIELDS)}), or use extract.table.type=snapshot_only"
            )
        wtype_cfg = watermark_type(ec.get(K.WATERMARK_TYPE))
        class_name = ec.get(K.WATERMARK_CLASS)
        if class_name and part_col:
            raise UsageError(f"table {entity}: {K.WATERMARK_CLASS} cannot be combined with {K.PARTITION_COLUMN} "
                             "(partitioned datasets use MultiLongWatermark)")
        codec = WatermarkCodec(wtype_cfg or "simple", class_name)
        override = ec.get_bool(K.WATERMARK_OVERRIDE)
        is_full = ec.get_bool("extract.is.full") or table_type == "SNAPSHOT_ONLY"
        prev = Previous()
        if not is_full and previous_units:
            prev_type = watermark_type(next((u.get_prop(K.WATERMARK_TYPE) for u in previous_units
                                             if u.get_prop(K.WATERMARK_TYPE)), None))
            prev = previous_watermarks(state, previous_units, WatermarkCodec(prev_type or wtype_cfg or "simple", class_name))
        if table_type == "SNAPSHOT_APPEND" and not is_full and prev.empty:
            is_full = True  # the first run of a snapshot_append table is its snapshot
        urn = entity
        out_table = (state.get_prop(f"{K.ENTITY_PREFIX}{entity}.extract.table.name")
                     or (state.get_prop("extract.table.name") if state.get_prop("source.entities") is None
                         and state.get_prop("source.entity") is not None else None)
                     or re.sub(r"[$&]", "_", table))
        extract = Extract.create(table_type, ec.get("extract.namespace", "") or "", out_table)
        if is_full:
            extract.set_prop("extract.is.full", "true")
            extract.set_prop("extract.full.run.time", int(time.time() * 1000))
        base = {
            "source.entity": entity,
            "dataset.urn": urn,
            K.SCHEMA: schema,
            K.TABLE: table,
            K.DELTA_FIELDS: ",".join(c.name for c in delta_cols),
            K.PK_FIELDS: ",".join(c.name for c in pk_cols),
            K.WATERMARK_RANGE: K.HALF_OPEN,
            "source.conn.driver": dialect.name,
        }
        for key in (K.FETCH_SIZE, K.FETCH_METHOD, K.SKIP_COUNT, K.UNBOUNDED_NUMERIC):
            if ec.get(key) is not None:
                base[key] = ec.get(key)
        if class_name:
            base[K.WATERMARK_CLASS] = class_name
        if not delta_cols:
            unit = WorkUnit.create(extract)
            unit.add_all(base)
            log.info("sql_table_planned", table=entity, dataset=urn, table_type=table_type.lower(), work_units=1,
                     note="no delta column: the whole table")
            return [unit], prev
        expr = (dialect.quote(delta_cols[0].name) if len(delta_cols) == 1
                else "COALESCE(" + ", ".join(dialect.quote(c.name) for c in delta_cols) + ")")
        planner = _RangePlanner(state, ec, dialect, conn, schema, table, expr, codec, wtype_cfg, prev,
                                is_full, override, extract, base)
        if part_col:
            return planner.partitioned(part_col), prev
        return planner.single(), prev

    def _empty_units(self, state: SourceState, previous: dict[str, list[WorkUnitState]],
                     planned: dict[str, list[WorkUnit]], frontiers: dict[str, tuple[Previous, EntityConfig]],
                     skipped: list[str]) -> list[WorkUnit]:
        """Gobblin's solution 1: an empty work unit (low = expected high) for every known dataset not pulled."""
        units = []
        for urn, states in sorted(previous.items()):
            if planned.get(urn):
                continue
            if urn in frontiers:
                prev, ec = frontiers[urn]
            else:
                ec = EntityConfig(state, urn)
                prev_type = watermark_type(next((u.get_prop(K.WATERMARK_TYPE) for u in states
                                                 if u.get_prop(K.WATERMARK_TYPE)), None))
                codec = WatermarkCodec(prev_type or "simple", next((u.get_prop(K.WATERMARK_CLASS) for u in states
                                                                    if u.get_prop(K.WATERMARK_CLASS)), None))
                prev = previous_watermarks(state, states, codec, retry=False)
            if prev.template is None or not prev.frontier:
                continue
            template = prev.template
            # retries are not run for a skipped dataset: their gaps go back into the frontier
            frontier = dict(prev.frontier)
            for retry in prev.retries:
                for key, low in retry.low.items():
                    if low < retry.high[key]:
                        frontier[key] = min(frontier.get(key, low), low)
            extract = Extract.create(template.get_prop(K.TABLE_TYPE_EXTRACT) or "APPEND_ONLY",
                                     template.get_prop("extract.namespace") or "", template.get_prop("extract.table.name") or urn)
            wtype = watermark_type(template.get_prop(K.WATERMARK_TYPE)) or "simple"
            codec = WatermarkCodec(wtype, template.get_prop(K.WATERMARK_CLASS))
            if prev.partitioned:
                values = json.loads(template.get_prop(K.PARTITION_VALUES_STATE) or "[]")
                keys = [_key(v) for v in values]
                keys_known = [k for k in keys if k in frontier]
                values = [v for v, k in zip(values, keys) if k in frontier]
                vector = multi([frontier[k] for k in keys_known])
                interval = WatermarkInterval.of(vector, vector)
            else:
                mark = codec.make(frontier[SINGLE])
                interval = WatermarkInterval.of(mark, mark)
            unit = WorkUnit.create(extract, interval)
            for key in ("source.entity", K.SCHEMA, K.TABLE, K.DELTA_FIELDS, K.PK_FIELDS, K.WATERMARK_TYPE,
                        K.WATERMARK_CLASS, K.DELTA_KIND, K.PARTITION_COLUMN, "source.conn.driver"):
                value = template.get_prop(key)
                if value is not None:
                    unit.set_prop(key, value)
            if prev.partitioned:
                unit.set_prop(K.PARTITION_VALUES_STATE, json.dumps(values))
            unit.set_prop("dataset.urn", urn)
            unit.set_prop(K.WATERMARK_RANGE, K.HALF_OPEN)
            unit.set_prop(K.EMPTY, "true")
            unit.set_prop(K.ESTIMATED_ROWS, 0)
            units.append(unit)
            log.info("sql_empty_workunit", dataset=urn, reason="skipped" if urn in skipped else "nothing new",
                     watermark=codec.render(frontier[SINGLE]) if not prev.partitioned else "multi")
        return units

    # ------------------------------------------------------------------ extraction

    def get_extractor(self, state: WorkUnitState) -> Extractor:
        from gobblin_py.sources.sql.extractor import QueryBasedExtractor

        return QueryBasedExtractor(state, self.default_driver)


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


class _RangePlanner:
    """Plans the watermark ranges of one table with a delta column (unpartitioned or partitioned)."""

    def __init__(self, state: SourceState, ec: EntityConfig, dialect: Dialect, conn: Any, schema: str, table: str,
                 expr: str, codec: WatermarkCodec, wtype_cfg: str | None, prev: Previous, is_full: bool,
                 override: bool, extract: Extract, base: dict[str, str]) -> None:
        self.state, self.ec, self.dialect, self.conn = state, ec, dialect, conn
        self.qualified = dialect.qualified(schema, table)
        self.expr = expr
        self.codec = codec
        self.wtype_cfg = wtype_cfg
        self.prev = prev
        self.is_full = is_full
        self.override = override
        self.extract = extract
        self.base = base
        self.zone = source_zone(ec.get("source.timezone"))
        self.skip_count = ec.get_bool(K.SKIP_COUNT)

    # -- shared pieces

    def _wtype(self, kind: str) -> str:
        default = "simple" if kind == deltas.NUMBER else ("date" if kind in (deltas.DATE, deltas.TEXTDATE) else "timestamp")
        return deltas.check_kind(kind, self.wtype_cfg or default, self.base[K.DELTA_FIELDS])

    def _high(self, max_long: int, wtype: str) -> int:
        high = exclusive_high(max_long, wtype)
        end = self.ec.get(K.END_VALUE)  # inclusive, as in Gobblin
        if end:
            high = min(high, exclusive_high(parse_value(end, wtype, self.ec.key_for(K.END_VALUE), self.zone), wtype))
        if wtype in TIME_TYPES:
            limit = max_watermark_limit(self.ec.get(K.MAX_WATERMARK_LIMIT), self.zone)
            if limit is not None:
                high = min(high, limit)
        return high

    def _start(self, wtype: str) -> int | None:
        start = self.ec.get(K.START_VALUE)
        if not start:
            return None
        return floor_to_step(parse_value(start, wtype, self.ec.key_for(K.START_VALUE), self.zone), wtype)

    def _low(self, key: str, min_long: int | None, wtype: str) -> tuple[int | None, bool]:
        """``(low, unbounded)``: the range start, and whether the range has no lower bound (full snapshot)."""
        start = self._start(wtype)
        if self.is_full or self.override:
            if start is not None:
                return start, False
            if self.is_full:
                return (floor_to_step(min_long, wtype) if min_long is not None else None), True
        if key in self.prev.frontier:
            return self.prev.frontier[key], False
        if start is not None:
            return start, False
        return (floor_to_step(min_long, wtype) if min_long is not None else None), False

    def _unit(self, low: dict[str, int], high: dict[str, int], wtype: str, kind: str, rows: int,
              partition_values: list[Any] | None = None, unbounded_low: bool = False) -> WorkUnit:
        if partition_values is None:
            interval = WatermarkInterval.of(self.codec_for(wtype).make(low[SINGLE]), self.codec_for(wtype).make(high[SINGLE]))
        else:
            keys = [_key(v) for v in partition_values]
            interval = WatermarkInterval.of(multi([low[k] for k in keys]), multi([high[k] for k in keys]))
        unit = WorkUnit.create(self.extract, interval)
        unit.add_all(self.base)
        unit.set_prop(K.WATERMARK_TYPE, wtype)
        unit.set_prop(K.DELTA_KIND, kind)
        unit.set_prop(K.ESTIMATED_ROWS, max(0, int(rows)))
        if unbounded_low:
            unit.set_prop(K.UNBOUNDED_LOW, "true")
        if partition_values is not None:
            unit.set_prop(K.PARTITION_COLUMN, self.ec.get(K.PARTITION_COLUMN))
            unit.set_prop(K.PARTITION_VALUES_STATE, json.dumps([jsonable(v) for v in partition_values]))
        return unit

    def codec_for(self, wtype: str) -> WatermarkCodec:
        if self.codec.wtype != wtype:
            self.codec = WatermarkCodec(wtype, self.codec.class_name)
        return self.codec

    def _carry(self, position: dict[str, int], wtype: str, kind: str) -> WorkUnit:
        """An empty unit at the dataset's frontier, so that a run of only retries does not pull it back."""
        unit = self._unit(position, position, wtype, kind, 0)
        unit.set_prop(K.EMPTY, "true")
        return unit

    def _retry_units(self, wtype: str, kind: str, partition_values: list[Any] | None = None) -> list[WorkUnit]:
        units = []
        for retry in self.prev.retries:
            if partition_values is None:
                if SINGLE not in retry.low:
                    continue
                unit = self._unit(retry.low, retry.high, wtype, retry.kind or kind, 0)
            else:
                values = [v for v in partition_values if _key(v) in retry.low]
                if not values:
                    continue
                unit = self._unit(retry.low, retry.high, wtype, retry.kind or kind, 0, values)
            unit.set_prop(K.RETRY, "true")
            units.append(unit)
        return units

    # -- an unpartitioned table

    def _stats(self, kind: str | None, frontier: int | None) -> tuple:
        expr = deltas.sql_expression(kind, self.expr, self.dialect.name)
        sql_where, params = "", []
        if frontier is not None and kind:
            sql_where = f" WHERE {expr} >= {self.dialect.param}"
            params = [deltas.to_param(frontier, kind)]
        count_sql = "0, 0" if self.skip_count else f"COUNT({expr}), COUNT(*)"
        return self.dialect.query(
            self.conn, f"SELECT MIN({expr}), MAX({expr}), {count_sql} FROM {self.qualified}{sql_where}", params
        )[0]

    def single(self) -> list[WorkUnit]:
        frontier = None if (self.is_full or self.override) else self.prev.frontier.get(SINGLE)
        known_kind = self.prev.kind if frontier is not None else None
        row = self._stats(known_kind, frontier)
        if row[1] is not None and known_kind is None and deltas.infer_kind(row[1], "") == deltas.TEXTZONE:
            known_kind = deltas.TEXTZONE  # times with zones: compare them normalised
            row = self._stats(known_kind, None)
        min_value, max_value, rows, all_rows = row[0], row[1], int(row[2] or 0), int(row[3] or 0)
        entity = self.ec.entity
        if max_value is None:
            kind = self.prev.kind or deltas.NUMBER
            wtype = watermark_type(self.prev.wtype) or self.wtype_cfg or "simple"
            retries = self._retry_units(wtype, kind)
            if retries and frontier is not None:
                retries.append(self._carry({SINGLE: frontier}, wtype, kind))
            log.info("sql_table_planned", table=entity, dataset=self.base["dataset.urn"], work_units=len(retries),
                     note="no rows above the low watermark")
            return retries
        kind = known_kind or deltas.infer_kind(max_value, self.base[K.DELTA_FIELDS])
        wtype = self._wtype(kind)
        if frontier is None and rows < all_rows and not self.is_full:
            log.warning("sql_null_delta_rows", table=entity, rows=all_rows - rows,
                        note="rows whose delta column is NULL are never pulled by append_only; use snapshot_append "
                             "or more delta fields (COALESCE)")
        low, unbounded = self._low(SINGLE, deltas.to_long(min_value, kind), wtype)
        high = self._high(deltas.to_long(max_value, kind), wtype)
        units = self._retry_units(wtype, kind)
        if units and frontier is not None and (low is None or high <= low):
            units.append(self._carry({SINGLE: frontier}, wtype, kind))
        if low is not None and high > low:
            interval = self.ec.get_float(K.PARTITION_INTERVAL, 0.0) or 0.0
            width = interval_units(interval, wtype) if interval > 0 else None
            max_parts = self.ec.get_int(K.MAX_PARTITIONS, 20) or 20
            pieces = split_range(low, high, width, max_parts, wtype)
            span = high - low
            for index, (lo, hi) in enumerate(pieces):
                estimate = rows * (hi - lo) / span if span else rows
                units.append(self._unit({SINGLE: lo}, {SINGLE: hi}, wtype, kind, estimate,
                                        unbounded_low=unbounded and index == 0))
        codec = self.codec_for(wtype)
        log.info("sql_table_planned", table=entity, dataset=self.base["dataset.urn"], watermark_type=wtype,
                 low=codec.render(low) if low is not None else "-", high=codec.render(high),
                 work_units=len(units), retried=len(self.prev.retries), rows_estimated=rows,
                 full=self.is_full)
        return units

    # -- a table whose rows belong to partitions, each with its own watermark (MultiLongWatermark)

    def partitioned(self, part_col: ColumnSpec) -> list[WorkUnit]:
        pcol = self.dialect.quote(part_col.name)
        configured = self.ec.get_list(K.PARTITION_VALUES)
        where, params = "", []
        if configured:
            where = f" WHERE {pcol} IN ({', '.join(self.dialect.param for _ in configured)})"
            params = configured
        def grouped(kind: str | None) -> list[tuple]:
            expr = deltas.sql_expression(kind, self.expr, self.dialect.name)
            return self.dialect.query(
                self.conn,
                f"SELECT {pcol}, MIN({expr}), MAX({expr}), COUNT({expr}) FROM {self.qualified}{where} GROUP BY {pcol}",
                params,
            )

        known_kind = self.prev.kind
        rows = grouped(known_kind)
        if known_kind is None and any(r[2] is not None and deltas.infer_kind(r[2], "") == deltas.TEXTZONE for r in rows):
            known_kind = deltas.TEXTZONE
            rows = grouped(known_kind)
        stats = {_key(r[0]): (r[0], r[1], r[2], int(r[3] or 0)) for r in rows if r[2] is not None}
        sample = next((s[2] for s in stats.values()), None)
        kind = known_kind or (deltas.infer_kind(sample, self.base[K.DELTA_FIELDS]) if sample is not None else deltas.NUMBER)
        wtype = self._wtype(kind) if sample is not None else (watermark_type(self.prev.wtype) or self.wtype_cfg or "simple")
        values: dict[str, Any] = {}
        template_values = json.loads(self.prev.template.get_prop(K.PARTITION_VALUES_STATE) or "[]") if self.prev.template else []
        for value in template_values:
            values[_key(value)] = value
        for key, (value, *_rest) in stats.items():
            values.setdefault(key, jsonable(value))
        low: dict[str, int] = {}
        high: dict[str, int] = {}
        active: list[tuple[str, int]] = []
        for key in sorted(values):
            if key in stats:
                _, min_v, max_v, count = stats[key]
                lo, _unbounded = self._low(key, deltas.to_long(min_v, kind), wtype)
                hi = self._high(deltas.to_long(max_v, kind), wtype)
                lo = hi if lo is None else lo
                if hi > lo:
                    low[key], high[key] = lo, hi
                    active.append((key, count))
                    continue
            if key in self.prev.frontier:  # nothing new: keep the position in the state
                low[key] = high[key] = self.prev.frontier[key]
        units = self._retry_units(wtype, kind, [values[k] for k in sorted(values)])
        if active:
            count = min(len(active), max(1, self.ec.get_int(K.MAX_PARTITIONS, 20) or 20))
            bins: list[list[str]] = [[] for _ in range(count)]
            loads = [0] * count
            for key, rows_in in sorted(active, key=lambda item: (-item[1], item[0])):
                target = loads.index(min(loads))
                bins[target].append(key)
                loads[target] += max(1, rows_in)
            idle = [k for k in sorted(low) if k not in dict(active)]
            bins[0].extend(idle)
            for members, load in zip(bins, loads):
                members.sort()
                units.append(self._unit(low, high, wtype, kind, load, [values[k] for k in members]))
        elif units and low:
            # only retries: a unit that carries every position forward, so the new state keeps them
            carry = self._unit(low, high, wtype, kind, 0, [values[k] for k in sorted(low)])
            carry.set_prop(K.EMPTY, "true")
            units.append(carry)
        log.info("sql_table_planned", table=self.ec.entity, dataset=self.base["dataset.urn"], watermark_type=wtype,
                 partitions=len(values), active_partitions=len(active), work_units=len(units))
        return units


def pack(units: list[WorkUnit], max_mappers: int) -> list[WorkUnit]:
    """More work units than ``mr.job.max.mappers``: that many MultiWorkUnits, heaviest unit to lightest bin."""
    if len(units) <= max_mappers:
        return units
    bins = [MultiWorkUnit() for _ in range(max_mappers)]
    loads = [0] * max_mappers
    weighted = sorted(units, key=lambda u: -(u.get_prop_as_int(K.ESTIMATED_ROWS, 0) or 0))
    for unit in weighted:
        target = loads.index(min(loads))
        bins[target].work_units.append(unit)
        loads[target] += max(1, unit.get_prop_as_int(K.ESTIMATED_ROWS, 0) or 0)
    return [b for b in bins if b.work_units]


class SqliteSource(QueryBasedSource):
    """``QueryBasedSource`` with ``source.conn.driver`` defaulting to ``sqlite``."""

    default_driver = "sqlite"


class PostgresqlSource(QueryBasedSource):
    """``QueryBasedSource`` with ``source.conn.driver`` defaulting to ``postgresql`` (Gobblin's PostgresqlSource)."""

    default_driver = "postgresql"


class MysqlSource(QueryBasedSource):
    """``QueryBasedSource`` with ``source.conn.driver`` defaulting to ``mysql`` (Gobblin's MysqlSource)."""

    default_driver = "mysql"
