"""``CompactionSource`` (Gobblin's ``org.apache.gobblin.compaction.source.CompactionSource``): one work unit per
dataset with something to do (:mod:`.plan`), and the extractor that reads and deduplicates a dataset's files.

A compaction job file needs no writer or publisher keys: :meth:`CompactionSource.job_defaults` names the
compaction writer and publisher and puts the run's work folders (and, unless the job or its system configuration
sets one, the state store with its commit log) under ``compaction.tmp.dest.dir``, as Gobblin's compaction job
keeps its work there.
"""

from __future__ import annotations

import json
import os
import posixpath
import tempfile
import time
import uuid
from collections.abc import Iterator, Mapping
from typing import Any

import pyarrow as pa

from gobblin_py.connectors.compaction.cluster import compact_on_cluster
from gobblin_py.connectors.compaction.completeness import CompletenessGate
from gobblin_py.connectors.compaction.dedup import DedupSpec, checked_spec, dedup_dataset, has_polars
from gobblin_py.connectors.compaction.finder import DatasetFinder
from gobblin_py.connectors.compaction.inputs import dataset_schema, format_of, read_files
from gobblin_py.connectors.compaction.plan import COMPACT, Action, plan_dataset
from gobblin_py.connectors.compaction.settings import CompactionSettings
from gobblin_py.connectors.compaction.unit_keys import (
    CONSUME_KEY,
    DEST_KEY,
    FILES_KEY,
    FORMAT_KEY,
    INIT_KEY,
    LATE_TARGET_KEY,
    MARK_COMPLETE_KEY,
    MARKER_KEY,
    MODE_KEY,
    NEW_KEY,
    OLD_KEY,
    decode_files,
    encode_files,
)
from gobblin_py.io import fs as fsutil
from gobblin_py.io.prefetch import prefetched
from gobblin_py.sdk.cluster_tasks import CLUSTER_TASK_COUNTERS
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.contracts import EmptyPlan, Extractor, Source
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.run_states import SourceState
from gobblin_py.sdk.settings import problem_at
from gobblin_py.sdk.states import Extract, TaskState, WorkUnit, WorkUnitState

log = get_logger(__name__)

WRITER = "gobblin_py.connectors.compaction.writer.CompactionWriterBuilder"
PUBLISHER = "gobblin_py.connectors.compaction.publisher.CompactionPublisher"
# keys of a job whose records go through the task pipeline's converters, forks or quality checks
PIPELINE_KEYS = ("converter.classes", "fork.operator.class", "qualitychecker.task.policies",
                 "qualitychecker.row.policies")

def beside(dest: str, what: str) -> str:
    """A hidden folder next to ``dest`` (``.<name>.gpy-<what>``): where the new output is built and the old one
    waits while they are swapped. Its name is fixed, so a run that crashed leaves nothing the next cannot find."""
    parent, name = posixpath.split(dest.rstrip("/"))
    return posixpath.join(parent, f".{name}.gpy-{what}")


class CompactionSource(Source):
    """Gobblin's CompactionSource (and its legacy MRCompactor's dataset finders): plans the datasets to compact."""

    settings_class = CompactionSettings

    def __init__(self) -> None:
        self._empty: EmptyPlan | None = None

    @classmethod
    def job_defaults(cls, props: Mapping[str, str]) -> dict[str, str]:
        """Keys a compaction job implies when it does not set them (see the module)."""
        tmp = (props.get("compaction.tmp.dest.dir") or "/tmp/gobblin-compaction").rstrip("/")
        defaults = {"writer.builder.class": WRITER, "data.publisher.type": PUBLISHER,
                    "task.data.root.dir": tmp, "state.store.dir": posixpath.join(tmp, "_state_store")}
        if props.get("writer.staging.dir") or props.get("writer.output.dir"):
            del defaults["task.data.root.dir"]
        return defaults

    @classmethod
    def validate(cls, props: Mapping[str, str]) -> list[ConfigError]:
        from gobblin_py.sdk.joda import to_strftime, version_pattern_problem

        problems = []
        pattern = props.get("compaction.folder.pattern") or props.get("compaction.timebased.folder.pattern")
        if pattern:
            try:
                to_strftime(pattern)
                problem = version_pattern_problem(pattern)
            except ValueError as exc:
                problem = str(exc)
            problems += [ConfigError(problem, key="compaction.folder.pattern")] if problem else []
        if not problems and not CompactionSettings.problems(props):  # the keys' own problems are reported apart
            try:  # a clock that cannot answer stops the run before any work
                CompletenessGate.open(CompactionSettings.load(props))
            except ConfigError as exc:
                problems.append(problem_at(props, exc.key or "", exc.problem, exc.hint))
        return problems

    def get_workunits(self, state: SourceState) -> list[WorkUnit]:
        settings = CompactionSettings.load(state)
        init_ms = int(time.time() * 1000)
        gate = CompletenessGate.open(settings)
        finder = DatasetFinder(settings, init_ms)
        datasets = finder.find()
        units = []
        for dataset in datasets:
            action = plan_dataset(finder.fs, dataset, settings, init_ms)
            if action is None or (gate is not None and not gate.admits(action)):
                continue
            units.append(self._unit(action, init_ms))
            log.info("compaction_planned", dataset=dataset.urn, mode=action.mode, files=len(action.files),
                     reason=action.reason)
        if gate is not None:
            gate.report()
        if not units:
            reason = f"{len(datasets)} datasets found, none with anything to compact"
            if gate is not None and gate.skipped:
                reason = (f"{len(datasets)} datasets found: {len(gate.skipped)} not complete yet, skipped "
                          f"({', '.join(gate.skipped)}); none other with anything to compact")
            self._empty = EmptyPlan(reason, nothing_found=not datasets)
        return units

    @staticmethod
    def _unit(action: Action, init_ms: int) -> WorkUnit:
        dataset = action.dataset
        unit = WorkUnit.create(Extract.create("SNAPSHOT_ONLY", "gobblin.compaction", dataset.name or "dataset"))
        unit.set_prop("dataset.urn", dataset.urn)
        unit.set_prop(MODE_KEY, action.mode)
        unit.set_prop(FILES_KEY, encode_files(action.files))
        unit.set_prop(DEST_KEY, dataset.dest)
        unit.set_prop(NEW_KEY, beside(dataset.dest, "new"))
        unit.set_prop(OLD_KEY, beside(dataset.dest, "old"))
        unit.set_prop(MARKER_KEY, str(action.marker_ms))
        unit.set_prop(INIT_KEY, str(init_ms))
        if action.late_target:
            unit.set_prop(LATE_TARGET_KEY, action.late_target)
        if action.consume:
            unit.set_prop(CONSUME_KEY, action.consume)
        if action.mark_complete:
            unit.set_prop(MARK_COMPLETE_KEY, json.dumps(action.mark_complete, separators=(",", ":")))
        if action.files and action.mode == COMPACT:
            unit.set_prop(FORMAT_KEY, format_of(action.files))
        return unit

    def explain_empty_plan(self) -> EmptyPlan | None:
        return self._empty

    def get_extractor(self, state: WorkUnitState) -> Extractor:
        return CompactionExtractor(state)

    def runs_on_cluster(self, unit: WorkUnitState) -> bool:
        """On the Spark engines a compaction that deduplicates is a Spark job with a shuffle of its own
        (:mod:`.cluster`), unless the job converts, forks or checks its records (the task pipeline does that) or
        Polars, the shuffle's key hash, is not installed."""
        if unit.get_prop(MODE_KEY) != COMPACT or not CompactionSettings.load(unit).deduplicate:
            return False
        pipeline = [k for k in PIPELINE_KEYS if unit.get_prop(k)]
        if pipeline or not has_polars():
            log.info("compaction_without_shuffle", dataset=unit.get_prop("dataset.urn"),
                     reason=f"the job sets {', '.join(pipeline)}" if pipeline else
                     "Polars is not installed (gobblin_py[compaction])",
                     note="the dataset is deduplicated by one executor")
            return False
        return True

    def run_on_cluster(self, session: Any, task: TaskState) -> None:
        """Deduplicate the dataset with one Spark job (:func:`.cluster.compact_on_cluster`)."""
        extractor = CompactionExtractor(task)
        schema = extractor.get_schema()
        spec = extractor.dedup_spec(schema)
        urn = task.get_prop("dataset.urn") or ""
        read, records, size, paths = compact_on_cluster(
            session, extractor.files, extractor.format, schema, spec, task.get_prop(NEW_KEY) or "",
            task.get_prop(INIT_KEY) or "0", extractor.settings.partition_bytes, task.all_properties(), urn)
        log.info("compaction_deduplicated", dataset=urn, records_read=read, records_kept=records,
                 duplicates=read - records, key=",".join(spec.keys), files_written=len(paths))
        task.set_prop(CLUSTER_TASK_COUNTERS[0], records)  # as the task pipeline counts: what the dedup kept
        task.set_prop(CLUSTER_TASK_COUNTERS[1], records)
        task.set_prop(CLUSTER_TASK_COUNTERS[2], size)
        task.set_prop(CLUSTER_TASK_COUNTERS[3], ",".join(paths))


class CompactionExtractor(Extractor):
    """A dataset's records, deduplicated when the job says so; nothing for a dataset whose late files are only
    set aside (the publisher copies them)."""

    def __init__(self, state: WorkUnitState) -> None:
        self.state = state
        self.settings = CompactionSettings.load(state)
        self.files = decode_files(state.get_prop(FILES_KEY)) if state.get_prop(MODE_KEY) == COMPACT else []
        self.format = state.get_prop(FORMAT_KEY) or "avro"
        self.fs = fsutil.open_fs(self.files[0].path)[0] if self.files else None
        self._schema: pa.Schema | None = None

    def get_schema(self) -> pa.Schema:
        if self._schema is None:
            self._schema = dataset_schema(self.fs, self.files, self.format) if self.files else pa.schema([])
        return self._schema

    def dedup_spec(self, schema: pa.Schema) -> DedupSpec:
        """How the dataset is deduplicated (its key's fields, its latest-fields), checked against ``schema``."""
        key_schema = None
        if self.settings.key_mode == "CUSTOM" and self.settings.key_schema:
            key_fs, key_path = fsutil.open_fs(self.settings.key_schema)
            key_schema = key_fs.cat_file(key_path).decode()
        return checked_spec(schema, self.settings.key_mode, self.settings.key_fields, key_schema,
                            self.settings.latest_fields)

    def read_batches(self) -> Iterator[pa.RecordBatch]:
        if not self.files:
            return
        schema = self.get_schema()

        def batches() -> Iterator[pa.RecordBatch]:
            return read_files(self.fs, self.files, self.format, schema)

        if not self.settings.deduplicate:
            yield from batches()
            return
        spec = self.dedup_spec(schema)
        staging = self.state.get_prop("writer.staging.dir") or ""
        # spill files are local: the task's staging folder when it is on local disk, else the machine's temp
        spill = os.path.join(staging if staging and fsutil.is_local_url(staging) else tempfile.gettempdir(),
                             "compaction-spill", uuid.uuid4().hex)
        read = kept = 0

        def counted() -> Iterator[pa.RecordBatch]:
            nonlocal read
            for batch in batches():
                read += batch.num_rows
                yield batch

        # the deduplication runs a batch ahead on a thread of its own, so selecting the next records (and, for a
        # spilled dataset, the next partition's keys) overlaps the writer encoding the last ones
        deduplicated = dedup_dataset(counted, schema, spec, sum(f.size for f in self.files),
                                     self.settings.partition_bytes, spill)
        for batch in prefetched(deduplicated, depth=4, name="gpy-compaction-dedup"):
            kept += batch.num_rows
            yield batch
        log.info("compaction_deduplicated", dataset=self.state.get_prop("dataset.urn"), records_read=read,
                 records_kept=kept, duplicates=read - kept, key=",".join(spec.keys))

    def get_expected_record_count(self) -> int:
        return -1
