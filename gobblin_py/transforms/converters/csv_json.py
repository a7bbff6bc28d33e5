"""Gobblin's ``CsvToJsonConverterV2``: split CSV rows into records of a JSON intermediate schema.

Input: a row's fields as columns, by position (column i is CSV field i; values that are not text are read as
their text). The JSON intermediate schema comes with the batch (``gobblin.schema``) or from ``source.schema``;
the output has one column per schema column, named by its ``columnName`` and typed by its ``dataType.type``
(``int`` int32, ``long`` int64, ``float``, ``double``, ``boolean``; anything else stays text), and carries the
schema on for ``JsonIntermediateToAvroConverter``. Every column is converted with Arrow kernels.

Gobblin's rules: without ``converter.csv_to_json.custom_order`` the schema must have as many columns as the row,
and an empty field or ``null`` (any case) is null. With it, output column k takes CSV field ``order[k]``: a
negative index gives null, ``null`` gives null, but an empty field is converted (an empty ``int`` fails). Numbers
are read as Java's ``Double.valueOf(s).intValue()`` does (``1.9`` → 1, beyond the range: the range's end);
``boolean`` is true only for ``true`` in any case; types other than these and ``string``/``timestamp`` fail on
their first non-null value.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.contracts import Converter
from gobblin_py.sdk.errors import GobblinPyError, UsageError
from gobblin_py.sdk.schema_meta import GOBBLIN_SCHEMA, get_meta, with_meta
from gobblin_py.sdk.settings import Settings, setting
from gobblin_py.sdk.states import WorkUnitState

ORDER_KEY = "converter.csv_to_json.custom_order"
_TYPES = {"int": pa.int32(), "long": pa.int64(), "float": pa.float32(), "double": pa.float64(), "boolean": pa.bool_(),
          "string": pa.string(), "timestamp": pa.string()}
_RANGES = {"int": (-(2**31), 2**31 - 1), "long": (-(2**63), 2**63 - 1)}


@dataclass(frozen=True)
class CsvToJsonSettings(Settings):
    """The keys of :class:`CsvToJsonConverterV2`."""

    order: tuple[str, ...] = setting(ORDER_KEY, default=(), doc="CSV field index for each schema column, in "
                                                                "schema order (negative: null)")
    source_schema: str | None = setting("source.schema", doc="the JSON intermediate schema, when the rows carry none")

    def check(self) -> list[ConfigError]:
        bad = [i for i in self.order if not i.lstrip("-").isdigit()]
        return [ConfigError(f"{', '.join(bad)} not whole numbers", key=ORDER_KEY, hint="list CSV field indexes, "
                            "e.g. 0,1,3")] if bad else []


class CsvToJsonConverterV2(Converter):
    """CSV fields by position → typed columns named by the JSON intermediate schema."""

    settings_class = CsvToJsonSettings

    def init(self, state: WorkUnitState) -> None:
        self.settings = CsvToJsonSettings.load(state)
        self.order = [int(i) for i in self.settings.order] or None

    def convert_schema(self, schema: pa.Schema, state: WorkUnitState) -> pa.Schema:
        text = get_meta(schema, GOBBLIN_SCHEMA) or self.settings.source_schema
        if not text:
            raise UsageError("CsvToJsonConverterV2: the rows carry no JSON intermediate schema; set source.schema")
        try:
            self.columns = json.loads(text)
        except ValueError as exc:
            raise UsageError(f"source.schema: not JSON ({exc})") from None
        if not isinstance(self.columns, list):
            raise UsageError("source.schema: a JSON intermediate schema is a list of columns")
        width = len(self.columns)
        if self.order is None and width != len(schema):
            raise UsageError(f"CsvToJsonConverterV2: # of columns mismatch. Input {len(schema)} , output: {width} "
                             f"(or set {ORDER_KEY})")
        if self.order is not None and len(self.order) != width:
            raise UsageError(f"{ORDER_KEY}: {len(self.order)} indexes for {width} schema columns")
        if self.order is not None and any(i >= len(schema) for i in self.order):
            raise UsageError(f"{ORDER_KEY}: Index out of bound: the rows have {len(schema)} fields")
        self.kinds = [str((c.get("dataType") or {}).get("type", "string")).lower() for c in self.columns]
        fields = [pa.field(str(c.get("columnName")), _TYPES.get(k, pa.string()))
                  for c, k in zip(self.columns, self.kinds, strict=True)]
        self._schema = with_meta(pa.schema(fields), gobblin_schema=text)
        return self._schema

    def convert_batch(self, batch: pa.RecordBatch, state: WorkUnitState) -> pa.RecordBatch:
        arrays = []
        for k, (column, kind) in enumerate(zip(self.columns, self.kinds, strict=True)):
            index = k if self.order is None else self.order[k]
            if index < 0:
                arrays.append(pa.nulls(batch.num_rows, self._schema.field(k).type))
                continue
            text = batch.column(index)
            text = text.cast(pa.string()) if not pa.types.is_string(text.type) else text
            nulls = pc.equal(pc.utf8_lower(text), "null")
            if self.order is None:
                nulls = pc.or_(nulls, pc.equal(text, ""))
            text = pc.if_else(nulls, pa.scalar(None, pa.string()), text)
            arrays.append(self._typed(text, kind, str(column.get("columnName"))))
        return pa.RecordBatch.from_arrays(arrays, schema=self._schema)

    @staticmethod
    def _typed(text: pa.Array, kind: str, name: str) -> pa.Array:
        if kind in ("string", "timestamp"):
            return text
        if kind == "boolean":
            return pc.equal(pc.utf8_lower(pc.utf8_trim_whitespace(text)), "true")
        if kind not in ("int", "long", "float", "double"):
            if text.null_count == len(text):
                return text
            raise GobblinPyError(f"CsvToJsonConverterV2: column {name}: type {kind!r} cannot be made from CSV text "
                                 "(use int, long, float, double, boolean, string or timestamp)")
        try:
            numbers = pc.cast(pc.utf8_trim_whitespace(text), pa.float64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise GobblinPyError(f"CsvToJsonConverterV2: column {name}: a value is not a number ({exc})") from None
        if kind in _RANGES:
            low, high = _RANGES[kind]
            numbers = pc.if_else(pc.is_nan(numbers), 0.0, numbers)  # Java: (int) NaN == 0
            numbers = pc.trunc(pc.max_element_wise(pc.min_element_wise(numbers, float(high), skip_nulls=False), float(low),
                                                   skip_nulls=False))
            if kind == "long":
                big = pc.greater_equal(numbers, 2.0**63)  # 2^63-1 is no double: the nearest one overflows the cast
                return pc.if_else(big, pa.scalar(2**63 - 1, pa.int64()), pc.cast(pc.if_else(big, 0.0, numbers),
                                                                                pa.int64()))
            return pc.cast(numbers, pa.int32())
        return pc.cast(numbers, _TYPES[kind], safe=False)
