"""Rendering each row of a batch as one line of text, the way Java prints a Gobblin record.

Styles (chosen by the batch's ``gobblin.record.style`` metadata, see :mod:`gobblin_py.sdk.schema_meta`):

- ``json`` (default): Avro's ``GenericRecord.toString()``: ``{"name": "Alyssa", "favorite_number": 256}``;
- ``lombok:<Class>``: a Java object's Lombok ``toString()``: ``TestRecord(partition=0, sequence=1, payload=x)``;
- ``protobuf``: a protobuf message's text form: ``partition: 0 sequence: 1 payload: "x"``.

Columns of primitive types are rendered with Arrow compute kernels, column by column (vectorised); a nested
column (struct, list, map) is rendered per row in Python (its text form has no kernel).
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

_ESCAPES = (("\\", "\\\\"), ('"', '\\"'), ("\n", "\\n"), ("\r", "\\r"), ("\t", "\\t"), ("\b", "\\b"), ("\f", "\\f"))


def _quoted(strings: pa.Array) -> pa.Array:
    for raw, escaped in _ESCAPES:
        strings = pc.replace_substring(strings, raw, escaped)
    return pc.binary_join_element_wise('"', strings, '"', "")


def _java_double_text(text: pa.Array) -> pa.Array:
    """Arrow's ``2`` / ``1e+10`` as Java prints doubles: ``2.0`` / ``1.0E10``."""
    text = pc.replace_substring_regex(text, r"^(-?\d+)e\+?(-?\d+)$", r"\1.0E\2")
    text = pc.replace_substring_regex(text, r"e\+?", "E")
    whole = pc.match_substring_regex(text, r"^-?\d+$")
    return pc.if_else(whole, pc.binary_join_element_wise(text, ".0", ""), text)


def _nested_text(value: Any) -> str:
    return json.dumps(value, separators=(", ", ": "), ensure_ascii=False, default=str)


def _value_text(column: pa.Array, quote_strings: bool) -> pa.Array:
    """Each value of ``column`` as text (nulls stay null)."""
    t = column.type
    if pa.types.is_dictionary(t):
        return _value_text(column.dictionary_decode(), quote_strings)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return _quoted(column.cast(pa.string())) if quote_strings else column.cast(pa.string())
    if pa.types.is_floating(t):
        return _java_double_text(column.cast(pa.string()))
    if pa.types.is_boolean(t) or pa.types.is_integer(t) or pa.types.is_decimal(t):
        return column.cast(pa.string())
    if pa.types.is_temporal(t):
        text = column.cast(pa.string())
        return _quoted(text) if quote_strings else text
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        decoded = [None if v is None else v.decode("utf-8", "replace") for v in column.to_pylist()]
        text = pa.array(decoded, pa.string())
        return pc.binary_join_element_wise('{"bytes": ', _quoted(text), "}", "") if quote_strings else text
    return pa.array([None if v is None else _nested_text(_plain(v)) for v in column.to_pylist()], pa.string())


def _plain(value: Any) -> Any:
    """A map's ``[(k, v), …]`` as a dict, recursively (``to_pylist`` gives maps as pair lists)."""
    if isinstance(value, list):
        if value and all(isinstance(v, tuple) and len(v) == 2 for v in value):
            return {str(k): _plain(v) for k, v in value}
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def render_rows(batch: pa.RecordBatch, style: str | None = None) -> pa.Array:
    """One string per row of ``batch`` in ``style`` (see the module notes)."""
    style = style or "json"
    if batch.num_columns == 0:
        return pa.array(["{}"] * batch.num_rows, pa.string())
    if style.startswith("lombok:"):
        parts = [pc.binary_join_element_wise(f"{name}=", pc.fill_null(_value_text(col, False), "null"), "")
                 for name, col in zip(batch.schema.names, batch.columns, strict=True)]
        body = pc.binary_join_element_wise(*parts, ", ")
        return pc.binary_join_element_wise(style.split(":", 1)[1] + "(", body, ")", "")
    if style == "protobuf":
        parts = [pc.binary_join_element_wise(f"{name}: ", _value_text(col, True), "")
                 for name, col in zip(batch.schema.names, batch.columns, strict=True)]
        return pc.binary_join_element_wise(pc.binary_join_element_wise(*parts, "\n", null_handling="skip"), "\n", "")
    parts = [pc.binary_join_element_wise(f'"{name}": ', pc.fill_null(_value_text(col, True), "null"), "")
             for name, col in zip(batch.schema.names, batch.columns, strict=True)]
    return pc.binary_join_element_wise("{", pc.binary_join_element_wise(*parts, ", "), "}", "")
