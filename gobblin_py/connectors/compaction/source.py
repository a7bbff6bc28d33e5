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

import pyarrow as pa

from gobblin_py.connectors.compaction.completeness import CompletenessGate
from gobblin_py.connectors.compaction.dedup import checked_spec, dedup_dataset
from gobblin_py.connectors.compaction.finder import DatasetFinder, InputFile
from gobblin_py.connectors.compaction.inputs import dataset_schema, format_of, read_files
from gobblin_py.connectors.compaction.plan import COMPACT, Action, plan_dataset
from gobblin_py.connectors.compaction.settings import CompactionSettings
from gobblin_py.io import fs as fsutil
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.contracts import EmptyPlan, Extractor, Source
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.run_states import SourceState
from gobblin_py.sdk.settings import problem_at
from gobblin_py.sdk.states import Extract, WorkUnit, WorkUnitState

log = get_logger(__name__)

PREFIX = "gpy.compaction."
MODE_KEY, FILES_KEY, FORMAT_KEY = PREFIX + "mode", PREFIX + "files", PREFIX + "format"
DEST_KEY, NEW_KEY, OLD_KEY = PREFIX + "dest", PREFIX + "new", PREFIX + "old"
MARKER_KEY, LATE_TARGET_KEY, CONSUME_KEY = PREFIX + "marker.ms", PREFIX + "late.target", PREFIX + "consume"
MARK_COMPLETE_KEY = PREFIX + "mark.complete"
INIT_KEY = "compaction.init.time"
WRITER = "gobblin_py.connectors.compaction.writer.CompactionWriterBuilder"
PUBLISHER = "gobblin_py.connectors.compaction.publisher.CompactionPublisher"


def beside(dest: str, what: str) -> str:
    """A hidden folder next to ``dest`` (``.<name>.gpy-<what>``): where the new output is built and the old one
    waits while they are swapped. Its name is fixed, so a run that crashed leaves nothing the next cannot find."""
    parent, name = posixpath.split(dest.rstrip("/"))
    return posixpath.join(parent, f".{name}.gpy-{what}")


def encode_files(files: list[InputFile]) -> str:
    return json.dumps([[f.path, f.size, f.mtime_ms] for f in files], separators=(",", ":"))


def decode_files(text: str | None) -> list[InputFile]:
    return [InputFile(p, int(s), int(m)) for p, s, m in json.loads(text or "[]")]


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

    def read_batches(self) -> Iterator[pa.RecordBatch]:
        if not self.files:
            return
        schema = self.get_schema()

        def batches() -> Iterator[pa.RecordBatch]:
            return read_files(self.fs, self.files, self.format, schema)

        if not self.settings.deduplicate:
            yield from batches()
            return
        key_schema = None
        if self.settings.key_mode == "CUSTOM" and self.settings.key_schema:
            key_fs, key_path = fsutil.open_fs(self.settings.key_schema)
            key_schema = key_fs.cat_file(key_path).decode()
        spec = checked_spec(schema, self.settings.key_mode, self.settings.key_fields, key_schema,
                            self.settings.latest_fields)
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

        for batch in dedup_dataset(counted, schema, spec, sum(f.size for f in self.files),
                                   self.settings.partition_bytes, spill):
            kept += batch.num_rows
            yield batch
        log.info("compaction_deduplicated", dataset=self.state.get_prop("dataset.urn"), records_read=read,
                 records_kept=kept, duplicates=read - kept, key=",".join(spec.keys))

    def get_expected_record_count(self) -> int:
        return -1
