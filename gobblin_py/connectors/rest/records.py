"""JSON records into Arrow batches: of an Avro record schema (its fields only, in its types) or inferred."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from gobblin_py.formats.avro_read import arrow_schema_for
from gobblin_py.sdk.errors import PermanentError


def schema_of(avro: str | None, where: str) -> pa.Schema | None:
    """The Arrow schema (carrying the Avro schema) of an Avro record schema's JSON, or None without one."""
    return arrow_schema_for(avro, where) if avro else None


def to_batch(records: Sequence[dict[str, Any]], schema: pa.Schema | None, where: str) -> pa.RecordBatch:
    """One batch of ``records``: the schema's fields only, cast to its types; inferred without a schema."""
    try:
        if schema is None:
            return pa.RecordBatch.from_pylist(list(records))
        return pa.RecordBatch.from_pylist([{name: r.get(name) for name in schema.names} for r in records],
                                          schema=schema)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError) as exc:
        raise PermanentError(f"{where}: a record does not fit the schema: {exc}") from None
