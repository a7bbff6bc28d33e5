"""Keeps, orders and renames fields: ``converter.projection.fields=id,name:customer_name,amount``.

Each item is a field to keep, optionally ``source:target`` to rename it; fields not listed are dropped, and
the output has the listed order. A listed field the input does not have is an error naming it.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.contracts import Converter
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.settings import Scope, Settings, setting
from gobblin_py.sdk.states import WorkUnitState

FIELDS_KEY = "converter.projection.fields"


@dataclass(frozen=True)
class ProjectionSettings(Settings):
    """The keys of :class:`FieldProjectionConverter` (``.N`` inside fork branch N)."""

    fields: tuple[str, ...] = setting(FIELDS_KEY, required=True, scope=Scope.FORK, example="id,name:customer_name",
                                      doc="fields to keep, in order; source:target renames")

    @property
    def pairs(self) -> list[tuple[str, str]]:
        out = []
        for item in self.fields:
            source, _, target = item.partition(":")
            out.append((source.strip(), (target or source).strip()))
        return out

    def check(self) -> list[ConfigError]:
        targets = [t for _, t in self.pairs]
        duplicated = sorted({t for t in targets if targets.count(t) > 1})
        if duplicated:
            return [ConfigError(f"two fields get the name {', '.join(duplicated)}", key=FIELDS_KEY,
                                hint="give each kept field its own name")]
        return []


class FieldProjectionConverter(Converter):
    """Selects and renames columns without copying data (zero-copy on Arrow batches)."""

    settings_class = ProjectionSettings

    def init(self, state: WorkUnitState) -> None:
        self.pairs = ProjectionSettings.load(state).pairs

    def convert_schema(self, schema: pa.Schema, state: WorkUnitState) -> pa.Schema:
        missing = [s for s, _ in self.pairs if schema.get_field_index(s) < 0]
        if missing:
            raise UsageError(f"{FIELDS_KEY}: no field {', '.join(missing)} in the input (it has {', '.join(schema.names)})")
        self._indices = [schema.get_field_index(s) for s, _ in self.pairs]
        self._schema = pa.schema([schema.field(i).with_name(t)
                                  for i, (_, t) in zip(self._indices, self.pairs, strict=True)])
        return self._schema

    def convert_batch(self, batch: pa.RecordBatch, state: WorkUnitState) -> pa.RecordBatch:
        return pa.RecordBatch.from_arrays([batch.column(i) for i in self._indices], schema=self._schema)
