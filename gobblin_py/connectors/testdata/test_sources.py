"""Gobblin's test sources: ``SequentialTestSource`` (a synthetic data generator) and ``TestSource``.

``SequentialTestSource`` makes ``source.numParallelism`` work units on a first run, each emitting
``source.numRecordsPerExtract`` records ``(partition, sequence, payload)`` with sequences ``i·N+1 … (i+1)·N``;
later runs continue each work unit from its actual high watermark (one past its last sequence), or repeat
its range when it did not commit — Gobblin's rules, useful for load tests too (set
``source.sleepTimePerRecordMillis=0``). Records are generated as whole Arrow batches.

``TestSource`` reads the Avro files of ``source.files`` (one work unit per file, tables ``TestTable1`` and
``TestTable2`` alternating) and emits each record as text, the way Gobblin's ``TestExtractor`` returns a
record's ``toString()``; ``TestConverter`` turns the text back into rows of the file's ``User`` schema.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa

from gobblin_py.formats.avro_read import read_avro
from gobblin_py.formats.text import render_rows
from gobblin_py.io import fs as fsutil
from gobblin_py.sdk.contracts import EmptyPlan, Extractor, Source
from gobblin_py.sdk.errors import GobblinPyError
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.run_states import SourceState
from gobblin_py.sdk.schema_meta import TEXT_COLUMN, text_schema, with_meta
from gobblin_py.sdk.settings import Kind, Settings, setting
from gobblin_py.sdk.states import Extract, MultiWorkUnit, WorkingState, WorkUnit, WorkUnitState
from gobblin_py.sdk.watermarks import LongWatermark, WatermarkInterval

log = get_logger(__name__)

WORK_UNIT_INDEX = "workUnitIndex"
MEMORY_FORMAT = "inMemoryFormat"
FORMATS = ("POJO", "AVRO", "PROTOBUF")
PAYLOADS = {"POJO": "I am a POJO message", "AVRO": "I am an Avro message", "PROTOBUF": "I am a Protobuf message"}
STYLES = {"POJO": "lombok:TestRecord", "AVRO": "json", "PROTOBUF": "protobuf"}
MAX_BATCH = 65536


# the Avro schema of Gobblin's generated test records (org.apache.gobblin.test.avro.TestRecord)
TEST_RECORD_SCHEMA = json.dumps({
    "type": "record", "name": "TestRecord", "namespace": "org.apache.gobblin.test.avro",
    "fields": [
        {"name": "partition", "type": "int", "doc": "Partition id for the record"},
        {"name": "sequence", "type": "long", "doc": "The sequence number"},
        {"name": "payload", "type": "string", "default": "", "doc": "Human-readable payload"},
    ],
})


@dataclass(frozen=True)
class SequentialSettings(Settings):
    """The keys of :class:`SequentialTestSource` (Gobblin's names and defaults)."""

    parallelism: int = setting("source.numParallelism", default=1, minimum=1, maximum=100000,
                               doc="work units of the first run (later runs continue each earlier one)")
    namespace: str = setting("source.namespace", default="TestDB", doc="the extract namespace")
    table: str = setting("source.table", default="TestTable", doc="the extract table")
    records: int = setting("source.numRecordsPerExtract", default=100, minimum=0, maximum=2**31 - 1,
                           doc="records per work unit and run")
    sleep_ms: int = setting("source.sleepTimePerRecordMillis", default=10, minimum=0,
                            doc="pace: milliseconds per record (slept per batch); 0 for load tests")
    mode: str = setting("task.executionMode", default="BATCH", choices=("BATCH", "STREAMING"),
                        doc="STREAMING runs as BATCH in gpy: each run emits numRecordsPerExtract records")
    memory_format: str = setting("source.inMemoryFormat", default="POJO", kind=Kind.STR,
                                 doc="POJO, AVRO or PROTOBUF (upper case, as Gobblin): the payload text and how "
                                     "records print")

    def check(self):
        from gobblin_py.sdk.config_errors import ConfigError

        problems = []
        if self.memory_format not in FORMATS:
            problems.append(ConfigError(f"{self.memory_format!r} is not POJO, AVRO or PROTOBUF",
                                        key="source.inMemoryFormat",
                                        hint="use POJO, AVRO or PROTOBUF, in upper case (Gobblin's enum names)"))
        from gobblin_py.io.branch_paths import namespace_problem
        from gobblin_py.io.contained_paths import path_problem, relative_parts

        # they become the extract's namespace and table, which name the folders its files are written to
        paths = (("source.namespace", self.namespace, namespace_problem(self.namespace)),
                 ("source.table", self.table, path_problem(self.table)
                  or (None if relative_parts(self.table, "source.table") else "names no folder")))
        return problems + [ConfigError(f"{value!r} {problem}", key=key, hint="it names a folder below the job's "
                                       "staging, output and final folders") for key, value, problem in paths if problem]


class _Extracts:
    """Extracts with ids unique per (namespace, table): one second later whenever one would repeat (Gobblin's)."""

    def __init__(self) -> None:
        self.now = int(time.time())
        self.used: set[tuple[str, str, int]] = set()

    def new(self, table_type: str, namespace: str, table: str) -> Extract:
        second = self.now
        while (namespace, table, second) in self.used:
            second += 1
        self.used.add((namespace, table, second))
        return Extract.create(table_type, namespace, table, now_ms=second * 1000)


class SequentialTestSource(Source):
    """Synthetic records ``(partition int, sequence long, payload string)`` with continuing sequences."""

    settings_class = SequentialSettings

    def get_workunits(self, state: SourceState) -> list[WorkUnit]:
        settings = SequentialSettings.load(state)
        if settings.mode == "STREAMING":
            log.warning("streaming_runs_as_batch", note="gpy runs bounded batches: each run emits "
                        "source.numRecordsPerExtract records per work unit")
        extracts, n = _Extracts(), settings.records
        previous = [w for states in state.previous_workunit_states_by_urn().values() for w in states]
        units = []
        if previous:
            for old in previous:
                if old.working_state is WorkingState.COMMITTED:
                    low = old.actual_high_watermark(LongWatermark).value
                else:
                    low = old.workunit.low_watermark(LongWatermark).value
                units.append(self._unit(extracts, settings, old.get_prop(WORK_UNIT_INDEX), low, low + n))
            return units
        return [self._unit(extracts, settings, i, i * n + 1, (i + 1) * n) for i in range(settings.parallelism)]

    @staticmethod
    def _unit(extracts: _Extracts, settings: SequentialSettings, index, low: int, high: int) -> WorkUnit:
        unit = WorkUnit.create(extracts.new("APPEND_ONLY", settings.namespace, settings.table),
                               WatermarkInterval.of(LongWatermark(low), LongWatermark(high)))
        unit.set_prop(WORK_UNIT_INDEX, index)
        unit.set_prop(MEMORY_FORMAT, settings.memory_format)
        return unit

    def get_extractor(self, state: WorkUnitState) -> Extractor:
        return SequentialExtractor(state)


class SequentialExtractor(Extractor):
    """Emits the work unit's N records from its low watermark on; the actual high watermark is one past the last."""

    def __init__(self, state: WorkUnitState) -> None:
        self.state = state
        self.settings = SequentialSettings.load(state)
        self.format = state.get_prop(MEMORY_FORMAT) or self.settings.memory_format
        self.partition = int(state.get_prop(WORK_UNIT_INDEX) or 0)
        self.low = state.workunit.low_watermark(LongWatermark).value
        self.current = self.low

    def get_schema(self) -> pa.Schema:
        schema = pa.schema([pa.field("partition", pa.int32(), False), pa.field("sequence", pa.int64(), False),
                            pa.field("payload", pa.string(), False)])
        avro = TEST_RECORD_SCHEMA if self.format == "AVRO" else None
        return with_meta(schema, avro_schema=avro, record_style=STYLES.get(self.format, "json"))

    def get_expected_record_count(self) -> int:
        return self.settings.records

    def read_batches(self) -> Iterator[pa.RecordBatch]:
        schema = self.get_schema()
        payload = PAYLOADS.get(self.format, PAYLOADS["POJO"])
        remaining = self.settings.records
        while remaining > 0:
            size = min(remaining, MAX_BATCH)
            if self.settings.sleep_ms:
                time.sleep(size * self.settings.sleep_ms / 1000)
            sequences = pa.array(range(self.current, self.current + size), pa.int64())
            yield pa.RecordBatch.from_arrays(
                [pa.array([self.partition] * size, pa.int32()), sequences, pa.array([payload] * size, pa.string())],
                schema=schema)
            self.current += size
            remaining -= size

    def close(self) -> None:
        self.state.set_actual_high_watermark(LongWatermark(self.current))


USER_SCHEMA = json.dumps({
    "namespace": "example.avro", "type": "record", "name": "User",
    "fields": [{"name": "name", "type": "string"}, {"name": "favorite_number", "type": "int"},
               {"name": "favorite_color", "type": "string"}],
})


@dataclass(frozen=True)
class TestSourceSettings(Settings):
    """The keys of :class:`TestSource`."""

    __test__ = False  # not a pytest class

    files: tuple[str, ...] = setting("source.files", required=True, doc="the Avro files to read, one work unit each")
    namespace: str | None = setting("extract.namespace", doc="namespace of both extracts")
    skip: bool = setting("workunit.skip", default=False, doc="true: every even-numbered work unit is skipped")
    multi: bool = setting("use.multiworkunit", default=False, doc="true: all work units run as one task")
    fs_uri: str = setting("fs.uri", default="file:///", doc="filesystem of the files")


class TestSource(Source):
    """One work unit per file of ``source.files``; its records as text (``TestConverter`` parses them)."""

    __test__ = False
    settings_class = TestSourceSettings

    def get_workunits(self, state: SourceState) -> list[WorkUnit]:
        settings = TestSourceSettings.load(state)
        extracts = _Extracts()
        namespace = settings.namespace or ""
        tables = [extracts.new("SNAPSHOT_ONLY", namespace, "TestTable1"),
                  extracts.new("SNAPSHOT_ONLY", namespace, "TestTable2")]
        units = []
        for i, path in enumerate(settings.files):
            unit = WorkUnit.create(tables[i % 2])
            unit.set_prop("source.file", path)
            if settings.skip and i % 2 == 0:
                unit.set_prop("workunit.skip", "true")
            units.append(unit)
        return [MultiWorkUnit(units)] if settings.multi and units else units

    def explain_empty_plan(self) -> EmptyPlan:
        """It plans nothing only when no file is listed (``source.files=,``)."""
        return EmptyPlan("source.files lists no file", nothing_found=True)

    def get_extractor(self, state: WorkUnitState) -> Extractor:
        return TestExtractor(state)


class TestExtractor(Extractor):
    """Reads ``source.file`` (Avro, with the ``User`` reader schema) and emits each record's JSON text."""

    __test__ = False

    def __init__(self, state: WorkUnitState) -> None:
        self.state = state
        self.path = state.get_prop("source.file") or ""
        self.settings = TestSourceSettings.load(state)

    def get_schema(self) -> pa.Schema:
        return text_schema(USER_SCHEMA, "json")

    def get_expected_record_count(self) -> int:
        return 1000  # what Gobblin's TestExtractor always says (its test files hold 1000 records each)

    def read_batches(self) -> Iterator[pa.RecordBatch]:
        fs, path = fsutil.open_fs(self.path, self.settings.fs_uri)
        if not fs.exists(path):
            raise GobblinPyError(f"source.file={self.path}: no such file (relative paths are read from "
                                 f"{os.getcwd()})")
        schema = self.get_schema()
        with fs.open(path, "rb") as stream:
            _, batches = read_avro(stream, self.path, USER_SCHEMA)
            for batch in batches:
                yield pa.RecordBatch.from_arrays([render_rows(batch, "json")], schema=schema)


__all__ = ["SequentialTestSource", "TestSource", "TEXT_COLUMN"]
