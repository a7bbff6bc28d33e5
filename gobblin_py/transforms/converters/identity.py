"""Passes batches through unchanged (Gobblin's IdentityConverter)."""

from __future__ import annotations

import pyarrow as pa

from gobblin_py.sdk.contracts import Converter
from gobblin_py.sdk.states import WorkUnitState


class IdentityConverter(Converter):
    """Returns every schema and batch as it came."""

    def convert_schema(self, schema: pa.Schema, state: WorkUnitState) -> pa.Schema:
        return schema

    def convert_batch(self, batch: pa.RecordBatch, state: WorkUnitState) -> pa.RecordBatch:
        return batch


class AvroRecordToAvroWritableConverter(IdentityConverter):
    """Gobblin wraps each Avro record for Hive's SerDe here; Arrow batches need no wrapping: rows pass as they are."""
