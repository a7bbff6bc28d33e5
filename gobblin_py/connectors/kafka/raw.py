"""A batch of one partition's messages as Arrow arrays, as read and before their values are decoded.

The arrays are built from the lists of values over their buffers (``b"".join`` and the lengths' running sum),
not by ``pa.array``, which imports pandas on first use (half a second and 50 MB when pandas is installed) and
takes twice as long over a list of bytes. For the same reason no Python value goes to ``pa.scalar`` or to a compute
function (which converts it with ``pa.scalar``): the scalars here come from one-row arrays.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

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
        return _binary_with_nulls(values)
    return _binary(values, data, map(len, values), None)  # type: ignore[arg-type]


def _binary_with_nulls(values: list[bytes | None]) -> pa.Array:
    present = np.fromiter((v is not None for v in values), np.bool_, len(values))
    data = b"".join([v for v in values if v is not None])
    lengths = (0 if v is None else len(v) for v in values)
    return _binary(values, data, lengths, pa.py_buffer(np.packbits(present, bitorder="little")))


def _binary(values: list[bytes | None], data: bytes, lengths: Iterator[int], validity: pa.Buffer | None) -> pa.Array:
    """A binary array over ``data``, the values' bytes joined, with ``lengths`` and ``validity`` (None: no null)."""
    if len(data) > _INT32_MAX:
        return pa.array(values, pa.binary())
    offsets = np.zeros(len(values) + 1, np.int32)
    np.cumsum(np.fromiter(lengths, np.int32, len(values)), out=offsets[1:])
    return pa.Array.from_buffers(pa.binary(), len(values), [validity, pa.py_buffer(offsets), pa.py_buffer(data)])


def repeated_int32(value: int, count: int) -> pa.Array:
    """``count`` times ``value``, an int32 column."""
    return pa.Array.from_buffers(pa.int32(), count, [None, pa.py_buffer(np.full(count, value, np.int32))])


def repeated_string(value: str, count: int) -> pa.Array:
    """``count`` times ``value``, a string column (the scalar taken from a one-row array: ``pa.scalar`` would
    import pandas)."""
    data = value.encode()
    one = pa.Array.from_buffers(pa.string(), 1, [None, pa.py_buffer(array("i", [0, len(data)])), pa.py_buffer(data)])
    return pa.repeat(one[0], count)


def bool_array(mask: np.ndarray) -> pa.Array:
    """A boolean array of a numpy boolean ``mask``."""
    return pa.Array.from_buffers(pa.bool_(), len(mask), [None, pa.py_buffer(np.packbits(mask, bitorder="little"))])


def binary_scalar(value: bytes) -> pa.Scalar:
    """A binary scalar, for compute functions."""
    return binary_array([value])[0]


def int64_scalar(value: int) -> pa.Scalar:
    """An int64 scalar, for compute functions (a Python int there goes through ``pa.scalar``)."""
    return int64_array([value])[0]


def without_negatives(values: pa.Array) -> pa.Array:
    """An int64 array with each negative value null."""
    return pc.if_else(pc.less(values, ZERO), _NULL_INT64, values)


def at_least(values: pa.Array, low: pa.Scalar) -> pa.Array:
    """Whether each of ``values`` is ``low`` or more, a null value counting as such."""
    return pc.fill_null(pc.greater_equal(values, low), _TRUE)


ZERO = int64_scalar(0)
_NULL_INT64 = pa.nulls(1, pa.int64())[0]
_TRUE = bool_array(np.ones(1, np.bool_))[0]
