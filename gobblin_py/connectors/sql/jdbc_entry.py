"""Gobblin's ``AvroToJdbcEntryConverter``: Avro rows as rows of the JDBC writer's table.

Nested records are flattened into columns ``parent_child`` (Gobblin's ``_``), and
``converter.avro.jdbc.entry_fields_pairs`` (a JSON object, Avro name → column name; nested names with ``.``)
renames columns. Values stay as they are: the JDBC writer gives each one the type of its table column (an
Avro ``long`` becomes a date, time or timestamp where the table says so, as Gobblin's converter does with the
table's date columns). Arrays, maps and bytes have no column form and fail the schema, naming the field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.contracts import Converter
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.settings import Settings, setting
from gobblin_py.sdk.states import WorkUnitState

PAIRS_KEY = "converter.avro.jdbc.entry_fields_pairs"


@dataclass(frozen=True)
class JdbcEntrySettings(Settings):
    """The key of :class:`AvroToJdbcEntryConverter`."""

    pairs: str | None = setting(PAIRS_KEY, doc='column names for Avro fields, a JSON object: {"geoRegion":"geo_region"}')

    def mapping(self) -> dict[str, str]:
        if not self.pairs:
            return {}
        value = json.loads(self.pairs)
        if not isinstance(value, dict) or not all(isinstance(v, (str, int, float, bool)) for v in value.values()):
            raise ValueError("Json value should be a primitive String")
        return {str(k): str(v) for k, v in value.items()}

    def check(self) -> list[ConfigError]:
        try:
            self.mapping()
        except ValueError as exc:
            return [ConfigError(f"not a JSON object of names: {exc}", key=PAIRS_KEY)]
        return []


def _flatten(fields: list[pa.Field], prefix: str) -> list[tuple[str, list[str], pa.DataType]]:
    out = []
    for f in fields:
        path = f"{prefix}.{f.name}" if prefix else f.name
        if pa.types.is_struct(f.type):
            out.extend(_flatten(list(f.type), path))
            continue
        t = f.type
        if pa.types.is_dictionary(t):
            t = t.value_type
        if pa.types.is_nested(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t):
            raise UsageError(f"AvroToJdbcEntryConverter: field {path!r} of type {t} has no JDBC column form")
        out.append((path, path.split("."), t))
    return out


class AvroToJdbcEntryConverter(Converter):
    """Flattens nested records and renames columns for the JDBC writer (Arrow kernels, no per-row work)."""

    settings_class = JdbcEntrySettings

    def init(self, state: WorkUnitState) -> None:
        self.pairs = JdbcEntrySettings.load(state).mapping()

    def convert_schema(self, schema: pa.Schema, state: WorkUnitState) -> pa.Schema:
        self.paths = _flatten(list(schema), "")
        names = [self.pairs.get(path, path.replace(".", "_")) for path, _, _ in self.paths]
        self._schema = pa.schema([pa.field(n, t) for n, (_, _, t) in zip(names, self.paths, strict=True)])
        return self._schema

    def convert_batch(self, batch: pa.RecordBatch, state: WorkUnitState) -> pa.RecordBatch:
        columns = []
        for _, parts, _ in self.paths:
            column = batch.column(parts[0])
            for part in parts[1:]:
                column = pc.struct_field(column, part)
            if pa.types.is_dictionary(column.type):
                column = column.dictionary_decode()
            columns.append(column)
        return pa.RecordBatch.from_arrays(columns, schema=self._schema)
