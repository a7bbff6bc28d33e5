"""A batch of one partition's messages as Arrow arrays, as read and before their values are decoded."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa


@dataclass
class RawBatch:
    """Messages of one partition of a work unit, in offset order."""

    index: int  # the partition's place in the work unit
    values: pa.Array  # binary, null for a tombstone
    offsets: pa.Array  # int64
    timestamps: pa.Array  # epoch ms, -1 when the message has none
    keys: pa.Array | None  # binary, only when the kafka_key column is asked for
