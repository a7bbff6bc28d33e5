"""Runs a Gobblin-style per-record converter on Arrow batches — the slow path.

A per-record converter has ``convert_record(schema, record)`` (or ``convert_record(schema, record, state)``)
returning an iterable of output records (dicts), and optionally ``convert_schema(schema[, state])`` returning
the output ``pyarrow.Schema`` (:class:`~gobblin_py.sdk.contracts.DeclaresRecordSchema`; without it, the schema is
inferred from the first output records). The adapter turns each batch into Python dicts, calls the converter once
per record and builds a batch from the results: every record crosses into Python and back, so it is many times
slower than a vectorised converter.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable

import pyarrow as pa

from gobblin_py.sdk.contracts import (
    Closeable,
    Converter,
    DeclaresRecordSchema,
    Initializable,
    RecordConverter,
    plugin_name,
)
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.states import WorkUnitState

log = get_logger(__name__)


def _takes_state(func, plain_arity: int) -> bool:
    """Whether ``func`` takes one positional argument more than ``plain_arity``: the work unit state."""
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) > plain_arity or any(p.kind is p.VAR_POSITIONAL for p in params)


class RecordConverterAdapter(Converter):
    """Wraps a per-record converter so it takes part in a batch pipeline."""

    changes_row_count = True  # a record converter returns any number of records for each

    def __init__(self, plugin: RecordConverter) -> None:
        self.plugin = plugin
        self._record_takes_state = _takes_state(plugin.convert_record, 2)
        self._schema_takes_state = isinstance(plugin, DeclaresRecordSchema) and _takes_state(plugin.convert_schema, 1)
        self._schema: pa.Schema | None = None

    def init(self, state: WorkUnitState) -> None:
        if isinstance(self.plugin, Initializable):
            self.plugin.init(state)
        log.warning("per_record_converter", converter=plugin_name(self.plugin),
                    note="runs in Python once per record (slow path); prefer a vectorised Converter")

    def convert_schema(self, schema: pa.Schema, state: WorkUnitState) -> pa.Schema:
        self._input_schema = schema
        if not isinstance(self.plugin, DeclaresRecordSchema):
            return schema
        convert = self.plugin.convert_schema
        result = convert(schema, state) if self._schema_takes_state else convert(schema)
        self._schema = result if isinstance(result, pa.Schema) else None
        return self._schema if self._schema is not None else schema

    def convert_batch(self, batch: pa.RecordBatch, state: WorkUnitState) -> Iterable[pa.RecordBatch]:
        out_rows: list[dict] = []
        schema_arg = self._schema if self._schema is not None else batch.schema
        for record in batch.to_pylist():
            produced = (
                self.plugin.convert_record(schema_arg, record, state)
                if self._record_takes_state
                else self.plugin.convert_record(schema_arg, record)
            )
            if produced is None:
                continue
            if isinstance(produced, dict):
                produced = [produced]
            out_rows.extend(produced)
        if not out_rows:
            return []
        if self._schema is None:
            self._schema = pa.RecordBatch.from_pylist(out_rows[:1000]).schema
        return [pa.RecordBatch.from_pylist(out_rows, schema=self._schema)]

    def close(self) -> None:
        if isinstance(self.plugin, Closeable):
            self.plugin.close()
