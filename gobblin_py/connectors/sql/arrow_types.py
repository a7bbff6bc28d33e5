"""Output columns and their Arrow types, and rows or driver batches made into batches of those types.

A :class:`ColumnSpec` says what a column becomes: the Arrow type, the SQL that selects it, and how a value the
driver returns is converted (SQLite keeps booleans as integers and times as text, say). The same conversions
serve DB-API rows (:func:`rows_to_batch`, one Python value at a time: the slow path) and Arrow batches from an
Arrow-native driver (:func:`conform_batch`, vectorised).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from gobblin_py.connectors.sql.errors import SqlSourceError
from gobblin_py.sdk.errors import UsageError

CONVERSIONS = ("plain", "bool_from_int", "text_timestamp", "text_date", "number_decimal", "scaled_decimal")


@dataclass
class ColumnSpec:
    """One output column: its name, Arrow type, the SQL that selects it and how its values become Arrow.

    ``copy_ok``: PostgreSQL's COPY-as-CSV path can read it; ``arrow_ok``: an Arrow-native driver (ADBC) returns
    it exactly (after :func:`conform_batch`).
    """

    name: str
    type: pa.DataType
    select: str
    db_type: str = ""
    convert: str = "plain"
    copy_ok: bool = True
    arrow_ok: bool = True


def parse_arrow_type(text: str, key: str) -> pa.DataType:
    """``decimal128(38,9)``, ``decimal256(76,20)``, ``float64`` or ``string``."""
    value = text.strip().lower().replace(" ", "")
    match = re.fullmatch(r"decimal(128|256)?\((\d+),(\d+)\)", value)
    if match:
        precision, scale = int(match.group(2)), int(match.group(3))
        if not 1 <= precision <= 76 or scale > precision:
            raise UsageError(f"{key}={text}: precision must be 1 to 76 and the scale at most the precision")
        if match.group(1) == "256" or precision > 38:
            return pa.decimal256(precision, scale)
        return pa.decimal128(precision, scale)
    if value in ("float64", "double"):
        return pa.float64()
    if value in ("string", "text"):
        return pa.string()
    raise UsageError(f"{key}={text}: use decimal128(p,s), decimal256(p,s), float64 or string")


def decimal_type(precision: int | None, scale: int | None, unbounded: pa.DataType) -> pa.DataType:
    if precision is None or precision <= 0:
        return unbounded
    scale = scale or 0
    return pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(min(precision, 76), scale)


def _read_error(spec: ColumnSpec, sample: Any, exc: BaseException) -> SqlSourceError:
    return SqlSourceError(f"column {spec.name} ({spec.db_type or spec.type}): cannot read its values as {spec.type} "
                          f"(e.g. {sample!r:.60}): {exc}")


def rows_to_batch(rows: Sequence[Sequence[Any]], columns: Sequence[ColumnSpec], schema: pa.Schema) -> pa.RecordBatch:
    """A record batch from DB-API rows, column by column with the columns' declared Arrow types."""
    if not rows:
        return pa.RecordBatch.from_pylist([], schema=schema)
    arrays = []
    for spec, values in zip(columns, zip(*rows, strict=True), strict=True):
        try:
            arrays.append(_convert(pa.array(values, type=_driver_type(spec)), spec))
        except (pa.ArrowException, TypeError, ValueError, OverflowError) as exc:
            raise _read_error(spec, next((v for v in values if v is not None), None), exc) from None
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _driver_type(spec: ColumnSpec) -> pa.DataType | None:
    """The Arrow type of the driver's values before conversion (None: let Arrow infer, for mixed numbers)."""
    return {"plain": spec.type, "bool_from_int": pa.int64(), "text_timestamp": pa.string(),
            "text_date": pa.string(), "number_decimal": None, "scaled_decimal": pa.int64()}[spec.convert]


def _convert(array: pa.Array, spec: ColumnSpec) -> pa.Array:
    if spec.convert == "scaled_decimal":
        return unscaled(array, spec.type)
    if spec.convert == "number_decimal" and pa.types.is_floating(array.type):
        import pyarrow.compute as pc  # Arrow's kernels only for this column: a run that reads nothing skips them

        array = pc.round(array, ndigits=spec.type.scale)  # SQLite keeps NUMERIC values as integers or doubles
    if array.type != spec.type:
        array = array.cast(spec.type)
    return array


def unscaled(array: pa.Array, decimal: pa.Decimal128Type) -> pa.Array:
    """Integers that are decimal values × 10^scale (``scaled_decimal``) as those decimals, exactly: the
    integers become decimals of scale 0 (whose storage is the integer itself), read with the scale. (The
    database's column type holds them to the precision.)"""
    whole = array.cast(pa.decimal128(19, 0))  # any bigint
    return pa.Array.from_buffers(decimal, len(whole), whole.buffers(), null_count=whole.null_count,
                                 offset=whole.offset)


def conform_batch(batch: pa.RecordBatch, columns: Sequence[ColumnSpec], schema: pa.Schema) -> pa.RecordBatch:
    """An Arrow-native driver's batch with the declared types (vectorised casts; exact or an error)."""
    arrays = []
    for spec, array in zip(columns, batch.columns, strict=True):
        if isinstance(array.type, pa.ExtensionType):
            array = array.storage  # PostgreSQL numeric arrives as its text
        if array.type != spec.type or spec.convert == "number_decimal":
            try:
                array = _convert(array, spec)
            except (pa.ArrowException, TypeError, ValueError) as exc:
                sample = next((v for v in array.to_pylist() if v is not None), None) if len(array) < 1 << 16 else None
                raise _read_error(spec, sample, exc) from None
        arrays.append(array)
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def fetch_batches(cur: Any, sql: str, params: Sequence[Any], columns: list[ColumnSpec], schema: pa.Schema,
                  fetch_size: int) -> Iterator[pa.RecordBatch]:
    """Run ``sql`` on a DB-API cursor and stream its rows as Arrow batches of ``fetch_size`` rows; closes it."""
    try:
        cur.execute(sql, tuple(params))
        while True:
            rows = cur.fetchmany(fetch_size)
            if not rows:
                break
            yield rows_to_batch(rows, columns, schema)
    finally:
        try:
            cur.close()
        except Exception:  # noqa: BLE001 - the connection may be gone; the error that got us here matters
            pass


def jsonable(value: Any) -> Any:
    """A partition-column value as JSON can hold it (times as ISO text)."""
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, (int, float, str)) or value is None:
        return value
    return str(value)
