"""The watermark ranges of one table with a delta column: ``[low, high)`` cut into work units.

An unpartitioned table reads ``MIN/MAX/COUNT`` of its delta expression above the previous high watermark and
cuts the span by ``partition.interval`` (at most ``max.number.of.partitions`` pieces); a table with a
``partition.column`` keeps one position per partition value and groups the active partitions into at most that
many work units by row count. The previous runs' failed ranges are planned again as they were.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from gobblin_py.connectors.sql import delta as deltas
from gobblin_py.connectors.sql import keys as K
from gobblin_py.connectors.sql.arrow_types import ColumnSpec, jsonable
from gobblin_py.connectors.sql.newest import no_event_time
from gobblin_py.connectors.sql.positions import SINGLE, position_key
from gobblin_py.connectors.sql.table_plan import TablePlan
from gobblin_py.connectors.sql.watermarks import (
    DATE,
    STEP,
    TIME_TYPES,
    WatermarkCodec,
    exclusive_high,
    floor_to_step,
    interval_units,
    max_watermark_limit,
    multi,
    parse_value,
    split_range,
    watermark_type,
)
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.packing import worst_fit_decreasing
from gobblin_py.sdk.states import WorkUnit
from gobblin_py.sdk.watermarks import WatermarkInterval
from gobblin_py.store.startpoints import SKIPPED_KEY, UNKNOWN, StartpointKind, mark_applied

log = get_logger(__name__)


class RangePlanner:
    """Plans the work units of one table with a delta column (unpartitioned or partitioned)."""

    def __init__(self, plan: TablePlan) -> None:
        self.plan = plan
        self.settings = plan.settings
        self.prev = plan.prev
        self.codec = plan.codec
        self.wtype_cfg = plan.settings.watermark_type
        self._exact = False  # a TIMESTAMP startpoint's time is exactly the queries' lower bound
        self._replays = True  # False: a TIMESTAMP startpoint with nothing to replay (the table goes on as it stands)
        self._fresh: set[int] = set()  # the work units of a replay that read only rows past the watermark

    # -- shared pieces

    def _wtype(self, kind: str) -> str:
        default = "simple" if kind == deltas.NUMBER else ("date" if kind in (deltas.DATE, deltas.TEXTDATE) else "timestamp")
        return deltas.check_kind(kind, self.wtype_cfg or default, self.plan.delta_names)

    def _kind(self, value: Any) -> str:
        return deltas.infer_kind(value, self.plan.delta_names)

    def _high(self, max_long: int, wtype: str) -> int:
        high = exclusive_high(max_long, wtype)
        end = (self.settings.end_value or "").strip()  # inclusive, as in Gobblin
        if end:
            high = min(high, exclusive_high(parse_value(end, wtype, self.plan.keys[K.END_VALUE], self.plan.zone), wtype))
        if wtype in TIME_TYPES:
            limit = max_watermark_limit(self.settings.max_watermark_limit, self.plan.zone)
            if limit is not None:
                high = min(high, limit)
        return high

    def _start(self, wtype: str) -> int | None:
        start = (self.settings.start_value or "").strip()
        if not start:
            return None
        return floor_to_step(parse_value(start, wtype, self.plan.keys[K.START_VALUE], self.plan.zone), wtype)

    def _low(self, key: str, min_long: int | None, wtype: str) -> tuple[int | None, bool]:
        """``(low, unbounded)``: the range start, and whether the range has no lower bound (full snapshot)."""
        start = self._start(wtype)
        if self.plan.is_full or self.settings.override:
            if start is not None:
                return start, False
            if self.plan.is_full:
                return (floor_to_step(min_long, wtype) if min_long is not None else None), True
        if key in self.prev.frontier:
            return self.prev.frontier[key], False
        if start is not None:
            return start, False
        return (floor_to_step(min_long, wtype) if min_long is not None else None), False

    def _unit(self, low: dict[str, int], high: dict[str, int], wtype: str, kind: str, rows: float,
              partition_values: list[Any] | None = None, unbounded_low: bool = False) -> WorkUnit:
        if partition_values is None:
            codec = self.codec_for(wtype)
            interval = WatermarkInterval.of(codec.make(low[SINGLE]), codec.make(high[SINGLE]))
        else:
            keys = [position_key(v) for v in partition_values]
            interval = WatermarkInterval.of(multi([low[k] for k in keys]), multi([high[k] for k in keys]))
        unit = WorkUnit.create(self.plan.extract, interval)
        unit.add_all(self.plan.base)
        unit.set_prop(K.WATERMARK_TYPE, wtype)
        unit.set_prop(K.DELTA_KIND, kind)
        unit.set_prop(K.ESTIMATED_ROWS, max(0, int(rows)))
        if unbounded_low:
            unit.set_prop(K.UNBOUNDED_LOW, "true")
        if partition_values is not None:
            unit.set_prop(K.PARTITION_COLUMN, self.settings.partition_column)
            unit.set_prop(K.PARTITION_VALUES_STATE, json.dumps([jsonable(v) for v in partition_values]))
        return unit

    def codec_for(self, wtype: str) -> WatermarkCodec:
        if self.codec.wtype != wtype:
            self.codec = WatermarkCodec(wtype, self.codec.class_name)
        return self.codec

    def _carry(self, position: dict[str, int], wtype: str, kind: str,
               partition_values: list[Any] | None = None) -> WorkUnit:
        """An empty unit at the dataset's frontier, so that a run of only retries does not pull it back."""
        unit = self._unit(position, position, wtype, kind, 0, partition_values)
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
                values = [v for v in partition_values if position_key(v) in retry.low]
                if not values:
                    continue
                unit = self._unit(retry.low, retry.high, wtype, retry.kind or kind, 0, values)
            unit.set_prop(K.RETRY, "true")
            units.append(unit)
        return units

    # -- an unpartitioned table

    def _stats(self, kind: str | None, frontier: int | None) -> tuple:
        """``(min, max, rows with a delta value, all rows)`` above ``frontier`` (the counts 0 with skip.count)."""
        dialect, conn, table = self.plan.dialect, self.plan.conn, self.plan.qualified
        expr = deltas.sql_expression(kind, self.plan.expr, dialect.name)
        sql_where, params = "", []
        if frontier is not None and kind:
            sql_where = f" WHERE {expr} >= {dialect.param}"
            params = [deltas.to_param(frontier, kind)]
        skip = self.settings.skip_count
        if not (self.plan.indexed and expr == self.plan.expr):
            count_sql = "0, 0" if skip else f"COUNT({expr}), COUNT(*)"
            return dialect.query(conn, f"SELECT MIN({expr}), MAX({expr}), {count_sql} FROM {table}{sql_where}",
                                 params)[0]
        # one aggregate per subquery, so that each is read from the index (or, for COUNT(*), the smallest one)
        parts = [f"(SELECT {agg} FROM {table}{sql_where})" for agg in
                 (f"MIN({expr})", f"MAX({expr})", *(() if skip else ("COUNT(*)",)))]
        row = dialect.query(conn, "SELECT " + ", ".join(parts), params * len(parts))[0]
        low, high, rows = row[0], row[1], 0 if skip else int(row[2] or 0)
        if sql_where or skip:
            return low, high, rows, rows  # above a frontier no delta is NULL
        # the rows whose delta is NULL (never pulled by append_only), counted only when there are some
        nulls = 0
        if dialect.query(conn, f"SELECT 1 FROM {table} WHERE {expr} IS NULL LIMIT 1"):
            nulls = int(dialect.query(conn, f"SELECT COUNT(*) FROM {table} WHERE {expr} IS NULL")[0][0])
        return low, high, rows - nulls, rows

    def _parts(self, rows: int) -> int:
        """How many ranges a range of ``rows`` rows is read in when no interval is set: one per
        ``split.rows`` rows (rounded up; one when the rows were not counted), and at least one per task slot
        from ``split.min.rows`` rows, at most ``max.number.of.partitions`` — equal widths of the delta column,
        so about as many rows each when its values are spread evenly."""
        per, least = self.settings.split_rows, self.settings.split_min_rows
        parts = -(-rows // per) if 0 < per < rows else 1
        if 0 < least <= rows:
            parts = max(parts, self.plan.slots)
        return max(1, min(self.settings.max_partitions, parts))

    def _start_at(self, frontier: int | None, min_long: int | None, high: int, wtype: str) -> int | None:
        """Where an operator's startpoint starts the range (the checkpoint when there is none)."""
        point = self.plan.startpoint
        if point is None:
            return frontier
        if point.kind is StartpointKind.UPCOMING:
            return high
        if point.kind is StartpointKind.TIMESTAMP:
            found, low = self.plan.replay
            if not found or (low is not None and frontier is not None and int(low) >= frontier):
                return self._nothing_to_replay(frontier)  # every committed row is older than the time
            if low is not None:
                return int(low)
        elif point.kind is StartpointKind.SPECIFIC:
            return floor_to_step(parse_value(str(point.value), wtype, f"startpoint {point.id}", self.plan.zone), wtype)
        start = self._start(wtype)  # OLDEST (or a replay with no history): from the start value or the oldest row
        return start if start is not None else (floor_to_step(min_long, wtype) if min_long is not None else None)

    def _nothing_to_replay(self, frontier: int | None) -> int | None:
        """A TIMESTAMP startpoint whose time is after every row read: the table goes on from where it stands, and
        none of the rows not yet read is skipped or dropped (the startpoint is consumed all the same)."""
        point = self.plan.startpoint
        assert point is not None
        self._replays = False
        log.warning("startpoint_nothing_to_replay", table=self.plan.entity, startpoint=point.describe(),
                    note="no row read so far is at or after the time: nothing to replay; the table goes on from its "
                         "watermark and no row not yet read is skipped (--upcoming or --value skip ahead)")
        return frontier

    def single(self) -> list[WorkUnit]:
        units = self._single()
        if self.plan.startpoint is not None:
            for unit in units:
                mark_applied(unit, self.plan.startpoint,
                             filtered=self._replays and not self._exact and id(unit) not in self._fresh)
        return units

    def _time_bound(self, wtype: str, kind: str) -> int | None:
        """Where a TIMESTAMP startpoint starts a table whose one delta column holds the event times: the time as
        a delta value, for ``WHERE delta >= bound`` (None when the delta column is not the event time). Sets
        ``_exact`` when the bound itself leaves out exactly the rows before the time (no row to drop as read)."""
        point, settings = self.plan.startpoint, self.settings
        if point is None or point.kind is not StartpointKind.TIMESTAMP or wtype not in TIME_TYPES:
            return None
        delta = list(settings.delta_fields)
        if len(delta) != 1 or (settings.event_column or delta[0]) != delta[0]:
            return None
        micros = point.timestamp_ms * 1000
        bound = floor_to_step(micros, wtype)
        if bound < micros and wtype == DATE and kind in (deltas.DATE, deltas.TEXTDATE):
            bound += STEP[DATE]  # a date is its midnight: the first date at or after the time
        self._exact = bound == micros or (wtype == DATE and kind in (deltas.DATE, deltas.TEXTDATE))
        return bound

    def _single(self) -> list[WorkUnit]:
        """A table with one watermark: its failed ranges again, then the rows past the watermark (or from a
        startpoint), split into work units by row count or by time."""
        plan = self.plan
        frontier = None if (plan.is_full or self.settings.override) else self.prev.frontier.get(SINGLE)
        checkpoint = None
        if plan.startpoint is not None:  # see all the rows: where to start is decided below
            checkpoint, frontier = frontier, None
        known_kind = self.prev.kind if frontier is not None else None
        row = self._stats(known_kind, frontier)
        if row[1] is not None and known_kind is None and self._kind(row[1]) == deltas.TEXTZONE:
            known_kind = deltas.TEXTZONE  # times with zones: compare them normalised
            row = self._stats(known_kind, None)
        min_value, max_value, rows, all_rows = row[0], row[1], int(row[2] or 0), int(row[3] or 0)
        if max_value is None:
            return self._no_new_rows(checkpoint if plan.startpoint is not None else frontier)
        kind = known_kind or self._kind(max_value)
        wtype = self._wtype(kind)
        self._check_rows(frontier is None and rows < all_rows, all_rows - rows, kind)
        low, unbounded = self._low(SINGLE, deltas.to_long(min_value, kind), wtype)
        found = _Range(low, self._high(deltas.to_long(max_value, kind), wtype), unbounded, rows)
        bound = self._bound_by_time(found, kind, wtype, checkpoint)
        if plan.startpoint is not None:
            carry = self._start_from(found, bound, deltas.to_long(min_value, kind), kind, wtype, checkpoint)
            if carry is not None:
                return [carry]
        # a startpoint decides where the whole table starts: earlier failed ranges are not retried besides
        units = self._retry_units(wtype, kind) if plan.startpoint is None or not self._replays else []
        if units and frontier is not None and (found.low is None or found.high <= found.low):
            units.append(self._carry({SINGLE: frontier}, wtype, kind))
        if found.low is not None and found.high > found.low:
            units += self._range_units(found, kind, wtype, checkpoint)
        codec = self.codec_for(wtype)
        log.info("sql_table_planned", table=plan.entity, dataset=plan.base["dataset.urn"], watermark_type=wtype,
                 low=codec.render(found.low) if found.low is not None else "-", high=codec.render(found.high),
                 work_units=len(units), retried=len(self.prev.retries), rows_estimated=found.rows, full=plan.is_full)
        return units

    def _no_new_rows(self, frontier: int | None) -> list[WorkUnit]:
        """Nothing above the low watermark: the failed ranges again, and the watermark carried beside them."""
        kind = self.prev.kind or deltas.NUMBER
        wtype = watermark_type(self.prev.wtype) or self.wtype_cfg or "simple"
        retries = self._retry_units(wtype, kind)
        if retries and frontier is not None:
            retries.append(self._carry({SINGLE: frontier}, wtype, kind))
        log.info("sql_table_planned", table=self.plan.entity, dataset=self.plan.base["dataset.urn"],
                 work_units=len(retries), note="no rows above the low watermark")
        return retries

    def _check_rows(self, nulls_left_out: bool, nulls: int, kind: str) -> None:
        """Warn of rows append_only never pulls (a NULL delta); refuse a startpoint's time on a number watermark
        without an event column."""
        plan = self.plan
        if nulls_left_out and not plan.is_full:
            log.warning("sql_null_delta_rows", table=plan.entity, rows=nulls,
                        note="rows whose delta column is NULL are never pulled by append_only; use snapshot_append "
                             "or more delta fields (COALESCE)")
        if plan.startpoint is not None and plan.startpoint.kind is StartpointKind.TIMESTAMP:
            if kind == deltas.NUMBER and not (self.settings.event_column or "").strip():
                raise no_event_time(plan.entity, plan.delta_names)

    def _bound_by_time(self, found: _Range, kind: str, wtype: str, checkpoint: int | None) -> int | None:
        """A startpoint's time as a predicate of the queries (the older rows are never read), with ``found``'s
        rows and skipped rows counted from it; None when there is none, or nothing before it is left to replay."""
        bound = self._time_bound(wtype, kind)
        if bound is not None and checkpoint is not None and bound >= checkpoint:
            self._nothing_to_replay(checkpoint)  # the rows from the time on are not read yet: nothing to replay
            return None
        if bound is not None:
            after = int(self._stats(kind, bound)[2] or 0)
            # (with skip.count nothing is counted: how many rows were skipped is not known)
            found.skipped = UNKNOWN if self.settings.skip_count else found.rows - after
            found.rows = after
        return bound

    def _start_from(self, found: _Range, bound: int | None, minimum: int, kind: str, wtype: str,
                    checkpoint: int | None) -> WorkUnit | None:
        """Move ``found``'s low end to where the startpoint starts; the unit carrying that position when there
        is nothing to read from there."""
        plan = self.plan
        assert plan.startpoint is not None
        start = bound if bound is not None else (
            self._start_at(checkpoint, minimum, found.high, wtype) if self._replays else checkpoint)
        if self._replays or start is not None:  # (nothing to replay and no watermark: the usual range)
            found.low, found.unbounded = start, False
        if not self._replays and start is not None:  # the rows past the watermark only, as a run counts them
            found.rows = int(self._stats(kind, start)[2] or 0)
        if found.low is None or found.high > found.low:
            return None
        log.info("sql_startpoint", table=plan.entity, startpoint=plan.startpoint.describe(),
                 low=self.codec_for(wtype).render(found.low))
        carry = self._carry({SINGLE: found.low}, wtype, kind)
        if found.skipped is not None:
            carry.set_prop(SKIPPED_KEY, found.skipped)
        return carry

    def _range_units(self, found: _Range, kind: str, wtype: str, checkpoint: int | None) -> list[WorkUnit]:
        """``[low, high)`` split into work units by time interval or by rows, none spanning a replay's
        checkpoint; the first says how many rows a startpoint skipped."""
        low, high = found.low, found.high
        assert low is not None
        interval = self.settings.partition_interval
        if interval > 0:
            pieces = split_range(low, high, interval_units(interval, wtype), self.settings.max_partitions, wtype)
        else:
            parts = self._parts(found.rows)
            pieces = split_range(low, high, STEP[wtype] if parts > 1 else None, parts, wtype)
        if self.plan.startpoint is not None and checkpoint is not None and low < checkpoint < high:
            # a replay: the rows past the watermark are read for the first time, and a time filter must not
            # drop one of them, so no work unit holds rows of both sides
            pieces = [cut for lo, hi in pieces for cut in (
                ((lo, checkpoint), (checkpoint, hi)) if lo < checkpoint < hi else ((lo, hi),))]
        span = high - low
        units = []
        for index, (lo, hi) in enumerate(pieces):
            estimate = found.rows * (hi - lo) / span if span else found.rows
            units.append(self._unit({SINGLE: lo}, {SINGLE: hi}, wtype, kind, estimate,
                                    unbounded_low=found.unbounded and index == 0))
            if checkpoint is not None and lo >= checkpoint:
                self._fresh.add(id(units[-1]))
        if found.skipped is not None:
            units[0].set_prop(SKIPPED_KEY, found.skipped)
        return units

    # -- a table whose rows belong to partitions, each with its own watermark (MultiLongWatermark)

    def _grouped(self, kind: str | None, pcol: str) -> list[tuple]:
        dialect = self.plan.dialect
        configured = list(self.settings.partition_values)
        where = f" WHERE {pcol} IN ({', '.join(dialect.param for _ in configured)})" if configured else ""
        expr = deltas.sql_expression(kind, self.plan.expr, dialect.name)
        return dialect.query(
            self.plan.conn,
            f"SELECT {pcol}, MIN({expr}), MAX({expr}), COUNT({expr}) FROM {self.plan.qualified}{where} GROUP BY {pcol}",
            configured,
        )

    def partitioned(self, part_col: ColumnSpec) -> list[WorkUnit]:
        pcol = self.plan.dialect.quote(part_col.name)
        known_kind = self.prev.kind
        rows = self._grouped(known_kind, pcol)
        if known_kind is None and any(r[2] is not None and self._kind(r[2]) == deltas.TEXTZONE for r in rows):
            known_kind = deltas.TEXTZONE
            rows = self._grouped(known_kind, pcol)
        stats = {position_key(r[0]): (r[0], r[1], r[2], int(r[3] or 0)) for r in rows if r[2] is not None}
        sample = next((s[2] for s in stats.values()), None)
        kind = known_kind or (self._kind(sample) if sample is not None else deltas.NUMBER)
        wtype = self._wtype(kind) if sample is not None else (watermark_type(self.prev.wtype) or self.wtype_cfg or "simple")
        values: dict[str, Any] = {}
        template = self.prev.template
        for value in json.loads(template.get_prop(K.PARTITION_VALUES_STATE) or "[]") if template else []:
            values[position_key(value)] = value
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
            ordered = sorted(active, key=lambda item: (-item[1], item[0]))
            groups = worst_fit_decreasing(ordered, min(len(active), self.settings.max_partitions),
                                          lambda item: max(1, item[1]))
            idle = [k for k in sorted(low) if k not in dict(active)]
            for index, group in enumerate(groups):
                members = sorted([k for k, _ in group] + (idle if index == 0 else []))
                load = sum(max(1, rows_in) for _, rows_in in group)
                units.append(self._unit(low, high, wtype, kind, load, [values[k] for k in members]))
        elif units and low:  # only retries: a unit that carries every position forward into the new state
            units.append(self._carry(low, wtype, kind, [values[k] for k in sorted(low)]))
        log.info("sql_table_planned", table=self.plan.entity, dataset=self.plan.base["dataset.urn"],
                 watermark_type=wtype, partitions=len(values), active_partitions=len(active), work_units=len(units))
        return units


@dataclass
class _Range:
    """The watermark range a table's run reads, the rows in it, and the rows a startpoint's time skips."""

    low: int | None
    high: int
    unbounded: bool  # the low end is open: the first unit reads every row below ``high``
    rows: int
    skipped: int | str | None = None
