"""The partition spec of a new Iceberg table, from the writer's partitioner (Gobblin's keys and gpy's own).

``ColumnValueWriterPartitioner`` (``writer.partition.columns``) becomes one ``identity`` field per column.
``TimeBasedWriterPartitioner`` (Gobblin's ``TimeBasedAvroWriterPartitioner``) becomes the ``year``, ``month``,
``day`` or ``hour`` transform of its time column, where Iceberg's transform names the same partitions as the
writer's folders: one timestamp or date column, ``writer.partition.granularity`` (no custom pattern, no prefix or
suffix), and the time zone UTC (Iceberg's transforms are in UTC; Gobblin's default zone is Los Angeles). A
partitioner that cannot be mapped leaves the table unpartitioned, with a warning saying why: the files still
land in the writer's folders, which Iceberg does not need.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from gobblin_py.connectors.files.partitioners import (
    ColumnPartitionSettings,
    ColumnValueWriterPartitioner,
    TimeBasedWriterPartitioner,
    TimePartitionSettings,
)
from gobblin_py.io.branch_paths import BranchScope
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.plugins import resolve_class

log = get_logger(__name__)

TRANSFORMS = {"YEAR": "year", "MONTH": "month", "DAY": "day", "HOUR": "hour"}
UTC_NAMES = ("UTC", "Etc/UTC", "GMT", "Z", "+00:00")


@dataclass(frozen=True)
class JobPartitioning:
    """What the job's partitioner asks of the table: its ``(column, transform)`` fields (empty for none), and why
    none when it has one that cannot be mapped."""

    fields: list[tuple[str, str]]
    unmapped: str | None = None

    def describe(self, scope: BranchScope) -> str:
        if self.fields:
            return f"{describe_fields(self.fields)} ({scope.key('writer.partitioner.class')})"
        if self.unmapped:
            return f"nothing, since {self.unmapped}"
        return f"nothing ({scope.key('writer.partitioner.class')} is not set)"


def job_partitioning(scope: BranchScope, schema: pa.Schema) -> JobPartitioning:
    """The partition fields the writer's partitioner maps to, against the columns of ``schema``."""
    name = scope.prop("writer.partitioner.class")
    if not name:
        return JobPartitioning([])
    cls = resolve_class(name, scope.key("writer.partitioner.class"))
    state, branches, branch = scope.state, scope.branches, scope.branch
    if issubclass(cls, ColumnValueWriterPartitioner):
        columns = ColumnPartitionSettings.load(state, branches=branches, branch=branch).columns
        if all(c in schema.names for c in columns):
            return JobPartitioning([(c, "identity") for c in columns])
        return JobPartitioning([], f"a column of {scope.key('writer.partition.columns')} is not a top-level column "
                                   "of the data")
    if not issubclass(cls, TimeBasedWriterPartitioner):
        return JobPartitioning([], f"{name} is not a partitioner gpy can map")
    settings = TimePartitionSettings.load(state, branches=branches, branch=branch)
    if settings.pattern or settings.prefix or settings.suffix:
        return JobPartitioning([], "writer.partition.pattern, prefix or suffix names folders no transform names")
    if settings.granularity not in TRANSFORMS:
        return JobPartitioning([], f"Iceberg has no {settings.granularity.lower()} transform")
    if settings.timezone not in UTC_NAMES:
        return JobPartitioning([], f"{scope.key('writer.partition.timezone')}={settings.timezone}: Iceberg's "
                                   "transforms are in UTC (set it to UTC to partition the table as the folders are)")
    if len(settings.columns) != 1 or settings.columns[0] not in schema.names:
        return JobPartitioning([], f"the time field ({scope.key('writer.partition.columns')}) is not one top-level "
                                   "column")
    column = settings.columns[0]
    kind = schema.field(column).type
    if not (pa.types.is_timestamp(kind) or pa.types.is_date(kind)):
        return JobPartitioning([], f"column {column} is {kind}, not a timestamp or date")
    if pa.types.is_date(kind) and settings.granularity == "HOUR":
        return JobPartitioning([], f"column {column} is a date, which has no hours "
                                   f"({scope.key('writer.partition.granularity')}=HOUR)")
    return JobPartitioning([(column, TRANSFORMS[settings.granularity])])


def partition_fields(scope: BranchScope, schema: pa.Schema) -> list[tuple[str, str]]:
    """``(column, transform)`` per partition field of a new table: the partitioner's, with a warning saying why
    when it cannot be mapped (the table is then unpartitioned)."""
    found = job_partitioning(scope, schema)
    if found.unmapped:
        log.warning("iceberg_table_unpartitioned", branch=scope.name, reason=found.unmapped)
    return found.fields


def describe_fields(fields: list[tuple[str, str]]) -> str:
    """Partition fields as Iceberg's DDL writes them: ``identity(country), day(ts)``; ``nothing`` for none."""
    return ", ".join(f"{transform}({column})" for column, transform in fields) or "nothing"


def partition_spec(iceberg_schema: Any, fields: list[tuple[str, str]]) -> Any:
    """pyiceberg's PartitionSpec of ``fields`` over ``iceberg_schema`` (field ids from 1000, as Iceberg does)."""
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.transforms import DayTransform, HourTransform, IdentityTransform, MonthTransform, YearTransform

    kinds = {"identity": IdentityTransform, "year": YearTransform, "month": MonthTransform, "day": DayTransform,
             "hour": HourTransform}
    spec = [PartitionField(source_id=iceberg_schema.find_field(column).field_id, field_id=1000 + n,
                           transform=kinds[transform](), name=column if transform == "identity" else
                           f"{column}_{transform}") for n, (column, transform) in enumerate(fields)]
    return PartitionSpec(*spec)



def table_fields(table: Any) -> list[tuple[str, str]]:
    """``(source column, transform)`` of each field of a table's current partition spec."""
    schema = table.schema()
    return [(schema.find_column_name(f.source_id) or str(f.source_id), str(f.transform)) for f in table.spec().fields]
