"""Where a dataset stands: its previous runs' watermarks read back as positions (longs), and ranges to retry.

An unpartitioned dataset has one position (key :data:`SINGLE`); a partitioned one (``partition.column``) one
per partition value, keyed by the value's JSON. Half-open ranges are gpy's; state Gobblin wrote (inclusive
ranges, ``yyyyMMddHHmmss`` digits) is converted on reading.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from gobblin_py.connectors.sql import keys as K
from gobblin_py.connectors.sql.arrow_types import jsonable
from gobblin_py.connectors.sql.watermarks import (
    GOBBLIN_STEP,
    TIME_TYPES,
    WatermarkCodec,
    decode_multi,
    parse_gobblin_digits,
    watermark_type,
)
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.retry import workunits_to_retry
from gobblin_py.sdk.run_states import SourceState
from gobblin_py.sdk.states import WorkingState, WorkUnitState

SINGLE = ""  # the key of the one position of an unpartitioned dataset


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


def position_key(value: Any) -> str:
    """The key of a partition value's position (its JSON)."""
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
        keys = [position_key(v) for v in json.loads(values)]
        low = dict(zip(keys, decode_multi(interval.low_json), strict=True))
        high = dict(zip(keys, decode_multi(interval.expected_high_json), strict=True))
        actual = dict(zip(keys, decode_multi(actual_json), strict=True)) if actual_json is not None else dict(low)
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
        high_c = {k: (c + step if (c := convert(v)) is not None else low_c[k]) for k, v in high.items()}
        actual_c = {}
        for k, v in actual.items():
            c = convert(v)
            actual_c[k] = low_c[k] if c is None or v == low[k] else c + step
        return low_c, high_c, actual_c, partitioned
    return low, high, actual, partitioned




def previous_codec(units: list[WorkUnitState], wtype: str | None, class_name: str | None) -> WatermarkCodec:
    """The codec the previous runs' watermarks were written with (their type wins over the configured one)."""
    stored = watermark_type(next((u.get_prop(K.WATERMARK_TYPE) for u in units if u.get_prop(K.WATERMARK_TYPE)), None))
    return WatermarkCodec(stored or wtype or "simple", class_name)
