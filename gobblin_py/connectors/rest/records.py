"""JSON records into Arrow batches: of an Avro record schema (its fields only, in its types) or inferred."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa

from gobblin_py.formats.avro_read import arrow_schema_for
from gobblin_py.sdk.errors import PermanentError


def schema_of(avro: str | None, where: str) -> pa.Schema | None:
    """The Arrow schema (carrying the Avro schema) of an Avro record schema's JSON, or None without one."""
    return arrow_schema_for(avro, where) if avro else None


def to_batch(records: Sequence[dict[str, Any]], schema: pa.Schema | None, where: str,
             label: Callable[[int], str] = lambda i: f"record {i + 1}") -> pa.RecordBatch:
    """One batch of ``records``: the schema's fields only, cast to its types; inferred without a schema. A record
    that does not fit is an error naming it (``label`` of its index) and its field."""
    try:
        if schema is None:
            return pa.RecordBatch.from_pylist(list(records))
        return pa.RecordBatch.from_pylist([{name: r.get(name) for name in schema.names} for r in records],
                                          schema=schema)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError) as exc:
        raise PermanentError(f"{where}: {_misfit(records, schema, label) or 'a record does not fit the schema'}: "
                             f"{exc}") from None


def _misfit(records: Sequence[dict[str, Any]], schema: pa.Schema | None, label: Callable[[int], str]) -> str | None:
    """Which record and field do not fit (found one field, then one record at a time: only on the way to an
    error), or None when no single value is to blame."""
    if schema is None:
        return None
    for field in schema:
        column = [r.get(field.name) for r in records]
        try:
            pa.array(column, field.type)
            continue
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError):
            pass
        for index, value in enumerate(column):
            try:
                pa.array([value], field.type)
            except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError):
                shown = json.dumps(value, ensure_ascii=False, default=str)
                shown = shown if len(shown) <= 200 else shown[:199] + "…"
                return f"{label(index)} does not fit the schema: its field {field.name} ({field.type}) cannot hold {shown}"
    return None
