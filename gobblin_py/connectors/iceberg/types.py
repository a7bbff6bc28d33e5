"""The Arrow types a run's files may hold for pyiceberg to add them to a table, checked before anything moves.

pyiceberg adds a Parquet file as it is, and refuses in the commit — after the files moved, so in every later run
too — a column whose type the table cannot hold as written: a timestamp with a time zone other than UTC (Iceberg
keeps instants in UTC, or local times without a zone), nanoseconds in a table of format 2 (microseconds), an
unsigned integer (Iceberg's integers are signed). The run is refused before anything moves, naming the column and
the cast (``TypeCastConverter``) that publishes it; a table is not made for a run so refused.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pyarrow as pa

from gobblin_py.connectors.tables.evolution import SchemaConflict

UTC_ALIASES = ("UTC", "+00:00", "Etc/UTC", "Z")  # the zones pyiceberg takes for Iceberg's timestamptz
_SIGNED = {8: "int32", 16: "int32", 32: "int64", 64: "int64"}  # Iceberg's int is 32 bits: int8/int16 widen


def check_types(schema: pa.Schema, format_version: int, name: str) -> None:
    """SchemaConflict naming each column of ``schema`` (dotted paths, nested ones too) that a table ``name`` of
    ``format_version`` cannot take as written, and the cast that fixes it."""
    problems = list(_problems(list(schema), format_version, ""))
    if not problems:
        return
    shown = "; ".join(f"column {path} {why}" for path, why, _ in problems)
    casts = ",".join(f"{path}:{cast}" for path, _, cast in problems)
    raise SchemaConflict(f"table {name}: {shown}; pyiceberg would refuse the files in the commit. Cast them, e.g. "
                         f"converter.classes=TypeCastConverter with converter.cast.fields={casts}; nothing was "
                         "moved and the watermark is kept")


def _problems(fields: Sequence[pa.Field], format_version: int, prefix: str) -> Iterator[tuple[str, str, str]]:
    for f in fields:
        kind = f.type
        while pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_list_view(kind):
            kind = kind.value_type
        if pa.types.is_dictionary(kind):
            kind = kind.value_type
        path = prefix + f.name
        if pa.types.is_struct(kind):
            yield from _problems([kind.field(i) for i in range(kind.num_fields)], format_version, f"{path}.")
        elif pa.types.is_map(kind):
            yield from _problems([kind.key_field, kind.item_field], format_version, f"{path}.")
        elif pa.types.is_timestamp(kind):
            unit = "ns" if kind.unit == "ns" and format_version >= 3 else "us"
            zone = kind.tz if kind.tz is None or kind.tz in UTC_ALIASES else "UTC"
            cast = f"timestamp[{unit}{', ' + zone if zone else ''}]"
            if kind.tz is not None and kind.tz not in UTC_ALIASES:
                yield path, (f"holds timestamps in time zone {kind.tz}, and an Iceberg table keeps instants in UTC "
                             "(the same instants)"), cast
            elif kind.unit == "ns" and format_version < 3:
                yield path, (f"holds timestamps in nanoseconds, and an Iceberg table of format {format_version} keeps "
                             "microseconds (a CSV's times are read as nanoseconds)"), cast
        elif pa.types.is_unsigned_integer(kind):
            yield path, (f"is {kind}, and an Iceberg table's integers are signed"
                         + (" (int64 holds values up to 2^63 - 1; decimal128(20, 0) holds them all)"
                            if kind.bit_width == 64 else "")), \
                _SIGNED[kind.bit_width]
