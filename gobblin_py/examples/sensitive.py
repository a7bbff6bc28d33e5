"""The sensitive-data example of Gobblin's fork documentation, on Arrow batches.

``SensitiveDataAwareForkOperator`` sends every record to exactly one of two branches: branch 0 when any of the
fields listed in ``fork.sensitive.fields`` holds a value (the record carries sensitive data), branch 1
otherwise. ``PurgingConverter`` (branch 0's converter in ``jobs/fork_by_classifier.pull``) blanks those fields.
Both decide per batch with Arrow compute, not per record.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from gobblin_py.sdk.contracts import Converter, ForkOperator
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.settings import Scope, Settings, setting
from gobblin_py.sdk.states import State

SENSITIVE_FIELDS_KEY = "fork.sensitive.fields"
PURGE_FIELDS_KEY = "converter.purge.fields"


@dataclass(frozen=True)
class SensitiveForkSettings(Settings):
    """The key of :class:`SensitiveDataAwareForkOperator`."""

    fields: tuple[str, ...] = setting(SENSITIVE_FIELDS_KEY, required=True, doc="fields that hold sensitive data")


@dataclass(frozen=True)
class PurgeSettings(Settings):
    """The key of :class:`PurgingConverter` (``.N`` inside fork branch N)."""

    fields: tuple[str, ...] = setting(PURGE_FIELDS_KEY, required=True, scope=Scope.FORK, doc="fields to set to null")


class SensitiveDataAwareForkOperator(ForkOperator):
    """Two branches: 0 for records with sensitive data, 1 for the others."""

    settings_class = SensitiveForkSettings

    def init(self, state: State) -> None:
        self.fields = list(SensitiveForkSettings.load(state).fields)

    def get_branches(self, state: State) -> int:
        return 2

    def fork_batch(self, state: State, batch: pa.RecordBatch) -> list[pa.BooleanArray]:
        sensitive = pa.array([False] * batch.num_rows, pa.bool_())
        for name in self.fields:
            column = batch.column(name) if name in batch.schema.names else None
            if column is None:
                raise UsageError(f"{SENSITIVE_FIELDS_KEY}: no field {name!r} in the records")
            has_value = pc.is_valid(column)
            if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
                has_value = pc.and_(has_value, pc.not_equal(pc.utf8_length(pc.fill_null(column, "")), 0))
            sensitive = pc.or_(sensitive, has_value)
        return [sensitive, pc.invert(sensitive)]


class PurgingConverter(Converter):
    """Sets the fields of ``converter.purge.fields[.N]`` to null."""

    settings_class = PurgeSettings

    def init(self, state: State) -> None:
        self.fields = set(PurgeSettings.load(state).fields)

    def convert_schema(self, schema: pa.Schema, state: State) -> pa.Schema:
        missing = self.fields - set(schema.names)
        if missing:
            raise UsageError(f"{PURGE_FIELDS_KEY}: no field {', '.join(sorted(missing))} in the records")
        self.schema = pa.schema([f.with_nullable(True) if f.name in self.fields else f for f in schema])
        return self.schema

    def convert_batch(self, batch: pa.RecordBatch, state: State) -> pa.RecordBatch:
        columns = [
            pa.nulls(batch.num_rows, field.type) if field.name in self.fields else column
            for field, column in zip(batch.schema, batch.columns, strict=True)
        ]
        return pa.RecordBatch.from_arrays(columns, schema=self.schema)
