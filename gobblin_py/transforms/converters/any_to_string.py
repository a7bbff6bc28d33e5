"""Gobblin's ``AnyToStringConverter``: every record becomes its text (Java's ``String.valueOf(record)``).

The output is text records: one string column ``value`` (see :mod:`gobblin_py.sdk.schema_meta`), each row the
record printed as Gobblin prints it — Avro's JSON-like ``toString()`` by default, ``TestRecord(partition=0, …)``
for the POJO records of ``SequentialTestSource`` (the batch's ``gobblin.record.style``). Columns are rendered
with Arrow kernels (see :mod:`gobblin_py.formats.text`); an input that is already text passes as is.
"""

from __future__ import annotations

import pyarrow as pa

from gobblin_py.formats.text import render_rows
from gobblin_py.sdk.contracts import Converter
from gobblin_py.sdk.schema_meta import RECORD_STYLE, get_meta, text_schema
from gobblin_py.sdk.states import WorkUnitState


class AnyToStringConverter(Converter):
    """Each row → one string: the record's text."""

    def convert_schema(self, schema: pa.Schema, state: WorkUnitState) -> pa.Schema:
        self._style = get_meta(schema, RECORD_STYLE)
        self._schema = text_schema()
        return self._schema

    def convert_batch(self, batch: pa.RecordBatch, state: WorkUnitState) -> pa.RecordBatch:
        return pa.RecordBatch.from_arrays([render_rows(batch, self._style)], schema=self._schema)
