"""A batch of one partition's messages as Arrow arrays, as read and before their values are decoded.

The arrays are built from the lists of values over their buffers (``b"".join`` and the lengths' running sum),
not by ``pa.array``, which imports pandas on first use (half a second and 50 MB when pandas is installed) and
takes twice as long over a list of bytes.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

_INT32_MAX = 2**31 - 1


@dataclass
class RawBatch:
    """Messages of one partition of a work unit, in offset order."""

    index: int  # the partition's place in the work unit
    values: pa.Array  # binary, null for a tombstone
    offsets: pa.Array  # int64
    timestamps: pa.Array  # epoch ms, -1 when the message has none
    keys: pa.Array | None  # binary, only when the kafka_key column is asked for


def int64_array(values: list[int]) -> pa.Array:
    """An int64 array of ``values`` (none of them None)."""
    data = array("q", values)
    return pa.Array.from_buffers(pa.int64(), len(data), [None, pa.py_buffer(data)])


def binary_array(values: list[bytes | None]) -> pa.Array:
    """A binary array of ``values``; None (a tombstone, a message without key) is null."""
    try:
        data = b"".join(values)  # type: ignore[arg-type]  # a None fails the join: see below
    except TypeError:
        return pa.array(values, pa.binary())
    if len(data) > _INT32_MAX:
        return pa.array(values, pa.binary())
    offsets = np.zeros(len(values) + 1, np.int32)
    np.cumsum(np.fromiter(map(len, values), np.int32, len(values)), out=offsets[1:])  # type: ignore[arg-type]
    return pa.Array.from_buffers(pa.binary(), len(values), [None, pa.py_buffer(offsets), pa.py_buffer(data)])
