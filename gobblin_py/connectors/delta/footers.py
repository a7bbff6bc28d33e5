"""What a Delta ``add`` action says of a file, from its Parquet footer: statistics and partition values.

The statistics (``numRecords``, ``nullCount``, ``minValues``/``maxValues``) let readers skip files. A bound that
is wrong loses rows at read time, so only exact ones are given: integers, dates, timestamps of at most microsecond
precision and strings of up to :data:`MAX_STRING_STAT` characters, for the first :data:`INDEXED_COLUMNS` top-level
primitive columns (Delta's ``delta.dataSkippingNumIndexedCols``); floats (NaN is outside the footer's bounds and
inside Spark's), decimals (JSON numbers are doubles) and nested columns get only their null counts, or nothing.

A partitioned table's file holds one value of each partition column (the writer's partitioner put it in its own
folder): that value, read from the footer's bounds, is the file's partition value, as Delta spells it.
"""

from __future__ import annotations

import datetime
import decimal
import json
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from gobblin_py.io import fs as fsutil
from gobblin_py.sdk.errors import UsageError

INDEXED_COLUMNS = 32
MAX_STRING_STAT = 64


@dataclass
class FileFacts:
    """A file's Delta statistics (JSON) and partition values."""

    stats: str
    partition_values: dict[str, str | None]


@dataclass
class _Bounds:
    nulls: int = 0
    low: Any = None
    high: Any = None
    exact: bool = True  # every row group with values gave its bounds
    nanos: bool = False  # a timestamp kept to the nanosecond: its bounds are cut to the microsecond


def read_facts(path: str, fs_uri: str | None, records: int, partition_by: list[str]) -> FileFacts:
    """The facts of the Parquet file at ``path`` (which holds ``records`` rows): one read of its footer."""
    import pyarrow.parquet as pq

    fs, local = fsutil.open_fs(path, fs_uri)
    with fs.open(local, "rb") as stream:
        parquet = pq.ParquetFile(stream)
        schema = parquet.schema_arrow
        bounds = _bounds(parquet.metadata, schema)
        missing = [c for c in partition_by if c in schema.names and not bounds[c].exact]
        values = _read_values(parquet, missing) if missing else {}
    partition_values: dict[str, str | None] = {}
    for column in partition_by:
        if column in values:
            partition_values[column] = values[column]
        elif column not in schema.names or bounds[column].nulls == records:
            partition_values[column] = None
        else:
            found = bounds[column]
            if found.low != found.high or found.nulls:
                raise UsageError(f"{path}: holds several values of the partition column {column} ({found.low!r} to "
                                 f"{found.high!r}{', and nulls' if found.nulls else ''}); a Delta table's file holds "
                                 "one partition: partition the writer by the table's partition columns")
            partition_values[column] = partition_text(found.low)
        if partition_values[column] == "":
            raise UsageError(f"{path}: the partition column {column} is the empty string, which Delta's readers read "
                             "as null; make it null, or another value, with a converter")
    return FileFacts(_stats_json(records, schema, bounds), partition_values)


def _bounds(metadata: Any, schema: pa.Schema) -> dict[str, _Bounds]:
    """Per top-level primitive column (by name), its null count and bounds over the row groups."""
    leaves: dict[int, str] = {}
    leaf = 0
    for field in schema:
        width = _leaf_count(field.type)
        if width == 1 and not pa.types.is_nested(field.type):
            leaves[leaf] = field.name
        leaf += width
    found = {name: _Bounds() for name in leaves.values()}
    # a timestamp's bounds as the stored integers: pyarrow would import pandas (a third of a second) to give them
    units = {index: _timestamp_unit(metadata.schema.column(index)) for index, name in leaves.items()
             if pa.types.is_timestamp(schema.field(name).type)}
    for group in range(metadata.num_row_groups):
        row_group = metadata.row_group(group)
        for index, name in leaves.items():
            stats = row_group.column(index).statistics
            bounds = found[name]
            if stats is None or not stats.has_null_count:
                bounds.exact = False
                continue
            bounds.nulls += stats.null_count
            if stats.null_count == row_group.num_rows:
                continue
            if not stats.has_min_max or (index in units and units[index] is None):
                bounds.exact = False
                continue
            low, high = (stats.min_raw, stats.max_raw) if index in units else (stats.min, stats.max)
            bounds.low = low if bounds.low is None else min(bounds.low, low)
            bounds.high = high if bounds.high is None else max(bounds.high, high)
    for index, unit in units.items():
        bounds = found[leaves[index]]
        if unit is not None and bounds.low is not None:
            tz = schema.field(leaves[index]).type.tz
            bounds.low, bounds.high = _instant(bounds.low, unit, tz), _instant(bounds.high, unit, tz)
            bounds.nanos = unit == "NANOS"
    return found


def _timestamp_unit(column: Any) -> str | None:
    """``MILLIS``, ``MICROS`` or ``NANOS``: how a Parquet timestamp column stores its values (None: otherwise)."""
    if column.physical_type != "INT64":
        return None  # INT96, the legacy layout
    if column.logical_type.type == "TIMESTAMP":
        return _UNITS.get(json.loads(column.logical_type.to_json()).get("timeUnit"))
    return {"TIMESTAMP_MILLIS": "MILLIS", "TIMESTAMP_MICROS": "MICROS"}.get(str(column.converted_type))


_UNITS = {"milliseconds": "MILLIS", "microseconds": "MICROS", "nanoseconds": "NANOS"}
_EPOCH = datetime.datetime(1970, 1, 1)
_PER_MICRO = {"MILLIS": (1000, 1), "MICROS": (1, 1), "NANOS": (1, 1000)}


def _instant(raw: int, unit: str, tz: str | None) -> datetime.datetime:
    """The stored integer ``raw`` of a timestamp as a datetime (UTC-aware with ``tz``), to the microsecond (down)."""
    times, per = _PER_MICRO[unit]
    value = _EPOCH + datetime.timedelta(microseconds=raw * times // per)
    return value.replace(tzinfo=datetime.timezone.utc) if tz else value


def _leaf_count(t: pa.DataType) -> int:
    if pa.types.is_struct(t):
        return sum(_leaf_count(f.type) for f in t)
    if pa.types.is_map(t):
        return _leaf_count(t.key_type) + _leaf_count(t.item_type)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _leaf_count(t.value_type)
    return 1


def _stats_json(records: int, schema: pa.Schema, bounds: dict[str, _Bounds]) -> str:
    nulls: dict[str, int] = {}
    low: dict[str, Any] = {}
    high: dict[str, Any] = {}
    for name in [f.name for f in schema][:INDEXED_COLUMNS]:
        found = bounds.get(name)
        if found is None or not found.exact:
            continue
        nulls[name] = found.nulls
        if found.low is None:
            continue
        pair = _stat_pair(schema.field(name).type, found.low, found.high, found.nanos)
        if pair is not None:
            low[name], high[name] = pair
    stats: dict[str, Any] = {"numRecords": records}
    if nulls:
        stats["nullCount"] = nulls
    if low:
        stats["minValues"], stats["maxValues"] = low, high
    return json.dumps(stats, separators=(",", ":"), ensure_ascii=False)


def _stat_pair(t: pa.DataType, low: Any, high: Any, nanos: bool = False) -> tuple[Any, Any] | None:
    """The exact JSON bounds of a column of type ``t``, or None where none can be given exactly."""
    if pa.types.is_dictionary(t):
        t = t.value_type
    if pa.types.is_integer(t) and isinstance(low, int):
        return low, high
    if pa.types.is_date(t) and isinstance(low, datetime.date):
        return low.isoformat(), high.isoformat()
    if pa.types.is_timestamp(t) and not nanos and isinstance(low, datetime.datetime):
        suffix = "Z" if t.tz else ""
        return (_utc(low).strftime("%Y-%m-%dT%H:%M:%S.%f") + suffix,
                _utc(high).strftime("%Y-%m-%dT%H:%M:%S.%f") + suffix)
    if (pa.types.is_string(t) or pa.types.is_large_string(t)) and isinstance(low, str) \
            and max(len(low), len(high)) <= MAX_STRING_STAT:
        return low, high
    return None


def _utc(value: datetime.datetime) -> datetime.datetime:
    return value.astimezone(datetime.timezone.utc).replace(tzinfo=None) if value.tzinfo else value


def partition_text(value: Any) -> str:
    """A partition value as Delta's log spells it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime.datetime):
        text = _utc(value).strftime("%Y-%m-%d %H:%M:%S.%f")
        return text.replace(" ", "T") + "Z" if value.tzinfo else text
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, (decimal.Decimal, int, float, str)):
        return str(value)
    return str(value)


def _read_values(parquet: Any, columns: list[str]) -> dict[str, str | None]:
    """The one value of each of ``columns`` in the file, read from its data (a footer without their bounds)."""
    import pyarrow.compute as pc

    table = parquet.read(columns=columns)
    out: dict[str, str | None] = {}
    for column in columns:
        distinct = pc.unique(table.column(column).combine_chunks()).to_pylist()
        if len(distinct) > 1:
            raise UsageError(f"holds several values of the partition column {column} ({distinct[:3]}); a Delta "
                             "table's file holds one partition: partition the writer by the table's partition "
                             "columns")
        out[column] = None if not distinct or distinct[0] is None else partition_text(distinct[0])
    return out
