"""The Kafka source's Arrow arrays built over their buffers equal what ``pa.array`` makes of the same values."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from gobblin_py.connectors.kafka.raw import (
    at_least,
    binary_array,
    bool_array,
    int64_array,
    int64_scalar,
    repeated_int32,
    repeated_string,
    without_negatives,
)

longs = st.integers(-(2**63), 2**63 - 1)


@given(st.lists(st.one_of(st.none(), st.binary(max_size=20)), max_size=50))
def test_binary_arrays(values):
    built = binary_array(values)
    built.validate(full=True)
    assert built.equals(pa.array(values, pa.binary()))


@given(st.lists(longs, max_size=50))
def test_int64_arrays_and_the_negatives_made_null(values):
    built = int64_array(values)
    assert built.equals(pa.array(values, pa.int64()))
    assert without_negatives(built).to_pylist() == [v if v >= 0 else None for v in values]


@given(st.lists(st.one_of(st.none(), longs), max_size=50), longs)
def test_at_least_counts_a_null_as_such(values, low):
    assert at_least(pa.array(values, pa.int64()), int64_scalar(low)).to_pylist() == [
        v is None or v >= low for v in values]


@given(st.lists(st.booleans(), max_size=70))
def test_bool_arrays(values):
    built = bool_array(np.array(values, np.bool_))
    built.validate(full=True)
    assert built.to_pylist() == values


@given(st.integers(-(2**31), 2**31 - 1), st.text(max_size=10), st.integers(0, 40))
def test_repeated_columns(number, text, count):
    assert repeated_int32(number, count).equals(pa.array([number] * count, pa.int32()))
    assert repeated_string(text, count).equals(pa.array([text] * count, pa.string()))
