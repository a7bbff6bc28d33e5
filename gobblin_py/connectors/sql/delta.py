"""How delta-column values map to watermark longs and back to query parameters (per kind of column).

The kind is found at planning from the column's maximum value, recorded on each work unit
(``source.querybased.delta.kind``) and used by the extractor to bind the range bounds the same way:

| kind | column holds | bound passed to the query |
|---|---|---|
| ``number`` | integers, decimals, floats | ``int`` |
| ``timestamp`` | timestamps without time zone | naive ``datetime`` |
| ``timestamptz`` | timestamps with time zone | ``datetime`` in UTC |
| ``date`` | dates | ``date`` (rounded up to whole days) |
| ``text|<sep>|`` | ISO-8601 timestamp text without zone (SQLite), e.g. ``2024-01-15 10:30:00.25`` | text in the same layout |
| ``textzone`` | ISO-8601 text with a zone (``Z``, ``+02:00``; SQLite) | ``YYYY-MM-DD HH:MM:SS.SSS`` UTC, compared with ``strftime('%Y-%m-%d %H:%M:%f', col)`` (millisecond precision, rounded up) |
| ``textdate`` | ``YYYY-MM-DD`` text (SQLite) | text, rounded up to whole days |

Zone-less text bounds use the separator (``T`` or space) of the column's values and a fraction only when
non-zero, so SQLite's text comparison orders them as the times they denote (fractions of any width compare
digit by digit). Text with a zone suffix does not sort as time (``…:40Z`` > ``…:40.5Z``), so such columns are
compared through SQLite's ``strftime``, which also converts offsets to UTC (it cannot use an index).
Every row satisfies exactly one of ``col < bound`` and ``col >= bound``, so adjacent ranges never lose or
repeat a row whatever the text layout.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from typing import Any

from gobblin_py.connectors.sql.watermarks import (
    SIMPLE,
    TIME_TYPES,
    date_from_micros,
    datetime_from_micros,
    micros_from_date,
    micros_from_datetime,
)
from gobblin_py.sdk.errors import UsageError

NUMBER, TIMESTAMP, TIMESTAMPTZ, DATE, TEXTDATE = "number", "timestamp", "timestamptz", "date", "textdate"
TEXT_PREFIX = "text|"
TEXTZONE = "textzone"
SQLITE_UTC_FORMAT = "%Y-%m-%d %H:%M:%f"
MICROS_PER_MILLI = 1000


def infer_kind(value: Any, column: str) -> str:
    """The kind of a delta column from one of its (non-null) values."""
    if isinstance(value, bool):
        raise UsageError(f"delta column {column} holds booleans: it cannot order rows into watermark ranges")
    if isinstance(value, (int, float, decimal.Decimal)):
        return NUMBER
    if isinstance(value, dt.datetime):
        return TIMESTAMPTZ if value.tzinfo is not None else TIMESTAMP
    if isinstance(value, dt.date):
        return DATE
    if isinstance(value, str):
        text = value.strip()
        if len(text) == 10:
            try:
                dt.date.fromisoformat(text)
                return TEXTDATE
            except ValueError:
                pass
        try:
            parsed = dt.datetime.fromisoformat(text)
        except ValueError:
            raise UsageError(
                f"delta column {column} holds text that is not an ISO-8601 time ({value!r}); "
                "use a numeric or timestamp column"
            ) from None
        if parsed.tzinfo is not None:
            return TEXTZONE
        sep = text[10] if len(text) > 10 else " "
        return f"{TEXT_PREFIX}{sep}|"
    raise UsageError(f"delta column {column} holds {type(value).__name__} values: use a numeric or time column")


def sql_expression(kind: str | None, expr: str, dialect: str) -> str:
    """The SQL the ranges compare: the delta expression itself, or its normalised UTC text (``textzone``)."""
    if kind == TEXTZONE:
        if dialect != "sqlite":
            raise UsageError("a text delta column with zone offsets can only be compared on SQLite; "
                             "use a timestamp with time zone column")
        return f"strftime('{SQLITE_UTC_FORMAT}', {expr})"
    return expr


def check_kind(kind: str, wtype: str, column: str) -> str:
    """The watermark type that fits ``kind``; a clear error when the configured one cannot."""
    if kind == NUMBER:
        if wtype in TIME_TYPES:
            raise UsageError(
                f"delta column {column} holds numbers, but source.querybased.watermark.type={wtype}; "
                "use simple for ids and epoch numbers"
            )
        return wtype
    if wtype == SIMPLE:
        raise UsageError(
            f"delta column {column} holds times, but source.querybased.watermark.type=simple; "
            "use timestamp, hour or date"
        )
    if kind in (DATE, TEXTDATE) and wtype != "date":
        return "date"  # a date column has no finer positions
    return wtype


def to_long(value: Any, kind: str) -> int:
    """A column value as a watermark long (numbers floored, times in microseconds)."""
    if kind == NUMBER:
        if isinstance(value, str):
            value = decimal.Decimal(value)
        return math.floor(value)
    if kind in (TIMESTAMP, TIMESTAMPTZ):
        if isinstance(value, str):
            value = dt.datetime.fromisoformat(value)
        if isinstance(value, dt.datetime):
            return micros_from_datetime(value)
        return micros_from_date(value)
    if kind in (DATE, TEXTDATE):
        if isinstance(value, str):
            value = dt.date.fromisoformat(value[:10])
        if isinstance(value, dt.datetime):
            return micros_from_datetime(value)
        return micros_from_date(value)
    if kind.startswith(TEXT_PREFIX) or kind == TEXTZONE:
        if isinstance(value, dt.datetime):
            return micros_from_datetime(value)
        return micros_from_datetime(dt.datetime.fromisoformat(str(value).strip()))
    raise ValueError(f"unknown delta kind {kind!r}")


def to_param(value: int, kind: str) -> Any:
    """The query parameter for the watermark long ``value`` (a range bound)."""
    if kind == NUMBER:
        return value
    if kind == TIMESTAMP:
        return datetime_from_micros(value)
    if kind == TIMESTAMPTZ:
        return datetime_from_micros(value, aware=True)
    if kind == DATE:
        return date_from_micros(value)
    if kind == TEXTDATE:
        return date_from_micros(value).isoformat()
    if kind == TEXTZONE:  # strftime('%f') has milliseconds: round the bound up to the next one
        millis = -(-value // MICROS_PER_MILLI)
        stamp = datetime_from_micros(millis * MICROS_PER_MILLI)
        return stamp.strftime("%Y-%m-%d %H:%M:%S") + f".{stamp.microsecond // 1000:03d}"
    if kind.startswith(TEXT_PREFIX):
        sep = kind.split("|")[1]
        stamp = datetime_from_micros(value)
        text = stamp.strftime("%Y-%m-%d") + sep + stamp.strftime("%H:%M:%S")
        if stamp.microsecond:
            text += f".{stamp.microsecond:06d}".rstrip("0")
        return text
    raise ValueError(f"unknown delta kind {kind!r}")
