"""Gobblin's ``ConsoleWriterBuilder``: every record to standard output, one line each, nothing staged or published.

A batch of one binary or string column prints each value as it is (bytes as they are, where Gobblin prints a
Java array's ``[B@…`` name); a batch of several columns prints each row as a JSON object (the JSON-lines
writer's rendering), or as its record style says (``gobblin.record.style``: ``TestRecord(partition=0, …)``). Lines are built for a whole batch with Arrow kernels and written at once. Output goes to
the standard output of the process running the task (an executor's, on a Spark cluster). Pair it with
``data.publisher.type=…NoopPublisher``: there is nothing to publish.
"""

from __future__ import annotations

import sys
import threading

import pyarrow as pa

from gobblin_py.connectors.files.simple import data_bytes, framed
from gobblin_py.formats.jsonl import json_lines
from gobblin_py.formats.text import render_rows
from gobblin_py.sdk.contracts import CountingDataWriter, DataWriter, DataWriterBuilder
from gobblin_py.sdk.schema_meta import RECORD_STYLE, get_meta
from gobblin_py.sdk.states import WorkUnitState

_LOCK = threading.Lock()  # tasks of the local engine share the process's standard output


def console_bytes(batch: pa.RecordBatch) -> pa.Buffer | None:
    """The lines that print ``batch``: values of a lone binary/string column, JSON objects otherwise."""
    if batch.num_columns == 1:
        kind = batch.schema.field(0).type
        if pa.types.is_binary(kind) or pa.types.is_large_binary(kind) or pa.types.is_string(kind) \
                or pa.types.is_large_string(kind):
            return data_bytes(framed(batch.column(0).fill_null(b"null" if pa.types.is_binary(kind) else "null"),
                                     b"\n", False))
    style = get_meta(batch.schema, RECORD_STYLE)
    if style:  # records that print as Java prints them (SequentialTestSource's TestRecord(partition=0, …))
        return data_bytes(framed(render_rows(batch, style), b"\n", False))
    return data_bytes(json_lines(batch).cast(pa.large_binary()))


class ConsoleWriter(CountingDataWriter):
    """Prints records as they come; commit flushes standard output."""

    def write(self, batch: pa.RecordBatch) -> None:
        data = console_bytes(batch)
        if data is not None:
            with _LOCK:
                out = sys.stdout
                if hasattr(out, "buffer"):
                    out.flush()
                    out.buffer.write(data)
                else:  # a text-only stream (a test runner's capture)
                    out.write(data.to_pybytes().decode("utf-8", "replace"))
        self._records += batch.num_rows

    def commit(self) -> list[str]:
        sys.stdout.flush()
        return []

    def cleanup(self) -> None:
        pass


class ConsoleWriterBuilder(DataWriterBuilder):
    """Builds a :class:`ConsoleWriter` (no keys)."""

    def build(self, state: WorkUnitState, schema: pa.Schema, branches: int, branch: int, writer_id: str) -> DataWriter:
        return ConsoleWriter()
