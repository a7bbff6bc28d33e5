"""List and map arrays taken apart for writers that rebuild them (Avro's fix-ups, JSON text)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc


def rebased_offsets(arr: pa.Array) -> tuple[pa.Array, int, int]:
    """A list/map array's offsets rebased to 0, and the start and length of its slice of the child values
    (a sliced array's offsets do not start at 0)."""
    offsets = arr.offsets
    start = offsets[0].as_py()
    length = offsets[len(offsets) - 1].as_py() - start
    if start:
        offsets = pc.subtract(offsets, pa.scalar(start, offsets.type))
    return offsets, start, length
