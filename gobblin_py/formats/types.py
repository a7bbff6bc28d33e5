"""Arrow types by name, as job files write them: ``int64``, ``double``, ``timestamp[ms, UTC]``, ``decimal(10, 2)``.

Types use Arrow's names: ``int8``…``int64``, ``uint8``…``uint64``, ``float32``/``float``, ``float64``/``double``,
``string``, ``large_string``, ``bool``/``boolean``, ``binary``, ``date32``/``date``,
``timestamp[s|ms|us|ns]`` with an optional time zone (``timestamp[ms, UTC]``), ``decimal128(p, s)``/``decimal(p, s)``.
"""

from __future__ import annotations

import re

import pyarrow as pa

from gobblin_py.sdk.errors import UsageError

_SIMPLE_TYPES = {
    "int8": pa.int8(), "int16": pa.int16(), "int32": pa.int32(), "int64": pa.int64(), "long": pa.int64(),
    "int": pa.int32(), "uint8": pa.uint8(), "uint16": pa.uint16(), "uint32": pa.uint32(), "uint64": pa.uint64(),
    "float32": pa.float32(), "float": pa.float32(), "float64": pa.float64(), "double": pa.float64(),
    "string": pa.string(), "utf8": pa.string(), "large_string": pa.large_string(), "bool": pa.bool_(),
    "boolean": pa.bool_(), "binary": pa.binary(), "date32": pa.date32(), "date": pa.date32(), "date64": pa.date64(),
}
_TIMESTAMP = re.compile(r"^timestamp\[(s|ms|us|ns)(?:\s*,\s*(?:tz=)?([^\]]+))?\]$")
_DECIMAL = re.compile(r"^decimal(?:128)?\(\s*(\d+)\s*,\s*(-?\d+)\s*\)$")


def parse_type(text: str) -> pa.DataType:
    """An Arrow type from its name; UsageError naming the text when it is not one."""
    name = text.strip().lower()
    if name in _SIMPLE_TYPES:
        return _SIMPLE_TYPES[name]
    match = _TIMESTAMP.match(text.strip())
    if match:
        return pa.timestamp(match.group(1), tz=match.group(2).strip() if match.group(2) else None)
    match = _DECIMAL.match(name)
    if match:
        try:
            return pa.decimal128(int(match.group(1)), int(match.group(2)))
        except ValueError as exc:  # a precision outside 1..38, a scale beyond it
            raise UsageError(f"type {text!r}: {exc}") from None
    raise UsageError(f"unknown type {text!r}: use an Arrow type name such as int64, double, string, timestamp[ms]")
