"""A run's column names against an Iceberg table's: names a new column may not take.

gpy's Parquet files carry no field ids: readers find their columns through the table's name mapping
(``schema.name-mapping.default``), which lists each field id with every name it has had. When another engine
renames a column (``name`` to ``customer_name``) the mapping keeps ``name`` for it, so that the older files still
read; when it drops one, the mapping keeps the dropped field's names. A run whose source still sends ``name``
would add a new column ``name``, and the mapping would then give that name to the new field: every older file's
``name`` values would move to the new column (the renamed one reading null), or a dropped column's values would
come back. Nor is there any field id the run's files could carry to tell them apart from the older files: both
call the column ``name``. Such a run is refused before anything moves, naming the column and what happened to it.

A column equal to another but for case (the table's ``Name``, the run's ``name``; or two in the run's data) is
refused too: Iceberg's names are case-sensitive, many readers' (DuckDB, Spark by default) are not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from gobblin_py.connectors.tables.evolution import SchemaConflict

KEPT = "nothing was moved and the watermark is kept"


def check_run_names(incoming: pa.Schema, where: str) -> None:
    """SchemaConflict naming both when two columns of ``incoming`` differ only by case (nested ones too)."""
    _run_case(list(incoming), "", where)


def check_names(metadata: Any, incoming: pa.Schema, where: str) -> None:
    """SchemaConflict naming the column when a column of ``incoming`` would take a name the table's name mapping
    gives a renamed or dropped field, or differs from the table's only by case (``metadata``: the table's)."""
    schema = metadata.schema()
    mapping = metadata.name_mapping()
    _table_case(list(schema.as_arrow()), list(incoming), "", where)
    if mapping is not None:
        _check_level(list(mapping), list(incoming), schema, "", where)


def _run_case(fields: Sequence[pa.Field], prefix: str, where: str) -> None:
    seen: dict[str, str] = {}
    for f in fields:
        other = seen.setdefault(f.name.lower(), f.name)
        if other != f.name:
            raise SchemaConflict(f"{where}: the run's data has columns {prefix}{other} and {prefix}{f.name}, equal "
                                 f"but for case, which many readers cannot tell apart: rename one at the source; "
                                 f"{KEPT}")
        if pa.types.is_struct(f.type):
            _run_case(list(f.type), f"{prefix}{f.name}.", where)


def _table_case(table: Sequence[pa.Field], incoming: Sequence[pa.Field], prefix: str, where: str) -> None:
    known = {f.name: f for f in table}
    lowered = {f.name.lower(): f.name for f in table}
    for f in incoming:
        if f.name in known:
            if pa.types.is_struct(f.type) and pa.types.is_struct(known[f.name].type):
                _table_case(list(known[f.name].type), list(f.type), f"{prefix}{f.name}.", where)
            continue
        found = lowered.get(f.name.lower())
        if found is not None:
            raise SchemaConflict(f"{where}: column {prefix}{f.name} of the run's data differs from the table's "
                                 f"column {prefix}{found} only by case, and would be added as a second column that "
                                 f"many readers cannot tell apart: send it as {found} (converter.classes="
                                 f"FieldProjectionConverter, converter.projection.fields=…,{f.name}:{found}); {KEPT}")


def _check_level(mapped: Sequence[Any], incoming: Sequence[pa.Field], schema: Any, prefix: str, where: str) -> None:
    by_name = {name: m for m in mapped for name in m.names}
    for f in incoming:
        m = by_name.get(f.name)
        if m is None or m.field_id is None:
            continue  # a name the table never had: a new column
        try:
            current = schema.find_field(m.field_id)
        except ValueError:
            raise SchemaConflict(
                f"{where}: column {prefix}{f.name} of the run's data was dropped from the table (field id "
                f"{m.field_id}), and the table's older files still hold a column of that name: added again, it "
                f"would bring their values back. Leave it out of the run's data (converter.classes="
                f"FieldProjectionConverter, converter.projection.fields= the other columns), or publish to another "
                f"table; {KEPT}") from None
        if current.name != f.name:
            path = schema.find_column_name(m.field_id) or current.name
            raise SchemaConflict(
                f"{where}: column {prefix}{f.name} of the run's data is the table's column {path}, renamed from "
                f"{prefix}{f.name} by another writer (field id {m.field_id}); the table's older files still call it "
                f"{prefix}{f.name}, so a new column {prefix}{f.name} would take their values. Send it as "
                f"{current.name} (converter.classes=FieldProjectionConverter, converter.projection.fields="
                f"…,{f.name}:{current.name}), or rename the table's column back; {KEPT}")
        if pa.types.is_struct(f.type) and m.fields:
            _check_level(m.fields, list(f.type), schema, f"{prefix}{f.name}.", where)
