"""Plugins used by the tests, referenced from job files by dotted path like any user's plugin."""

from __future__ import annotations

import os

import pyarrow as pa

from gobblin_py.api import Converter


class UpperCaseNames:
    """A Gobblin-style per-record converter: one dict in, one dict out."""

    def convert_record(self, schema, record):
        record = dict(record)
        record["currency"] = (record.get("currency") or "").lower()
        return [record]


class DuplicateAndTag:
    """Per-record, with a schema and the state argument: emits each record twice with a tag."""

    def convert_schema(self, schema, state):
        return schema.append(pa.field("copy", pa.int8()))

    def convert_record(self, schema, record, state):
        return [{**record, "copy": 0}, {**record, "copy": 1}]


class FailOnMarker(Converter):
    """Fails any batch holding the value of ``test.fail.marker`` in column ``note``."""

    def init(self, state):
        self.marker = state.get_prop("test.fail.marker", "FAIL")

    def convert_schema(self, schema, state):
        return schema

    def convert_batch(self, batch, state):
        if "note" in batch.schema.names and self.marker in batch.column("note").to_pylist():
            raise RuntimeError(f"marker {self.marker} found")
        return batch


class FailFirstAttempt(Converter):
    """Fails the first attempt of each task (counted through files in ``test.attempts.dir``), then passes."""

    def init(self, state):
        directory = state.get_prop("test.attempts.dir")
        marker = os.path.join(directory, state.get_prop("task.id"))
        self.first = not os.path.exists(marker)
        open(marker, "a").close()

    def convert_schema(self, schema, state):
        return schema

    def convert_batch(self, batch, state):
        if self.first:
            raise RuntimeError("first attempt fails on purpose")
        return batch
