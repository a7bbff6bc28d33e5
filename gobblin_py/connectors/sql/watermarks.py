"""The query-based source's watermark algebra: positions as longs, half-open ranges, types and their steps.

Every watermark value is a whole number (a Java ``long``), whatever the delta column holds:

| ``source.querybased.watermark.type`` | delta column | watermark value | step (smallest increment) |
|---|---|---|---|
| ``simple`` | integers (ids, epoch seconds or ms, versions) | the value itself (non-integers are floored) | 1 |
| ``timestamp`` | timestamps (with or without time zone), ISO text in SQLite | microseconds since 1970-01-01 | 1 µs |
| ``hour`` | same as timestamp | microseconds, aligned to the hour | 1 hour |
| ``date`` | dates, or timestamps truncated to the day | microseconds, aligned to midnight | 1 day |

Timestamps *without* time zone are read as wall-clock values and counted as if they were UTC (so no value
is shifted and no daylight-saving gap or overlap exists); timestamps *with* time zone are converted to UTC.

Ranges are half-open, ``[low, high)``, and the ranges of one dataset never overlap: the expected high
watermark of a work unit is ``floor(max(delta)) + step`` at planning time (the max row is included), the next
run's low watermark is the previous run's actual high watermark, so a value is pulled by exactly one run.
Rows that arrive during a run with a delta value at or above the high bound are taken by the next run.

Gobblin stores timestamps as ``yyyyMMddHHmmss`` digits and uses inclusive ranges with ``+step`` between runs;
a previous state written that way (no ``source.querybased.watermark.range=half-open`` on its work units) is
read as Gobblin meant it: its actual high watermark is converted and advanced by one step.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.watermarks import LongWatermark, MultiLongWatermark, Watermark, resolve_watermark_type

SIMPLE, TIMESTAMP, HOUR, DATE = "simple", "timestamp", "hour", "date"
WATERMARK_TYPES = (SIMPLE, TIMESTAMP, HOUR, DATE)
TIME_TYPES = (TIMESTAMP, HOUR, DATE)

MICROS_PER_SECOND = 1_000_000
MICROS_PER_HOUR = 3600 * MICROS_PER_SECOND
MICROS_PER_DAY = 24 * MICROS_PER_HOUR
STEP = {SIMPLE: 1, TIMESTAMP: 1, HOUR: MICROS_PER_HOUR, DATE: MICROS_PER_DAY}
GOBBLIN_STEP = {SIMPLE: 1, TIMESTAMP: MICROS_PER_SECOND, HOUR: MICROS_PER_HOUR, DATE: MICROS_PER_DAY}
EPOCH = dt.datetime(1970, 1, 1)
UTC = dt.timezone.utc


def watermark_type(value: str | None) -> str | None:
    if value is None or not value.strip():
        return None
    name = value.strip().lower()
    if name not in WATERMARK_TYPES:
        raise UsageError(f"source.querybased.watermark.type={value}: use timestamp, date, hour or simple")
    return name


def floor_to_step(value: int, wtype: str) -> int:
    step = STEP[wtype]
    return value - value % step


def exclusive_high(max_value: int, wtype: str) -> int:
    """The exclusive upper bound that still includes ``max_value``: its unit's start plus one step."""
    return floor_to_step(max_value, wtype) + STEP[wtype]


# ---------------------------------------------------------------- datetimes <-> microseconds


def micros_from_datetime(value: dt.datetime) -> int:
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    delta = value - EPOCH
    return (delta.days * 86400 + delta.seconds) * MICROS_PER_SECOND + delta.microseconds


def micros_from_date(value: dt.date) -> int:
    return (value - EPOCH.date()).days * MICROS_PER_DAY


def datetime_from_micros(value: int, aware: bool = False) -> dt.datetime:
    stamp = EPOCH + dt.timedelta(microseconds=value)
    return stamp.replace(tzinfo=UTC) if aware else stamp


def date_from_micros(value: int) -> dt.date:
    """The first date not before ``value`` (bounds of date columns round up, which keeps ranges adjacent)."""
    days, rest = divmod(value, MICROS_PER_DAY)
    return EPOCH.date() + dt.timedelta(days=days + (1 if rest else 0))


def render_micros(value: int) -> str:
    """A timestamp watermark as people read it: ``2024-01-15T10:30:00`` (fraction shown only when present)."""
    try:
        stamp = datetime_from_micros(value)
    except OverflowError:
        return str(value)
    return stamp.isoformat(timespec="microseconds" if stamp.microsecond else "seconds")


# ---------------------------------------------------------------- user-written values


_GOBBLIN_DIGITS = {14: "%Y%m%d%H%M%S", 12: "%Y%m%d%H%M", 10: "%Y%m%d%H", 8: "%Y%m%d"}
_CURRENT = re.compile(r"^CURRENT(DAY|DATE|HOUR|MINUTE|SECOND)(?:\s*-\s*(\d+))?$", re.IGNORECASE)


def source_zone(name: str | None) -> dt.tzinfo:
    try:
        return ZoneInfo((name or "UTC").strip())
    except (ZoneInfoNotFoundError, ValueError):
        raise UsageError(f"source.timezone={name}: not a known time zone (e.g. UTC, Europe/Zurich)") from None


def wall_clock_now(zone: dt.tzinfo) -> int:
    """Now, as a wall-clock reading in ``zone``, in the watermark encoding of time types."""
    return micros_from_datetime(dt.datetime.now(zone).replace(tzinfo=None))


def parse_gobblin_digits(text: str) -> int | None:
    fmt = _GOBBLIN_DIGITS.get(len(text)) if text.isdigit() else None
    if fmt is None:
        return None
    try:
        return micros_from_datetime(dt.datetime.strptime(text, fmt))
    except ValueError:
        return None


def parse_value(text: str, wtype: str, key: str, zone: dt.tzinfo) -> int:
    """A start/end value as written in a job file, in the watermark encoding of ``wtype``.

    simple: a whole number. Time types: Gobblin's ``yyyyMMddHHmmss`` (or ``yyyyMMdd``, ``yyyyMMddHH``), an
    ISO-8601 date or timestamp, or ``CURRENTDAY-n`` / ``CURRENTHOUR-n`` (start of that day or hour in
    ``source.timezone``), ``CURRENTMINUTE-n``, ``CURRENTSECOND``.
    """
    raw = text.strip()
    if wtype == SIMPLE:
        try:
            return int(raw)
        except ValueError:
            raise UsageError(f"{key}={text}: the simple watermark type needs a whole number") from None
    match = _CURRENT.match(raw)
    if match:
        unit = match.group(1).upper()
        back = int(match.group(2) or 0)
        now = wall_clock_now(zone)
        size = {"DAY": MICROS_PER_DAY, "DATE": MICROS_PER_DAY, "HOUR": MICROS_PER_HOUR,
                "MINUTE": 60 * MICROS_PER_SECOND, "SECOND": MICROS_PER_SECOND}[unit]
        return now - now % size - back * size
    value = parse_gobblin_digits(raw)
    if value is None:
        try:
            parsed = dt.datetime.fromisoformat(raw)
        except ValueError:
            raise UsageError(
                f"{key}={text}: not a time; use yyyyMMddHHmmss (Gobblin), ISO 8601 or CURRENTDAY-n"
            ) from None
        value = micros_from_datetime(parsed)
    return value


def max_watermark_limit(text: str | None, zone: dt.tzinfo) -> int | None:
    """``source.querybased.append.max.watermark.limit`` as an exclusive bound (Gobblin's inclusive end + step).

    ``CURRENTDATE-0`` / ``CURRENTHOUR-0`` / ``CURRENTMINUTE-0`` / ``CURRENTSECOND`` mean now; ``-n`` (n ≥ 1)
    means the end of that day/hour/minute n units ago, i.e. up to (excluding) the start of the unit n-1 ago.
    """
    if not text or not text.strip():
        return None
    match = _CURRENT.match(text.strip())
    if not match:
        raise UsageError(
            f"source.querybased.append.max.watermark.limit={text}: use CURRENTDATE-n, CURRENTHOUR-n, "
            "CURRENTMINUTE-n or CURRENTSECOND"
        )
    unit = match.group(1).upper()
    back = int(match.group(2) or 0)
    now = wall_clock_now(zone)
    if back == 0:
        return now
    size = {"DAY": MICROS_PER_DAY, "DATE": MICROS_PER_DAY, "HOUR": MICROS_PER_HOUR,
            "MINUTE": 60 * MICROS_PER_SECOND, "SECOND": MICROS_PER_SECOND}[unit]
    return now - now % size - (back - 1) * size


def interval_units(interval: float, wtype: str) -> int:
    """``source.querybased.partition.interval`` in watermark units: hours for time types (a date type rounds
    up to whole days), plain units for simple."""
    if wtype == SIMPLE:
        return max(1, math.ceil(interval))
    units = math.ceil(interval * MICROS_PER_HOUR)
    return max(STEP[wtype], -(-units // STEP[wtype]) * STEP[wtype])


def split_range(low: int, high: int, interval: int | None, max_parts: int, wtype: str) -> list[tuple[int, int]]:
    """``[low, high)`` cut into adjacent, non-overlapping, non-empty half-open pieces.

    Pieces are ``interval`` units wide (the last one clipped at ``high``); when that makes more than
    ``max_parts`` pieces the width grows (Gobblin's rule), in whole steps of the watermark type. No interval
    means one piece.
    """
    if high <= low:
        return []
    span = high - low
    width = span if not interval or interval <= 0 else interval
    max_parts = max(1, max_parts)
    if -(-span // width) > max_parts:
        width = -(-span // max_parts)
        step = STEP[wtype]
        width = -(-width // step) * step
    pieces = []
    start = low
    while start < high:
        end = min(start + width, high)
        pieces.append((start, end))
        start = end
    return pieces


# ---------------------------------------------------------------- watermark classes


@dataclass(frozen=True)
class TimestampWatermark(LongWatermark):
    """A timestamp position (microseconds since the epoch) that also says when it is, for people.

    JSON: ``{"value":1705314600000000,"time":"2024-01-15T10:30:00"}`` — a ``LongWatermark`` to any reader that
    only looks at ``value`` (Gobblin's Gson included), readable in ``gpy state show``.
    """

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value, "time": render_micros(self.value)}


class WatermarkCodec:
    """Turns positions (longs, or a dict of longs for partitioned datasets) into watermark objects and back.

    A custom class (``source.querybased.watermark.class``) is a ``Watermark`` subclass with a classmethod
    ``from_long(int)`` and a method ``to_long()``; a ``LongWatermark`` subclass needs neither.
    """

    def __init__(self, wtype: str, class_name: str | None = None) -> None:
        self.wtype = wtype
        self.class_name = class_name
        if class_name:
            cls = resolve_watermark_type(class_name)
            if issubclass(cls, MultiLongWatermark):
                raise UsageError(
                    f"source.querybased.watermark.class={class_name}: MultiLongWatermark is used by itself for "
                    "partitioned datasets (source.querybased.partition.column)"
                )
            if not issubclass(cls, LongWatermark) and not (hasattr(cls, "from_long") and hasattr(cls, "to_long")):
                raise UsageError(
                    f"source.querybased.watermark.class={class_name}: a query-based watermark class needs "
                    "a classmethod from_long(int) and a method to_long(), or must subclass LongWatermark"
                )
            self.cls: type[Watermark] = cls
        else:
            self.cls = TimestampWatermark if wtype in TIME_TYPES else LongWatermark

    def make(self, value: int) -> Watermark:
        if hasattr(self.cls, "from_long"):
            return self.cls.from_long(value)
        return self.cls(value)  # type: ignore[call-arg]

    def to_long(self, watermark: Watermark) -> int:
        if hasattr(watermark, "to_long"):
            return int(watermark.to_long())
        return int(watermark.value)  # type: ignore[attr-defined]

    def decode_json(self, data: Any) -> int:
        """A stored single watermark's long; ValueError when the JSON is not one this codec reads."""
        if self.class_name:
            try:
                return self.to_long(self.cls.from_json(data))
            except (ValueError, TypeError, KeyError):
                pass
        if isinstance(data, dict) and isinstance(data.get("value"), int) and not isinstance(data.get("value"), bool):
            return data["value"]
        raise ValueError(f"not a single-valued watermark: {data!r}")

    def render(self, value: int) -> str:
        return render_micros(value) if self.wtype in TIME_TYPES else str(value)


def multi(values: list[int]) -> MultiLongWatermark:
    return MultiLongWatermark(values)


def decode_multi(data: Any) -> list[int]:
    if isinstance(data, dict) and isinstance(data.get("values"), list):
        return [int(v) for v in data["values"]]
    raise ValueError(f"not a MultiLongWatermark: {data!r}")
