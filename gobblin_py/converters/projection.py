"""Keeps, orders and renames fields: ``converter.projection.fields=id,name:customer_name,amount``.

Each item is a field to keep, optionally ``source:target`` to rename it; fields not listed are dropped, and
the output has the listed order. A listed field the input does not have is an error naming it.
"""

from __future__ import annotations

import pyarrow as pa

from gobblin_py.api import Converter
from gobblin_py.converters.keys import converter_prop
from gobblin_py.errors import UsageError
from gobblin_py.state import WorkUnitState

FIELDS_KEY = "converter.projection.fields"


class FieldProjectionConverter(Converter):
    """Selects and renames columns without copying data (zero-copy on Arrow batches)."""

    def init(self, state: WorkUnitState) -> None:
        spec = converter_prop(state, FIELDS_KEY)
        if not spec:
            raise UsageError(f"{FIELDS_KEY} is not set: list the fields to keep, e.g. id,name:customer_name")
        self.pairs: list[tuple[str, str]] = []
        for item in spec.split(","):
            if not item.strip():
                continue
            source, _, target = item.partition(":")
            self.pairs.append((source.strip(), (target or source).strip()))
        targets = [t for _, t in self.pairs]
        if len(set(targets)) != len(targets):
            raise UsageError(f"{FIELDS_KEY}={spec}: two fields get the same name")

    def convert_schema(self, schema: pa.Schema, state: WorkUnitState) -> pa.Schema:
        missing = [s for s, _ in self.pairs if schema.get_field_index(s) < 0]
        if missing:
            raise UsageError(f"{FIELDS_KEY}: no field {', '.join(missing)} in the input (it has {', '.join(schema.names)})")
        self._indices = [schema.get_field_index(s) for s, _ in self.pairs]
        self._schema = pa.schema([schema.field(i).with_name(t) for i, (_, t) in zip(self._indices, self.pairs)])
        return self._schema

    def convert_batch(self, batch: pa.RecordBatch, state: WorkUnitState) -> pa.RecordBatch:
        return pa.RecordBatch.from_arrays([batch.column(i) for i in self._indices], schema=self._schema)
