"""Values that do not cast to a column's type, found with Arrow's own casts on whole arrays.

A column that casts as a whole (the common case) costs one cast; only a column holding a bad value is bisected,
a cast of each half at a time, so finding the bad values of a batch costs about (bad values × log2 rows) casts
of ever smaller slices and no Python per good value.
"""

from __future__ import annotations

import pyarrow as pa


def _casts(values: pa.Array, target: pa.DataType, safe: bool = True) -> bool:
    try:
        values.cast(target, safe=safe)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return False
    return True


def first_bad_row(column: pa.Array | pa.ChunkedArray, target: pa.DataType, safe: bool = True) -> int | None:
    """The index of the first value of ``column`` that does not cast to ``target`` (``safe``: as Arrow's cast);
    None if all do."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if _casts(column, target, safe):
        return None
    low, high = 0, len(column)  # the first bad value lies in [low, high)
    while high - low > 1:
        middle = (low + high) // 2
        if _casts(column.slice(low, middle - low), target, safe):
            low = middle
        else:
            high = middle
    return low


def bad_rows(column: pa.Array, target: pa.DataType, safe: bool = True) -> list[int]:
    """The index of every value of ``column`` that does not cast to ``target`` (``safe``: as Arrow's cast)."""
    found: list[int] = []
    pending = [(0, len(column))]
    while pending:
        start, length = pending.pop()
        if length == 0 or _casts(column.slice(start, length), target, safe):
            continue
        if length == 1:
            found.append(start)
            continue
        half = length // 2
        pending += [(start + half, length - half), (start, half)]
    return sorted(found)


def shown(value: object) -> str:
    """A value as a message shows it: bytes that are not UTF-8 escaped, long values cut."""
    if isinstance(value, bytes):
        text = "'" + value.decode("utf-8", errors="backslashreplace") + "'"
    else:
        text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 80 else text[:77] + "..."
