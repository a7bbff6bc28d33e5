"""The run's Arrow schema as a Delta table keeps it, and the table's schema back as Arrow.

Delta has fewer types than Arrow, and the files are added as the tasks wrote them, so a column's Delta type must
be one every Delta reader reads those Parquet columns as: strings and binaries of any Arrow layout, a dictionary
as its values, ``uint8`` to ``uint32`` as the next wider signed type (as every reader reads them; a ``uint64``
file column is read as ``decimal(20,0)`` by Spark and refused by Polars, so the dataset fails naming it), any
timestamp as Delta's microsecond ``timestamp`` (with a time zone: an instant) or ``timestamp_ntz``
(without). A table gpy makes has every column nullable: a later run's file may lack a column. A column
whose values are all null in the run (Arrow's ``null`` type: nothing told the writer its type) takes the table's
type, or ``string`` when the table is new. Types no Delta reader has (time of day, durations, half floats) fail
the dataset naming the column.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from gobblin_py.sdk.errors import UsageError

_UNSIGNED = {pa.uint8(): pa.int16(), pa.uint16(): pa.int32(), pa.uint32(): pa.int64()}


class UnsupportedType(UsageError):
    """A column of the run's data has a type no Delta table can hold."""


def delta_schema(schema: pa.Schema, where: str, table: pa.Schema | None = None) -> pa.Schema:
    """``schema`` (the run's files') with Delta's types; a column of Arrow's ``null`` type takes ``table``'s type
    for it (``string`` when the table has none), and a top-level column ``table`` says is NOT NULL stays so (the
    publisher checks the run's rows for nulls before anything moves)."""
    known = {f.name: f for f in table} if table is not None else {}
    fields = []
    for field in schema:
        old = known.get(field.name)
        if pa.types.is_null(field.type):
            fields.append(pa.field(field.name, old.type if old is not None else pa.string(), True))
        else:
            nullable = field.nullable and (old is None or old.nullable)
            fields.append(pa.field(field.name, _delta_type(field.type, field.name, where), nullable))
    return pa.schema(fields)


def _delta_type(t: pa.DataType, name: str, where: str) -> pa.DataType:
    if pa.types.is_dictionary(t):
        return _delta_type(t.value_type, name, where)
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t) \
            or pa.types.is_fixed_size_binary(t):
        return pa.binary()
    if t in _UNSIGNED:
        return _UNSIGNED[t]
    if t == pa.uint64():
        raise UnsupportedType(f"{where}: column {name} is uint64, which no Delta type holds as the file keeps it "
                              "(Spark reads it as decimal(20,0), Polars refuses the table): cast it with a "
                              f"converter (converter.cast.fields={name}:int64, or {name}:decimal128(20, 0)), or leave it out")
    if pa.types.is_signed_integer(t) or pa.types.is_boolean(t) or t in (pa.float32(), pa.float64(), pa.date32()):
        return t
    if pa.types.is_date64(t):
        return pa.date32()
    if pa.types.is_timestamp(t):
        return pa.timestamp("us", "UTC" if t.tz else None)
    if pa.types.is_decimal(t) and t.precision <= 38:
        return pa.decimal128(t.precision, t.scale)
    if pa.types.is_null(t):
        return pa.string()
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _delta_type(f.type, f"{name}.{f.name}", where)) for f in t])
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) \
            or pa.types.is_list_view(t) or pa.types.is_large_list_view(t):
        return pa.list_(_delta_type(t.value_type, f"{name}.element", where))
    if pa.types.is_map(t):
        return pa.map_(_delta_type(t.key_type, f"{name}.key", where), _delta_type(t.item_type, f"{name}.value", where))
    raise UnsupportedType(f"{where}: column {name} is {t}, which a Delta table cannot hold (Delta has no time of "
                          "day, duration, interval or half-float type); cast it with a converter, or leave it out "
                          "of the job's output")


def to_delta(schema: pa.Schema) -> Any:
    """deltalake's Schema of an Arrow schema already in Delta's types (:func:`delta_schema`)."""
    from deltalake import Schema

    return Schema.from_arrow(schema)


def table_arrow_schema(table: Any) -> pa.Schema:
    """A DeltaTable's schema as Arrow (plain strings and lists: the types :func:`delta_schema` gives)."""
    return pa.schema(table.schema().to_arrow())


def case_clash(schema: pa.Schema, table: pa.Schema | None, where: str) -> None:
    """Refuse two columns whose names differ only by case (Delta's names are case-insensitive): in the run's data
    (``schema``), or one of the run's and one of the ``table``'s; nested fields too."""
    _clash(list(schema), list(table) if table is not None else [], "", where)


def _clash(run: list[pa.Field], table: list[pa.Field], prefix: str, where: str) -> None:
    seen: dict[str, str] = {}
    for field in run:
        other = seen.setdefault(field.name.lower(), field.name)
        if other != field.name:
            raise UsageError(f"{where}: the run's data has columns {prefix}{other} and {prefix}{field.name}, which "
                             "a Delta table cannot tell apart (its column names ignore case); rename one")
    known = {f.name.lower(): f for f in table}
    for field in run:
        old = known.get(field.name.lower())
        if old is not None and old.name != field.name:
            raise UsageError(f"{where}: the run's column {prefix}{field.name} differs from the table's column "
                             f"{prefix}{old.name} only by case, which Delta does not tell apart; rename it to "
                             f"{old.name} (a converter, or at the source), or publish to another table")
        inner = _struct_of(field.type)
        if inner is not None:
            _clash(inner, (_struct_of(old.type) if old is not None else None) or [], f"{prefix}{field.name}.", where)


def _struct_of(t: pa.DataType) -> list[pa.Field] | None:
    """The fields of a struct (inside lists and dictionaries too), None for another type."""
    while pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        t = t.value_type
    return list(t) if pa.types.is_struct(t) else None


def partition_type_problem(schema: pa.Schema, column: str) -> str | None:
    """Why ``column`` of ``schema`` (Delta's types) cannot be a Delta partition column, or None."""
    if column not in schema.names:
        return f"{column} is not a top-level column of the data"
    t = schema.field(column).type
    if pa.types.is_nested(t) or pa.types.is_binary(t):
        return f"column {column} is {t}; Delta partitions by primitive columns"
    return None
