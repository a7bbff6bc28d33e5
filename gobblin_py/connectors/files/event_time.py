"""Event times of records, as epoch milliseconds, from a column of any time-like type (vectorised)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from gobblin_py.sdk.errors import UsageError


def event_millis(column: pa.Array | pa.ChunkedArray, name: str) -> pa.Array:
    """The column as int64 epoch milliseconds: timestamps (a naive one taken as UTC), dates, ISO 8601 text, or
    integers (already milliseconds); UsageError naming the column for any other type."""
    kind = column.type
    if pa.types.is_timestamp(kind):  # finer units are cut to the millisecond
        return pc.cast(pc.cast(column, pa.timestamp("ms", tz=kind.tz), safe=False), pa.int64())
    if pa.types.is_date(kind):
        return pc.cast(pc.cast(column, pa.timestamp("ms")), pa.int64())
    if pa.types.is_integer(kind):
        return pc.cast(column, pa.int64())
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):  # ISO 8601 text (SQLite keeps times so)
        try:
            return event_millis(pc.cast(column, pa.timestamp("ms")), name)
        except pa.ArrowInvalid:
            try:
                return event_millis(pc.cast(column, pa.timestamp("ms", "UTC")), name)
            except pa.ArrowInvalid as exc:
                raise UsageError(f"event time column {name!r}: its text is not ISO 8601 times ({exc})") from None
    raise UsageError(f"event time column {name!r} is {kind}: use a timestamp, a date, ISO 8601 text or epoch "
                     "milliseconds")


def min_max_millis(column: pa.Array | pa.ChunkedArray, name: str) -> tuple[int | None, int | None]:
    """The earliest and latest event time of a column (None where it has no value)."""
    result = pc.min_max(event_millis(column, name))
    return result["min"].as_py(), result["max"].as_py()


def at_or_after(column: pa.Array | pa.ChunkedArray, name: str, timestamp_ms: int) -> pa.Array:
    """The mask of rows whose event time is at or after ``timestamp_ms`` (rows without one are kept)."""
    millis = event_millis(column, name)
    return pc.fill_null(pc.greater_equal(millis, pa.scalar(timestamp_ms, pa.int64())), True)
