"""The partitioner interface (``writer.partitioner.class``) without the built-ins' Arrow kernels.

:mod:`gobblin_py.connectors.files.partitioners` holds the built-in partitioners and the path rendering; this module is
what a job without a partitioner (and the configuration check) needs: the base class and the adapter for
Gobblin-style per-record partitioners.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Protocol, runtime_checkable

import pyarrow as pa

from gobblin_py.sdk.states import State

PartitionFields = list[tuple[str, "pa.Array | str"]]


@runtime_checkable
class PartitionerInit(Protocol):
    """A partitioner that reads its configuration once built, as :meth:`WriterPartitioner.init` does."""

    def init(self, state: State, branches: int, branch: int) -> None: ...


class WriterPartitioner(ABC):
    """Partition fields of a batch; see the module notes."""

    def init(self, state: State, branches: int, branch: int) -> None:  # noqa: B027 - an optional hook (a no-op)
        """Read configuration (its keys take Gobblin's writer suffix rule: ``.i`` with several branches)."""

    def check_schema(self, schema: pa.Schema) -> None:  # noqa: B027 - an optional hook (a no-op)
        """Fail (UsageError) before anything is written if the partitioner cannot work on ``schema``."""

    @abstractmethod
    def partition(self, batch: pa.RecordBatch) -> PartitionFields:
        """``(field name, per-row values or a constant)`` in path order."""


class RecordPartitionerAdapter(WriterPartitioner):
    """Runs a per-record partitioner (``partition_for_record(dict) -> dict`` of field → value) on batches."""

    def __init__(self, record_partitioner: Any) -> None:
        self.inner = record_partitioner

    def init(self, state: State, branches: int, branch: int) -> None:
        if isinstance(self.inner, PartitionerInit):
            self.inner.init(state, branches, branch)

    def partition(self, batch: pa.RecordBatch) -> PartitionFields:
        partitions = [self.inner.partition_for_record(row) or {} for row in batch.to_pylist()]
        names = list(dict.fromkeys(name for p in partitions for name in p))
        return [(name, pa.array([None if p.get(name) is None else str(p[name]) for p in partitions], pa.large_string()))
                for name in names]
