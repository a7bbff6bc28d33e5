"""The readers under fuzz, each as a target of tests/fuzz/engine.py, with seeds from real files.

The contract: on any input a reader returns a value or raises the project's clear error (``CorruptFileError`` or
``UsageError``, exit 2) naming the file — never another exception, never a hang. A reader that returns a value
must return one its callers can use: the run-history target renders what it read as ``gpy history`` does, the
Kafka one checks that every message is either a row or a bad message with a reason.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa

from gobblin_py.sdk.errors import CorruptFileError, UsageError
from gobblin_py.sdk.run_states import DatasetState, JobState, SourceState
from gobblin_py.sdk.states import Extract, MultiWorkUnit, RunningState, State, TaskState, WorkUnit, WorkUnitState
from gobblin_py.store.sequencefile import TEXT_CLASS, Compression, SequenceFileWriter
from gobblin_py.store.state_files import encode_dataset_state_file, read_state_file
from gobblin_py.store.writable import DATASET_STATE_CLASS, class_name_of, deserialize, serialize
from tests.fuzz.engine import Target

REPO = Path(__file__).resolve().parents[2]
CLEAR = (CorruptFileError, UsageError)


def _names(*names: str) -> Callable[[bytes, BaseException], str | None]:
    """A check that an error names one of ``names`` (the file read)."""
    def check(data: bytes, exc: BaseException) -> str | None:
        return None if any(name in str(exc) for name in names) else f"names none of {names}: {exc}"
    return check


# -- the state store: SequenceFile container and Writable values ------------------------------------------------

def _sample_states() -> list[State]:
    unit = WorkUnit({"source.entity": "orders", "workunit.low.water.mark": "7"}, Extract({"extract.table.name": "o"}))
    task = TaskState("job_J_1", "task_J_1_0", unit, {"actualHighWatermark": "{\"value\": \"9\"}"}, 1, 2, 3)
    task.working_state = RunningState.COMMITTED
    dataset = DatasetState("J", "job_J_1", "orders", properties={"k": "v", "é": "ü"}, state=RunningState.COMMITTED,
                           start_time=1, end_time=5, duration=4, task_count=1, task_states=[task],
                           previous_workunit_states=[WorkUnitState(unit, {"p": "q"})])
    job = JobState("J", "job_J_2", properties={"a": "b"}, task_states=[task])
    return [State({"a": "1"}), unit.extract, unit, MultiWorkUnit([unit], {"m": "1"}), WorkUnitState(unit, {"x": "y"}),
            task, SourceState({"s": "1"}, [WorkUnitState(unit)]), job, dataset]


STATE_CLASSES = sorted({class_name_of(state) for state in _sample_states()})


def _state_file_seeds() -> list[bytes]:
    dataset = _sample_states()[-1]
    seeds = [(REPO / "tests" / "data" / "gobblin" / "TestJob-current.jst").read_bytes(),
             encode_dataset_state_file("orders", dataset)]
    for compression in (Compression.NONE, Compression.RECORD):
        buffer = io.BytesIO()
        with SequenceFileWriter(buffer, TEXT_CLASS, DATASET_STATE_CLASS, compression) as writer:
            writer.append_text("orders", serialize(dataset))
            writer.append_text("", serialize(DatasetState("J", "job_J_3")))
        seeds.append(buffer.getvalue())
    return seeds


def _read_state_file(data: bytes) -> object:
    return read_state_file(data, "fuzz.jst")


def _writable_seeds() -> list[bytes]:
    return [bytes([STATE_CLASSES.index(class_name_of(state))]) + serialize(state) for state in _sample_states()]


def _read_writable(data: bytes) -> object:
    if not data:
        return None
    return deserialize(STATE_CLASSES[data[0] % len(STATE_CLASSES)], data[1:], "fuzz value")


# -- job files: Java properties and HOCON ------------------------------------------------------------------------

def _job_file_seeds(*patterns: str) -> list[bytes]:
    return [path.read_bytes() for pattern in patterns for path in sorted(REPO.glob(pattern)) if path.is_file()]


PROPERTIES_TOKENS = [b"\n", b"\\\n", b"=", b":", b" ", b"\\u00e9", b"\\u", b"\\", b"#", b"!", b",", b"\\,",
                     b"${", b"}", b"${a}", b"${env:HOME}", b"${sys:x}", b"a=${b}\nb=${a}\n", b"include=",
                     b"include=inc.properties\n", b"include=fuzz.pull\n", b"\r\n", b"\r", b"\t", b"\f",
                     b"job.name=", b"\xc3\xa9", b"\xff", b"\x00"]


def _properties_target(folder: Path) -> Target:
    from gobblin_py.jobconf.properties.reader import checked_text, parse_properties

    path = folder / "fuzz.pull"
    (folder / "inc.properties").write_text("included=yes\nother=${included}\n")

    def run(data: bytes) -> object:
        properties = parse_properties(checked_text(data, str(path)), path=str(path), env={}, cwd=str(folder))
        return properties.to_dict()

    seeds = _job_file_seeds("jobs/*.pull", "tests/data/gobblin/*.pull", "conf/*.properties")
    return Target("properties", run, seeds, CLEAR, PROPERTIES_TOKENS, _names("fuzz.pull", "inc.properties"))


HOCON_TOKENS = [b"{", b"}", b"[", b"]", b":", b"=", b"+=", b",", b"\n", b"\"", b"\"\"\"", b"${", b"${?", b"}",
                b"${a}", b"${a.b}", b"a=${a}", b"a.b.c", b"include ", b"include \"inc.conf\"\n",
                b"include required(file(\"inc.conf\"))\n", b"include file(\"fuzz.conf\")\n", b"url(", b"classpath(",
                b"//", b"#", b"\\u", b"\\", b"null", b"true", b"1.5e300", b"-", b".", b"${env}", b"$", b"\t",
                b"\xc3\xa9", b"\xff", b"\x00", b"a." * 120, b"{" * 120, b"[" * 120]


def _hocon_target(folder: Path) -> Target:
    from gobblin_py.jobconf.convert import config_to_properties
    from gobblin_py.jobconf.hocon import parse_hocon
    from gobblin_py.jobconf.properties.reader import checked_text

    path = folder / "fuzz.conf"
    (folder / "inc.conf").write_text("included { yes = true, n = ${?a} }\n")

    def run(data: bytes) -> object:
        # as a job file is loaded: parsed, its substitutions resolved, flattened to properties
        return config_to_properties(parse_hocon(checked_text(data, str(path)), path=str(path), cwd=str(folder)), env={})

    seeds = _job_file_seeds("tests/data/typesafe/equiv*/*", "jobs/**/*.conf")
    strings = json.loads((REPO / "tests" / "data" / "typesafe" / "parse_strings.json").read_text())
    seeds += [text.encode() for text in _strings_of(strings)][:200]
    return Target("hocon", run, seeds, CLEAR, HOCON_TOKENS, _names("fuzz.conf", "inc.conf"))


def _strings_of(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings_of(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings_of(item)]
    return []


# -- the commit log and the run history --------------------------------------------------------------------------

JSON_TOKENS = [b"{", b"}", b"[", b"]", b":", b",", b"\"", b"null", b"true", b"1e999", b"-1", b"0", b"\"\"",
               b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
               b"[" * 5_000, b"{\"a\":" * 2_000, b"\\u0000", b"\\ud800", b"\xff", b"\"steps\":",
               b"\"kind\":\"fs_rename\"", b"\"kind\":\"dataset_state\"", b"\"state\":\"00\"", b"\"class\":",
               b"\"batch\":", b"\"datasets\":", b"\"run_id\":", b"\"seconds\":", b"\"status\":\"RUNNING\"",
               b"\"pid\":", b"\"startpoints\":", b"\"task_attempts\":", b"\"watermark_from\":", b"{}", b"[]"]


def commit_log_seeds() -> list[bytes]:
    state = serialize(_sample_states()[-1]).hex()
    one = {"version": 1, "job_name": "J", "urn": "orders", "job_id": "job_J_1", "steps": [
        {"kind": "fs_rename", "src": "/tmp/a/staging/part.avro", "dst": "/tmp/a/out/part.avro",
         "src_fs_uri": None, "dst_fs_uri": None},
        {"kind": "dataset_state", "urn": "orders", "state": state}]}
    return [json.dumps(one).encode(), json.dumps({"version": 1, "batch": [one, {**one, "urn": ""}]}).encode()]


def _commit_log_target(folder: Path) -> Target:
    from gobblin_py.io.rename_step import FsRenameStep
    from gobblin_py.runtime.commit.commit_sequence import read_sequences
    from gobblin_py.store import FsDatasetStateStore

    store = FsDatasetStateStore(str(folder / "state"))

    def run(data: bytes) -> object:
        # the same bytes as a dataset's own file and as a batch file
        single = read_sequences(data, False, store, "fuzz-commit.json", {})
        batch = read_sequences(data, True, store, "fuzz-batch.json", {})
        for sequence in single + batch:  # what replaying it will use is of the kind it must be
            texts = [sequence.job_name, sequence.urn, sequence.job_id]
            for step in sequence.steps:
                texts += [step.src, step.dst] if isinstance(step, FsRenameStep) else [step.urn]  # type: ignore[attr-defined]
                uris = [step.src_fs_uri, step.dst_fs_uri] if isinstance(step, FsRenameStep) else []
                texts += [uri for uri in uris if uri is not None]
            if not all(isinstance(text, str) for text in texts):
                raise AssertionError(f"a commit sequence read with values that are not text: {texts}")
        return single, batch

    return Target("commit_log", run, commit_log_seeds(), CLEAR, JSON_TOKENS,
                  _names("fuzz-commit.json", "fuzz-batch.json"))


def run_record_seeds() -> list[bytes]:
    attempt = {"attempt": 1, "kind": "transient", "retry_in_s": 0.5, "error": "boom"}
    dataset = {"urn": "orders", "state": "COMMITTED", "tasks": 2, "failed_tasks": 0, "records_read": 10,
               "records_written": 10, "files": 1, "bytes": 300, "seconds": 1.5, "state_saved": True,
               "branches": [{"name": "b0", "records_written": 10, "files": 1, "bytes_written": 300}],
               "watermark_from": ["1"], "watermark_to": ["9"],
               "startpoints": [{"kind": "TIMESTAMP", "value": "2026-01-01T00:00:00Z", "id": "s1", "set": "x",
                                "rows_skipped": 4}],
               "quality": ["ok"], "published": ["/out/a"], "error": None, "task_errors": [],
               "task_attempts": [{"task": "task_1", "attempts": [attempt]}]}
    record = {"format": 1, "run_id": "job_J_1", "job": "J", "status": "COMMITTED", "exit_code": 0,
              "started": "2026-01-01T00:00:00Z", "started_ms": 1, "ended": "2026-01-01T00:00:02Z", "seconds": 2.0,
              "host": "h", "pid": 1, "engine": "local", "message": "", "warnings": ["w"], "datasets": [dataset]}
    return [json.dumps(record, indent=1).encode(), json.dumps({**record, "status": "RUNNING", "datasets": []}).encode()]


def _run_history_target(folder: Path) -> Target:
    from gobblin_py.store import history_report
    from gobblin_py.store.run_history import parse_run_record

    def run(data: bytes) -> object:
        record = parse_run_record(data, "fuzz-run.json")
        rows = history_report.list_rows([record])
        json.dumps(rows)  # gpy history --json
        return history_report.render_list("J", rows, "here"), history_report.render_run(record)

    return Target("run_history", run, run_record_seeds(), CLEAR, JSON_TOKENS, _names("fuzz-run.json"))


# -- Kafka messages ----------------------------------------------------------------------------------------------

SEPARATOR = b"\xfe|\xfe"
AVRO_SCHEMA = {"type": "record", "name": "Event", "fields": [
    {"name": "id", "type": "long"}, {"name": "name", "type": ["null", "string"]},
    {"name": "tags", "type": {"type": "array", "items": "string"}},
    {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B"]}},
    {"name": "score", "type": "double"}, {"name": "raw", "type": {"type": "fixed", "name": "F", "size": 2}},
    {"name": "attrs", "type": {"type": "map", "values": "int"}}]}
JSON_SCHEMA = "id:int64,name:string,score:float64,ok:bool"
KINDS = ["BYTE_ARRAY", "STRING", "JSON", "JSON+schema", "AVRO", "CONFLUENT_AVRO"]


def kafka_value_seeds() -> list[bytes]:
    import fastavro

    def avro(row: dict) -> bytes:
        out = io.BytesIO()
        fastavro.schemaless_writer(out, fastavro.parse_schema(AVRO_SCHEMA), row)
        return out.getvalue()

    rows = [{"id": 1, "name": "a", "tags": ["x", "y"], "kind": "A", "score": 1.5, "raw": b"ab", "attrs": {"k": 1}},
            {"id": -7, "name": None, "tags": [], "kind": "B", "score": -0.0, "raw": b"\x00\xff", "attrs": {}}]
    json_values = [b'{"id": 1, "name": "a", "score": 2.5, "ok": true}', b'{"id": 2, "name": null, "extra": [1]}',
                   b'{"id": 3}']
    seeds = []
    for index, kind in enumerate(KINDS):
        if kind.endswith("AVRO"):
            values = [avro(row) for row in rows]
            if kind == "CONFLUENT_AVRO":
                values = [b"\x00\x00\x00\x00\x07" + value for value in values]
        elif kind.startswith("JSON"):
            values = json_values
        else:
            values = [b"hello", "é".encode(), b""]
        seeds.append(bytes([index]) + SEPARATOR.join(values))
    return seeds + [bytes([KINDS.index(kind)]) + b"\x00null" + SEPARATOR + b"\x00null" for kind in KINDS]  # tombstones


def _kafka_values_target(folder: Path) -> Target:
    from gobblin_py.connectors.kafka.deserializers import deserializer_for

    decoders = [deserializer_for(kind.split("+")[0], JSON_SCHEMA if kind == "JSON+schema" else
                                 json.dumps(AVRO_SCHEMA) if kind.endswith("AVRO") else None) for kind in KINDS]

    def run(data: bytes) -> object:
        if not data:
            return None
        values = data[1:].split(SEPARATOR)
        decoder = decoders[data[0] % len(decoders)]
        array = pa.array([None if value == b"\x00null" else value for value in values], pa.binary())
        if decoder.schema is None:  # JSON without source.schema: as the source does, infer, then decode
            inferred, _ = decoder.infer(array)
            decoder = decoder.with_schema(inferred if inferred is not None else pa.schema([]))
        batch, bad = decoder.decode(array)
        if decoder.schema is not None and batch.schema != decoder.schema:
            raise AssertionError(f"rows of schema {batch.schema}, not {decoder.schema}")
        indices = [index for index, _ in bad]
        if sorted(set(indices)) != indices or batch.num_rows + len(bad) != len(values):
            raise AssertionError(f"{batch.num_rows} rows and bad {indices} for {len(values)} messages")
        if any(not isinstance(why, str) or not why for _, why in bad):
            raise AssertionError(f"a bad message without a reason: {bad}")
        return batch

    return Target("kafka_values", run, kafka_value_seeds(), (), [SEPARATOR, b"\x00null", b"{", b"}", b"\"",
                  b":", b"null", b"[", b"]", b"\x00\x00\x00\x00\x07", b"\x02", b"\x01", b"\x80\x80\x80\x80\x10"])


def _kafka_schema_target(folder: Path) -> Target:
    from gobblin_py.connectors.kafka.deserializers import deserializer_for, parse_schema_text

    def run(data: bytes) -> object:
        text = data.decode("utf-8", errors="replace")
        if text.startswith("!"):  # an Avro schema for an AVRO deserializer
            return deserializer_for("AVRO", text[1:])
        return parse_schema_text(text)

    seeds = [JSON_SCHEMA.encode(), b"id:decimal(10, 2),t:timestamp[ms, UTC],l:list<int32>",
             json.dumps([{"columnName": "id", "dataType": {"type": "long"}, "isNullable": False}]).encode(),
             json.dumps(AVRO_SCHEMA).encode(), b"!" + json.dumps(AVRO_SCHEMA).encode()]
    tokens = [b",", b":", b"(", b")", b"[", b"]", b"<", b">", b"{", b"}", b"\"", b"int64", b"string", b"decimal",
              b"timestamp", b"struct<", b"list<", b"\"type\":", b"\"columnName\":", b"\"dataType\":", b"null",
              b"\"fields\":", b"\"record\"", b"\"name\":", b"\"logicalType\":"]
    return Target("kafka_schema", run, seeds, (UsageError,), tokens, _names("source.schema"))


def all_targets(folder: Path) -> list[Target]:
    """Every target, with ``folder`` (empty, writable) for the files some of them include or write."""
    return [
        Target("state_file", _read_state_file, _state_file_seeds(), CLEAR, [b"SEQ\x06", b"\xff\xff\xff\xff"] +
               [bytes([n]) for n in range(0x80, 0x90)], _names("fuzz.jst")),
        Target("writable", _read_writable, _writable_seeds(), CLEAR, [bytes([n]) for n in range(0x80, 0x90)],
               _names("fuzz value")),
        _properties_target(folder),
        _hocon_target(folder),
        _commit_log_target(folder),
        _run_history_target(folder),
        _kafka_values_target(folder),
        _kafka_schema_target(folder),
    ]
