"""One task: extractor → converters → writer over Arrow batches, on an executor or a local thread.

The task builds its plugins from the work unit's properties (falling back to the job's), runs, commits its
writer's staged file into the task output directory when it succeeded, and returns a TaskState holding
Gobblin's counters, the working state and the actual high watermark the extractor set. A failed attempt is
retried up to ``task.maxretries`` times with fresh plugins (``task.retry.intervalinsec`` × attempt seconds
apart); staged output of a failed attempt is deleted.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Iterable, Mapping

import pyarrow as pa

from gobblin_py.api import Converter, DataWriter, DataWriterBuilder, Extractor, Source
from gobblin_py.converters.record_adapter import RecordConverterAdapter
from gobblin_py.errors import UsageError
from gobblin_py.logs import get_logger
from gobblin_py.plugins import instantiate
from gobblin_py.state import State, TaskState, WorkingState, WorkUnit

log = get_logger(__name__)

DEFAULT_WRITER_BUILDER = "gobblin_py.writers.builder.FsDataWriterBuilder"
# Gobblin's default builder writes Avro; until there is an Avro writer, its name means "the default builder"
_GOBBLIN_DEFAULT_BUILDERS = {"org.apache.gobblin.writer.AvroDataWriterBuilder", "gobblin.writer.AvroDataWriterBuilder"}


def converter_chain(state: State, key: str) -> list[Converter]:
    """The converters named by ``key`` (comma list), each ``init``-ed; per-record ones get the adapter."""
    converters: list[Converter] = []
    for name in state.get_prop_as_list(key):
        plugin = instantiate(name, key, Converter)
        converter = plugin if isinstance(plugin, Converter) else RecordConverterAdapter(plugin)
        converter.init(state)  # type: ignore[arg-type]
        converters.append(converter)
    return converters


def _apply(converters: list[Converter], batch: pa.RecordBatch, state: State) -> Iterable[pa.RecordBatch]:
    batches: Iterable[pa.RecordBatch] = (batch,)
    for converter in converters:
        produced: list[pa.RecordBatch] = []
        for item in batches:
            result = converter.convert_batch(item, state)  # type: ignore[arg-type]
            if isinstance(result, pa.RecordBatch):
                produced.append(result)
            else:
                produced.extend(result)
        batches = produced
    return batches


def _writer_builder(state: State) -> DataWriterBuilder:
    name = state.get_prop("writer.builder.class") or DEFAULT_WRITER_BUILDER
    if name in _GOBBLIN_DEFAULT_BUILDERS:
        name = DEFAULT_WRITER_BUILDER
    builder = instantiate(name, "writer.builder.class", DataWriterBuilder)
    return builder  # type: ignore[return-value]


def _attempt(task: TaskState) -> None:
    """One attempt of the task; raises on failure. Counters and watermark land on ``task``."""
    branches = task.get_prop_as_int("fork.branches", 1) or 1
    if branches != 1:
        raise UsageError(f"fork.branches={branches}: only single-branch jobs can run in this version")
    task.set_prop("fork.branches", 1)
    source: Source = instantiate(task.get_prop("source.class") or "", "source.class", Source)  # type: ignore[assignment]
    extractor: Extractor = source.get_extractor(task)
    writer: DataWriter | None = None
    converters: list[Converter] = []
    extracted = 0
    try:
        # pre-fork chain, then branch 0's chain (Gobblin applies converter.classes.0 even with one branch)
        converters = converter_chain(task, "converter.classes") + converter_chain(task, "converter.classes.0")
        schema = extractor.get_schema()
        for converter in converters:
            schema = converter.convert_schema(schema, task)  # type: ignore[arg-type]
        builder = _writer_builder(task)
        writer_id = f"{task.task_id}_0"
        for batch in extractor.read_batches():
            extracted += batch.num_rows
            for out in _apply(converters, batch, task):
                if out.num_rows == 0:
                    continue
                if writer is None:  # lazily, like Gobblin: a task with no records writes no file
                    schema = out.schema
                    writer = builder.build(task, schema, 1, 0, writer_id)
                writer.write(out if out.schema == schema else out.cast(schema))
        task.set_prop("qualitychecker.rows.extracted", extracted)
        task.set_prop("qualitychecker.rows.expected", extractor.get_expected_record_count())
    except BaseException:
        task.set_prop("qualitychecker.rows.extracted", extracted)
        if writer is not None:
            writer.cleanup()
        raise
    finally:
        try:
            extractor.close()
        finally:
            for converter in converters:
                converter.close()
    try:
        outputs = writer.commit() if writer is not None else []
    finally:
        if writer is not None:
            writer.cleanup()
    written = writer.records_written if writer is not None else 0
    task.set_prop("writer.records.written", written)
    task.set_prop("qualitychecker.rows.written", written)
    task.set_prop("writer.bytes.written", writer.bytes_written if writer is not None else 0)
    if outputs:
        task.set_prop("writer.final.output.file.paths", ",".join(outputs))
    task.set_prop("fork.state", "SUCCEEDED")


def run_task(job_props: Mapping[str, str], workunit: WorkUnit, job_id: str, task_id: str) -> TaskState:
    """Run one work unit to completion (with retries) and return its TaskState."""
    job_state = State(job_props)
    max_retries = job_state.get_prop_as_int("task.maxretries", 5) or 0
    interval = job_state.get_prop_as_float("task.retry.intervalinsec", 300.0) or 0.0
    started = int(time.time() * 1000)
    attempt = 0
    while True:
        task = TaskState(job_id, task_id, workunit, job_state=job_state, start_time=started)
        task.set_prop("job.id", job_id)
        task.set_prop("task.id", task_id)
        task.working_state = WorkingState.RUNNING
        try:
            _attempt(task)
            task.working_state = WorkingState.SUCCESSFUL
        except Exception as exc:  # noqa: BLE001 - any plugin error fails the task, not the job
            task.working_state = WorkingState.FAILED
            task.set_prop("task.failure.exception", "".join(traceback.format_exception(exc)))
            log.warning("task_failed", task=task_id, attempt=attempt, error=f"{type(exc).__name__}: {exc}")
            if attempt < max_retries and not isinstance(exc, UsageError):
                attempt += 1
                time.sleep(interval * (attempt - 1))
                continue
        task.set_prop("task.retries", attempt)
        task.end_time = int(time.time() * 1000)
        task.task_duration = task.end_time - task.start_time
        log.info("task_finished", task=task_id, state=task.working_state.value,
                 extracted=task.get_prop("qualitychecker.rows.extracted"), written=task.get_prop("writer.records.written"))
        return task
