"""Plugins the SQL tests name in their job files (by dotted path, like any user's plugin)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from typing import Any

import pyarrow as pa

from gobblin_py.sdk.contracts import Converter
from gobblin_py.sdk.watermarks import Watermark


def _once(state, name: str) -> bool:
    """True the first time any task of the run gets here (a marker file in ``test.once.dir``)."""
    marker = os.path.join(state.get_prop("test.once.dir"), name)
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return False
    os.close(fd)
    return True


class InsertRowsDuringRun(Converter):
    """While the first batch of the run passes, writes to the source database as a live application would.

    ``test.insert.sql``: statements separated by ``;``; ``test.insert.sqlite`` (a file) or ``test.insert.pg``
    (a libpq conninfo) or ``test.insert.mysql`` (PyMySQL's
    connect arguments as JSON) says where.
    """

    def init(self, state) -> None:
        self.state = state

    def convert_schema(self, schema: pa.Schema, state) -> pa.Schema:
        return schema

    def convert_batch(self, batch: pa.RecordBatch, state) -> pa.RecordBatch:
        if _once(self.state, "inserted"):
            statements = [s for s in self.state.get_prop("test.insert.sql").split(";") if s.strip()]
            if self.state.get_prop("test.insert.sqlite"):
                conn = sqlite3.connect(self.state.get_prop("test.insert.sqlite"), timeout=30)
                with conn:
                    for statement in statements:
                        conn.execute(statement)
                conn.close()
            elif self.state.get_prop("test.insert.mysql"):
                import json

                import pymysql

                conn = pymysql.connect(autocommit=True, **json.loads(self.state.get_prop("test.insert.mysql")))
                with conn.cursor() as cur:
                    for statement in statements:
                        cur.execute(statement)
                conn.close()
            else:
                import psycopg

                with psycopg.connect(self.state.get_prop("test.insert.pg"), autocommit=True) as conn:
                    for statement in statements:
                        conn.execute(statement)
        return batch


class StopServerAfterFirstBatch(Converter):
    """Kills the database server (``test.stop.command``) once the first batch has been read."""

    def init(self, state) -> None:
        self.state = state

    def convert_schema(self, schema: pa.Schema, state) -> pa.Schema:
        return schema

    def convert_batch(self, batch: pa.RecordBatch, state) -> pa.RecordBatch:
        if _once(self.state, "stopped"):
            subprocess.run(self.state.get_prop("test.stop.command"), shell=True, check=True, capture_output=True)
        return batch


class HexWatermark(Watermark):
    """A custom watermark type: a position written as hexadecimal text, ``{"hex":"0x1f"}``."""

    def __init__(self, value: int) -> None:
        self.value = value

    def to_json(self) -> Any:
        return {"hex": hex(self.value)}

    @classmethod
    def from_json(cls, data: Any) -> "HexWatermark":
        if not isinstance(data, dict) or not isinstance(data.get("hex"), str):
            raise ValueError(f"not a HexWatermark: {data!r}")
        return cls(int(data["hex"], 16))

    @classmethod
    def from_long(cls, value: int) -> "HexWatermark":
        return cls(value)

    def to_long(self) -> int:
        return self.value


class FailOnNote(Converter):
    """Fails the task at the batch holding a row whose ``note`` is ``test.fail.note`` (after earlier batches)."""

    def init(self, state) -> None:
        self.value = state.get_prop("test.fail.note", "CORRUPT")

    def convert_schema(self, schema: pa.Schema, state) -> pa.Schema:
        return schema

    def convert_batch(self, batch: pa.RecordBatch, state) -> pa.RecordBatch:
        if "note" in batch.schema.names and self.value in batch.column("note").to_pylist():
            raise RuntimeError(f"row with note {self.value} cannot be loaded")
        return batch
