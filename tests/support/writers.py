"""A batch of every interesting type, task states and writers under a folder, for the writer tests."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pyarrow as pa

from gobblin_py.connectors.files.builder import FsDataWriterBuilder
from gobblin_py.sdk.states import State, WorkUnit, WorkUnitState

UTC = dt.timezone.utc


SCHEMA = pa.schema([
    pa.field("id", pa.int64(), nullable=False),
    ("i8", pa.int8()),
    ("i32", pa.int32()),
    ("i64", pa.int64()),
    ("f32", pa.float32()),
    ("f64", pa.float64()),
    ("dec", pa.decimal128(18, 4)),
    ("s", pa.string()),
    ("flag", pa.bool_()),
    ("ts_utc", pa.timestamp("us", "UTC")),
    ("ts_ny", pa.timestamp("ms", "America/New_York")),
    ("ts_naive", pa.timestamp("us")),
    ("d", pa.date32()),
    ("bin", pa.binary()),
])


ROWS = [
    dict(id=1, i8=-128, i32=2147483647, i64=-9223372036854775808, f32=1.5, f64=0.1, dec=Decimal("12345678901234.5678"),
         s="plain", flag=True, ts_utc=dt.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=UTC),
         ts_ny=dt.datetime(2024, 7, 1, 23, 30, 0, 250000, tzinfo=UTC), ts_naive=dt.datetime(2024, 1, 2, 3, 4, 5, 654321),
         d=dt.date(2024, 1, 2), bin=b"\x00\x01\xfe\xff"),
    dict(id=2, i8=127, i32=-1, i64=9223372036854775807, f32=-0.25, f64=-1e300, dec=Decimal("-0.0001"),
         s="héllo, \"wörld\"\nnew line\ttab 日本語 🙂", flag=False,
         ts_utc=dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
         ts_ny=dt.datetime(2024, 3, 10, 7, 0, 0, tzinfo=UTC), ts_naive=dt.datetime(1900, 1, 1, 0, 0, 0),
         d=dt.date(1969, 12, 31), bin=b""),
    dict(id=3, i8=None, i32=None, i64=None, f32=None, f64=None, dec=None, s=None, flag=None, ts_utc=None, ts_ny=None,
         ts_naive=None, d=None, bin=None),
    dict(id=4, i8=0, i32=0, i64=0, f32=0.0, f64=123456.789, dec=Decimal("0.0000"), s="", flag=True,
         ts_utc=dt.datetime(2038, 1, 19, 3, 14, 8, tzinfo=UTC), ts_ny=dt.datetime(2000, 1, 1, tzinfo=UTC),
         ts_naive=dt.datetime(2262, 4, 11, 23, 47, 16, 854775), d=dt.date(9999, 12, 31), bin=b"\x80" * 40),
]


def all_types_batch() -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist(ROWS, schema=SCHEMA)


def task_state(tmp_path: Path | str, **props: str) -> WorkUnitState:
    """A task's state writing under ``tmp_path`` (staging, output, final) with file path ``out``."""
    base = {
        "writer.staging.dir": f"{tmp_path}/staging",
        "writer.output.dir": f"{tmp_path}/output",
        "writer.file.path": "out",
        "data.publisher.final.dir": f"{tmp_path}/final",
        "extract.table.name": "AllTypes",
    }
    base.update({k.replace("__", "."): v for k, v in props.items()})
    return WorkUnitState(WorkUnit(), job_state=State(base))


def build(state: WorkUnitState, schema: pa.Schema = SCHEMA, writer_id: str = "task_7_0", builder=None):
    return (builder or FsDataWriterBuilder()).build(state, schema, 1, 0, writer_id)


def write_all(state: WorkUnitState, *batches: pa.RecordBatch, builder=None) -> tuple[object, list[str]]:
    writer = build(state, batches[0].schema, builder=builder)
    try:
        for batch in batches:
            writer.write(batch)
        outputs = writer.commit()
    finally:
        writer.cleanup()
    return writer, outputs


def files_under(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) if root.exists() else []


def orc_safe_rows() -> list[dict]:
    """ROWS without pre-1970 fractions of a second (which the Java ORC reader rejects, see orc.py)."""
    rows = [dict(r) for r in ROWS]
    rows[1]["ts_utc"] = dt.datetime(1969, 12, 31, 23, 59, 59, tzinfo=UTC)
    return rows


def orc_safe_batch() -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist(orc_safe_rows(), schema=SCHEMA)
