"""``HiveCompactionSource`` (``source.class=org.apache.gobblin.compaction.hive.CompactionRunner``): one work unit
merging the job's snapshot and deltas into ``output.datalocation``, and the extractor yielding the merged records.

The job needs no writer or publisher keys: it implies gpy's compaction writer (which also writes
``_HIVE_COMPACTION_COMPLETE``) and the compaction publisher, whose commit swaps the new folder in for the output,
and puts its work folders under ``compaction.tmp.dest.dir`` as a compaction job does.
"""

from __future__ import annotations

import os
import posixpath
import tempfile
import time
import uuid
from collections.abc import Iterator, Mapping

import pyarrow as pa

from gobblin_py.connectors.compaction.hive.merge import Merge, inputs_document, list_table, merged_already
from gobblin_py.connectors.compaction.hive.settings import HiveCompactionSettings
from gobblin_py.connectors.compaction.inputs import format_of
from gobblin_py.connectors.compaction.plan import COMPACT
from gobblin_py.connectors.compaction.source import CompactionSource, beside
from gobblin_py.connectors.compaction.unit_keys import (
    DEST_KEY,
    FORMAT_KEY,
    INIT_KEY,
    MARKER_KEY,
    MODE_KEY,
    NEW_KEY,
    OLD_KEY,
)
from gobblin_py.io import fs as fsutil
from gobblin_py.sdk.contracts import EmptyPlan, Extractor, Source
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.run_states import SourceState
from gobblin_py.sdk.states import Extract, WorkUnit, WorkUnitState

log = get_logger(__name__)

INPUTS_KEY = "gpy.compaction.hive.inputs"
WRITER = "gobblin_py.connectors.compaction.hive.writer.HiveCompactionWriterBuilder"


class HiveCompactionSource(Source):
    """Gobblin's Hive compactor (``CompactionRunner`` with a ``SerialCompactor``) without Hive: merges a snapshot
    and its deltas by primary key, the last delta's record winning (see the package)."""

    settings_class = HiveCompactionSettings

    def __init__(self) -> None:
        self._empty: EmptyPlan | None = None

    @classmethod
    def job_defaults(cls, props: Mapping[str, str]) -> dict[str, str]:
        """A compaction job's implied keys, with the writer that also records what was merged."""
        return {**CompactionSource.job_defaults(props), "writer.builder.class": WRITER}

    def get_workunits(self, state: SourceState) -> list[WorkUnit]:
        settings = HiveCompactionSettings.load(state)
        tables = settings.tables()
        files = [list_table(table) for table in tables]
        fmt = format_of([f for listed in files for f in listed])
        merge = Merge(tables, files, fmt)
        merge.fills(merge.schemas())  # the key fields and the added columns checked before any work
        document = inputs_document(fmt, tables, files)
        output = settings.output_location
        if merged_already(output, document):
            self._empty = EmptyPlan(f"{output} is the merge of these {sum(map(len, files))} files already")
            return []
        unit = WorkUnit.create(Extract.create("SNAPSHOT_ONLY", "gobblin.compaction.hive",
                                              settings.output_name or posixpath.basename(output.rstrip("/"))))
        for key, value in (("dataset.urn", output), (MODE_KEY, COMPACT), (FORMAT_KEY, fmt), (DEST_KEY, output),
                           (NEW_KEY, beside(output, "new")), (OLD_KEY, beside(output, "old")),
                           (INIT_KEY, str(int(time.time() * 1000))), (MARKER_KEY, "0"), (INPUTS_KEY, document)):
            unit.set_prop(key, value)
        log.info("hive_compaction_planned", output=output, format=fmt,
                 files={t.role: len(f) for t, f in zip(tables, files, strict=True)})
        return [unit]

    def explain_empty_plan(self) -> EmptyPlan | None:
        return self._empty

    def get_extractor(self, state: WorkUnitState) -> Extractor:
        return HiveCompactionExtractor(state)


class HiveCompactionExtractor(Extractor):
    """The merged records of the snapshot and deltas its work unit names (:class:`~.merge.Merge`)."""

    def __init__(self, state: WorkUnitState) -> None:
        self.state = state
        self.settings = HiveCompactionSettings.load(state)
        self.merge = Merge.from_document(state.get_prop(INPUTS_KEY) or "", self.settings.tables())
        self._schema: pa.Schema | None = None

    def get_schema(self) -> pa.Schema:
        if self._schema is None:
            self._schema = self.merge.output_schema(self.merge.schemas())
        return self._schema

    def read_batches(self) -> Iterator[pa.RecordBatch]:
        staging = self.state.get_prop("writer.staging.dir") or ""
        # spill files are local: the task's staging folder when it is on local disk, else the machine's temp
        spill = os.path.join(staging if staging and fsutil.is_local_url(staging) else tempfile.gettempdir(),
                             "compaction-spill", uuid.uuid4().hex)
        yield from self.merge.batches(self.settings.partition_bytes, spill)

    def get_expected_record_count(self) -> int:
        return -1
