"""Shared data and helpers of the writer tests: a batch of every interesting type, and task states."""

from __future__ import annotations

import pyarrow as pa
import pytest

from tests.support.writers import (
    all_types_batch,
)


@pytest.fixture
def batch() -> pa.RecordBatch:
    return all_types_batch()


