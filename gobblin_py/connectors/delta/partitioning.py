"""A new Delta table's partition columns, from the writer's partitioner.

Delta partitions by the values of columns, each file holding one partition: ``ColumnValueWriterPartitioner``
(``writer.partition.columns``) maps onto that when its columns are top-level primitive columns, each file's
partition value being the one value its rows hold (with ``writer.include.partition.in.file.names=true`` its
folders are also the ``column=value`` layout Spark and Hive read). A time-based partitioner formats a time into
folders no Delta partition column holds, and another partitioner says nothing gpy can map: the table is then
unpartitioned, with a warning saying why; its files still land in the writer's folders, which Delta does not need.
"""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa

from gobblin_py.connectors.delta.types import partition_type_problem
from gobblin_py.connectors.files.partitioners import ColumnPartitionSettings, ColumnValueWriterPartitioner
from gobblin_py.sdk.branches import branch_key
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.plugins import resolve_class
from gobblin_py.sdk.states import State

log = get_logger(__name__)


def partition_columns(props: Mapping[str, str] | State, branches: int, branch: int,
                      schema: pa.Schema | None, warn: bool = True) -> list[str]:
    """The partition columns the branch's writer partitioner maps to (empty for none); ``schema`` (the run's, in
    Delta's types) checks them, None skips that check."""
    state = props if isinstance(props, State) else State(dict(props))
    key = branch_key("writer.partitioner.class", branches, branch)
    name = state.get_prop(key)
    if not name:
        return []
    cls = resolve_class(name, key)
    if not issubclass(cls, ColumnValueWriterPartitioner):
        return _unmapped(f"{name} names folders no Delta partition column holds", warn)
    columns = list(ColumnPartitionSettings.load(state, branches=branches, branch=branch).columns)
    if any("." in c for c in columns):
        return _unmapped("a partition column inside a struct cannot partition a Delta table", warn)
    if schema is not None:
        problem = next((p for c in columns if (p := partition_type_problem(schema, c))), None)
        if problem:
            return _unmapped(problem, warn)
    return columns


def _unmapped(why: str, warn: bool) -> list[str]:
    if warn:
        log.warning("delta_table_unpartitioned", reason=why)
    return []
