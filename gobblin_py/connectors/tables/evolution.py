"""How a table's schema must change to take a run's files, decided before anything is committed.

A run's files may carry columns the table lacks (a column added at the source), a type the table's spec lets a
column widen to (``int`` → ``long``, ``float`` → ``double``, a decimal's precision), a nullable column where the
table says required, or none of these. :func:`plan_changes` compares the two Arrow schemas (nested structs field
by field) and says what the table's schema gains; with ``table.schema.evolution=fail`` any change, and in every
mode a change no reader could follow (a ``string`` where the table has a ``long``), is a :class:`SchemaConflict`
naming the column, the table's type and the incoming type. Columns the table has and the files lack are fine:
they read as null. Types are compared by what they hold, not how Arrow lays them out (``large_string`` is a
``string``, a dictionary its values, any timestamp unit a timestamp).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

from gobblin_py.sdk.errors import UsageError

ADD_COLUMNS, FAIL = "add_columns", "fail"
EVOLUTION_MODES = (ADD_COLUMNS, FAIL)

_INTS = (pa.int8(), pa.int16(), pa.int32(), pa.int64())


class SchemaConflict(UsageError):
    """A run's files do not fit the table's schema, and the table may not (or cannot) change to take them."""


@dataclass
class SchemaChanges:
    """What a table's schema gains: new columns (dotted paths), widened types, columns no longer required."""

    added: list[str] = field(default_factory=list)
    widened: list[tuple[str, pa.DataType, pa.DataType]] = field(default_factory=list)
    relaxed: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.added or self.widened or self.relaxed)

    def describe(self) -> str:
        parts = [f"new column {name}" for name in self.added]
        parts += [f"{name} widened from {old} to {new}" for name, old, new in self.widened]
        parts += [f"{name} no longer required" for name in self.relaxed]
        return ", ".join(parts) or "none"


def normalised(t: pa.DataType) -> pa.DataType:
    """``t`` as what it holds: large and view variants as the plain type, a dictionary as its values, any
    timestamp unit as microseconds (the unit tables keep)."""
    if pa.types.is_dictionary(t):
        return normalised(t.value_type)
    if pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return pa.binary()
    if pa.types.is_timestamp(t):
        return pa.timestamp("us", t.tz and "UTC")
    if pa.types.is_large_list(t) or pa.types.is_list_view(t) or pa.types.is_large_list_view(t):
        return pa.list_(normalised(t.value_type))
    return t


def widens(old: pa.DataType, new: pa.DataType, decimals: bool = True) -> bool:
    """Whether a table column of type ``old`` may become ``new``: a wider integer, ``float`` to ``double``, a
    decimal of more precision and the same scale (where the format allows it: ``decimals``)."""
    if old in _INTS and new in _INTS:
        return _INTS.index(new) > _INTS.index(old)
    if old == pa.float32() and new == pa.float64():
        return True
    if decimals and pa.types.is_decimal(old) and pa.types.is_decimal(new):
        return new.scale == old.scale and new.precision > old.precision
    return False


def fits(table: pa.DataType, incoming: pa.DataType) -> bool:
    """Whether data of type ``incoming`` reads as the table's ``table`` type as it is: the same, or narrower."""
    return incoming == table or widens(incoming, table)


def plan_changes(table: pa.Schema, incoming: pa.Schema, mode: str, where: str, decimals: bool = True,
                 widening: bool = True) -> SchemaChanges:
    """What ``table`` must gain to take files of ``incoming``: SchemaConflict (naming ``where``, the table) when
    a column cannot, or when ``mode`` is ``fail`` and anything would change. ``widening``: the format lets a
    column's type widen; ``decimals``: a decimal's precision too."""
    changes = SchemaChanges()
    _compare(list(table), list(incoming), "", changes, where, decimals, widening)
    if changes and mode == FAIL:
        raise SchemaConflict(f"{where}: the run's data changes the table's schema ({changes.describe()}) and "
                             f"table.schema.evolution={FAIL}; set it to {ADD_COLUMNS}, or change the source back")
    return changes


def _compare(table: list[pa.Field], incoming: list[pa.Field], prefix: str, changes: SchemaChanges, where: str,
             decimals: bool, widening: bool) -> None:
    known = {f.name: f for f in table}
    for new in incoming:
        name = prefix + new.name
        old = known.get(new.name)
        if old is None:
            changes.added.append(name)
            continue
        if not old.nullable and new.nullable:
            changes.relaxed.append(name)
        _compare_types(old.type, new.type, name, changes, where, decimals, widening)


def _compare_types(old_type: pa.DataType, new_type: pa.DataType, name: str, changes: SchemaChanges, where: str,
                   decimals: bool, widening: bool) -> None:
    old, new = normalised(old_type), normalised(new_type)
    if pa.types.is_struct(old) and pa.types.is_struct(new):
        _compare(list(old), list(new), f"{name}.", changes, where, decimals, widening)
        return
    if pa.types.is_list(old) and pa.types.is_list(new):
        _compare_types(old.value_type, new.value_type, f"{name}.element", changes, where, decimals, widening)
        return
    if pa.types.is_map(old) and pa.types.is_map(new):
        _compare_types(old.key_type, new.key_type, f"{name}.key", changes, where, decimals, widening)
        _compare_types(old.item_type, new.item_type, f"{name}.value", changes, where, decimals, widening)
        return
    if fits(old, new):
        return
    if widening and widens(old, new, decimals):
        changes.widened.append((name, old, new))
        return
    allowed = ("a type may only widen: int to long, float to double" + (", a decimal's precision" if decimals else "")
               if widening else "a column keeps its type; narrower values are read as it")
    raise SchemaConflict(f"{where}: column {name} is {old} in the table and {new} in the run's data, which the table "
                         f"cannot take ({allowed}); nothing of the dataset is committed and its watermark is kept")
