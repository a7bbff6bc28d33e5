"""The writer of a snapshot + deltas merge: gpy's compaction writer (the merged records, in the input's format, into
the folder the commit swaps in for the output), which then records in that folder what was merged
(``_HIVE_COMPACTION_COMPLETE``), so the record and the output it describes are swapped in together."""

from __future__ import annotations

import posixpath

import pyarrow as pa

from gobblin_py.connectors.compaction.hive.merge import DONE
from gobblin_py.connectors.compaction.hive.source import INPUTS_KEY
from gobblin_py.connectors.compaction.writer import CompactionWriter
from gobblin_py.io import fs as fsutil
from gobblin_py.sdk.contracts import DataWriter, DataWriterBuilder
from gobblin_py.sdk.states import WorkUnitState


class HiveCompactionWriter(CompactionWriter):
    """A :class:`CompactionWriter` that writes the merge's inputs document last (see the module)."""

    def __init__(self, state: WorkUnitState, schema: pa.Schema, writer_id: str) -> None:
        super().__init__(state, schema, writer_id)
        self.inputs = state.get_prop(INPUTS_KEY) or ""

    def commit(self) -> list[str]:
        committed = super().commit()
        if self.active:
            fsutil.atomic_write(self.fs, posixpath.join(self.root, DONE), self.inputs.encode())
        return committed


class HiveCompactionWriterBuilder(DataWriterBuilder):
    """Builds the :class:`HiveCompactionWriter` of a snapshot + deltas merge."""

    def build(self, state: WorkUnitState, schema: pa.Schema, branches: int, branch: int, writer_id: str) -> DataWriter:
        return HiveCompactionWriter(state, schema, writer_id)
