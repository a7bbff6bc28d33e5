"""Casts fields to other types: ``converter.cast.fields=amount:double,created_at:timestamp[ms, UTC]``.

Types use Arrow's names: ``int8``…``int64``, ``uint8``…``uint64``, ``float32``/``float``, ``float64``/``double``,
``string``, ``large_string``, ``bool``/``boolean``, ``binary``, ``date32``/``date``,
``timestamp[s|ms|us|ns]`` with an optional time zone (``timestamp[ms, UTC]``), ``decimal128(p, s)``/``decimal(p, s)``.
Casts are safe by default (an overflow, a lossy truncation or an unparsable string fails the task naming the
field); ``converter.cast.safe=false`` allows lossy casts.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from gobblin_py.formats.types import parse_type
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.contracts import Converter
from gobblin_py.sdk.errors import GobblinPyError, UsageError
from gobblin_py.sdk.settings import Scope, Settings, setting
from gobblin_py.sdk.states import WorkUnitState

FIELDS_KEY = "converter.cast.fields"
SAFE_KEY = "converter.cast.safe"

def _split_spec(spec: str) -> list[tuple[str, str]]:
    # commas also appear inside types ("decimal(10, 2)", "timestamp[ms, UTC]"): split only at depth 0
    items, depth, current = [], 0, ""
    for char in spec:
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        if char == "," and depth == 0:
            items.append(current)
            current = ""
        else:
            current += char
    items.append(current)
    pairs = []
    for item in filter(str.strip, items):
        field, sep, type_text = item.partition(":")
        if not sep:
            raise UsageError(f"{FIELDS_KEY}: '{item.strip()}' is not field:type")
        pairs.append((field.strip(), type_text.strip()))
    return pairs


@dataclass(frozen=True)
class CastSettings(Settings):
    """The keys of :class:`TypeCastConverter` (``.N`` inside fork branch N)."""

    spec: str = setting(FIELDS_KEY, required=True, scope=Scope.FORK, example="amount:double,at:timestamp[ms, UTC]",
                        doc="field:type pairs (Arrow type names)")
    safe: bool = setting(SAFE_KEY, default=True, scope=Scope.FORK, doc="fail on overflow or truncation")

    @property
    def casts(self) -> dict[str, pa.DataType]:
        return {field: parse_type(type_text) for field, type_text in _split_spec(self.spec)}

    def check(self) -> list[ConfigError]:
        try:
            _ = self.casts  # parsing every type is the check
        except UsageError as exc:
            return [ConfigError(str(exc), key=FIELDS_KEY, hint="use Arrow type names, e.g. amount:double")]
        return []


class TypeCastConverter(Converter):
    """Casts the listed fields with Arrow compute kernels; other fields pass through untouched."""

    settings_class = CastSettings

    def init(self, state: WorkUnitState) -> None:
        settings = CastSettings.load(state)
        self.casts, self.safe = settings.casts, settings.safe

    def convert_schema(self, schema: pa.Schema, state: WorkUnitState) -> pa.Schema:
        missing = [f for f in self.casts if schema.get_field_index(f) < 0]
        if missing:
            raise UsageError(f"{FIELDS_KEY}: no field {', '.join(missing)} in the input (it has {', '.join(schema.names)})")
        self._schema = pa.schema(
            [f.with_type(self.casts[f.name]) if f.name in self.casts else f for f in schema]
        )
        return self._schema

    def convert_batch(self, batch: pa.RecordBatch, state: WorkUnitState) -> pa.RecordBatch:
        columns = []
        for field, column in zip(batch.schema, batch.columns, strict=True):
            target = self.casts.get(field.name)
            if target is None or column.type == target:
                columns.append(column)
                continue
            try:
                columns.append(pc.cast(column, target, safe=self.safe))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                raise GobblinPyError(f"{FIELDS_KEY}: cannot cast field {field.name!r} from {column.type} to {target}: {exc}") from exc
        return pa.RecordBatch.from_arrays(columns, schema=self._schema)
