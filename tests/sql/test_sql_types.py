"""Database types arrive as the Arrow types they are, value for value (PostgreSQL by ADBC, COPY and cursor; SQLite)."""

from __future__ import annotations

import datetime as dt
import math
import struct
from decimal import Decimal

import pyarrow as pa
import pytest

from gobblin_py.connectors.sql.source import QueryBasedSource
from gobblin_py.sdk.run_states import SourceState
from gobblin_py.sdk.states import State, TaskState
from tests.sql.helpers import SqlJob

PG_SCHEMA = pa.schema([
    ("id", pa.int32()), ("i2", pa.int16()), ("i8", pa.int64()), ("n", pa.decimal128(12, 2)),
    ("nbig", pa.decimal256(40, 10)), ("nu", pa.decimal128(38, 9)), ("r", pa.float32()), ("d", pa.float64()),
    ("b", pa.bool_()), ("t", pa.string()), ("v", pa.string()), ("c", pa.string()), ("dt", pa.date32()),
    ("tm", pa.time64("us")), ("ts", pa.timestamp("us")), ("tstz", pa.timestamp("us", tz="UTC")),
    ("j", pa.string()), ("u", pa.string()), ("iv", pa.string()), ("arr", pa.string()),
])

PG_DDL = """CREATE TABLE typed (id integer PRIMARY KEY, i2 smallint, i8 bigint, n numeric(12,2), nbig numeric(40,10),
  nu numeric, r real, d double precision, b boolean, t text, v varchar(10), c char(3), dt date, tm time,
  ts timestamp, tstz timestamptz, j jsonb, u uuid, iv interval, arr integer[])"""

PG_ROWS = """INSERT INTO typed VALUES
 (1, -32768, 9223372036854775807, 1234567890.12, 123456789012345678901234567890.0123456789, 3.141592653,
  1.1, 'NaN', true, 'comma, "quote"' || E'\\nnew line', 'NA', 'ab', '2024-02-29', '23:59:59.999999',
  '2024-01-15 10:30:00.123456', '2024-01-15 10:30:00.5+02', '{"a": [1, 2]}', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
  '1 year 2 mons 3 days 04:05:06', '{1,NULL,3}'),
 (2, 0, -1, -0.01, 0, 0, '-Infinity', 'Infinity', false, '', 'NULL', NULL, '1970-01-01', '00:00:00',
  '1999-12-31 23:59:59', '1970-01-01 00:00:00+00', 'null', NULL, '-1 days', '{}'),
 (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)"""


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def _f32(value):
    return None if value is None else struct.unpack("f", struct.pack("f", value))[0]


@pytest.mark.parametrize("method", ["adbc", "copy", "cursor"])
def test_postgres_types_map_exactly(postgres_db, tmp_path, method):
    postgres_db.execute(PG_DDL)
    postgres_db.execute(PG_ROWS)
    job = SqlJob(tmp_path, postgres_db, tables="typed", extract__delta__fields="id",
                 extract__primary__key__fields="id", source__querybased__fetch__method=method)
    result = job.run()
    assert result.returncode == 0, result.output
    table = job.published("typed").sort_by("id")
    assert table.schema == PG_SCHEMA
    with postgres_db.database.connect() as conn:
        conn.execute("SET TimeZone = 'UTC'")
        conn.execute("SET IntervalStyle = 'iso_8601'")
        expected = conn.execute(
            "SELECT id, i2, i8, n, nbig, nu, r, d, b, t, v, c, dt, tm, ts, tstz, j::text, u::text, iv::text, arr::text "
            "FROM typed ORDER BY id").fetchall()
    got = [tuple(row.values()) for row in table.to_pylist()]
    for want, have in zip(expected, got):
        want = list(want)
        want[6] = _f32(want[6])  # real is a 32-bit float on both sides
        assert all(_same(w, h) for w, h in zip(want, have)), (want, have)
    assert got[1][9] == "" and got[2][9] is None  # empty text and NULL stay apart
    assert got[0][10] == "NA" and got[1][10] == "NULL"  # texts that CSV readers like to turn into nulls


def test_postgres_bytea_and_unbounded_numeric_choices(postgres_db, tmp_path):
    postgres_db.execute("CREATE TABLE blobs (id integer PRIMARY KEY, data bytea, ratio numeric)")
    postgres_db.execute("INSERT INTO blobs VALUES (1, '\\x00ff10', 1.0 / 7), (2, '', 2), (3, NULL, NULL)")
    job = SqlJob(tmp_path, postgres_db, tables="blobs", extract__delta__fields="id")
    failed = job.run()  # 1/7 has 20 decimal digits: decimal128(38,9) would round it, so the task fails
    assert failed.returncode == 1
    assert "ratio (numeric without precision, read as source.querybased.unbounded.numeric.type=decimal128(38, 9))" \
        in failed.stderr
    job.set(source__querybased__unbounded__numeric__type="string")
    result = job.run()
    assert result.returncode == 0, result.output
    table = job.published("blobs").sort_by("id")
    assert table.schema == pa.schema([("id", pa.int32()), ("data", pa.binary()), ("ratio", pa.string())])
    assert table.column("data").to_pylist() == [b"\x00\xff\x10", b"", None]
    assert table.column("ratio").to_pylist() == ["0.14285714285714285714", "2", None]


def test_sqlite_declared_types_map_exactly(sqlite_db, tmp_path):
    sqlite_db.execute("""CREATE TABLE typed (id INTEGER PRIMARY KEY, n NUMERIC(10,2), dec DECIMAL(5,1), r REAL,
        b BOOLEAN, t TEXT, v VARCHAR(5), blob BLOB, d DATE, dtm DATETIME, ts TIMESTAMP, tz TIMESTAMPTZ, anything)""")
    sqlite_db.executemany("INSERT INTO typed VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [
        (1, 12.34, 0.3, 1.5, 1, "x, \"y\"\nz", "NA", b"\x00\x01", "2024-02-29", "2024-01-15 10:30:00",
         "2024-01-15T10:30:00.123456", "2024-01-15T10:30:00Z", 7),
        (2, 5, 100, -0.0, 0, "", "", b"", "1970-01-01", "1999-12-31 23:59:59.5", "2000-01-01 00:00:00",
         "2000-01-01 00:00:00.25+00:00", "text"),
        (3, None, None, None, None, None, None, None, None, None, None, None, None),
    ])
    job = SqlJob(tmp_path, sqlite_db, tables="typed", extract__delta__fields="id")
    result = job.run()
    assert result.returncode == 0, result.output
    table = job.published("typed").sort_by("id")
    assert table.schema == pa.schema([
        ("id", pa.int64()), ("n", pa.decimal128(10, 2)), ("dec", pa.decimal128(5, 1)), ("r", pa.float64()),
        ("b", pa.bool_()), ("t", pa.string()), ("v", pa.string()), ("blob", pa.binary()), ("d", pa.date32()),
        ("dtm", pa.timestamp("us")), ("ts", pa.timestamp("us")), ("tz", pa.timestamp("us", tz="UTC")),
        ("anything", pa.string()),
    ])
    rows = table.to_pylist()
    utc = dt.timezone.utc
    assert [r["n"] for r in rows] == [Decimal("12.34"), Decimal("5.00"), None]
    assert [r["dec"] for r in rows] == [Decimal("0.3"), Decimal("100.0"), None]
    assert [r["b"] for r in rows] == [True, False, None]
    assert [r["t"] for r in rows] == ["x, \"y\"\nz", "", None] and rows[0]["v"] == "NA"
    assert [r["blob"] for r in rows] == [b"\x00\x01", b"", None]
    assert [r["d"] for r in rows] == [dt.date(2024, 2, 29), dt.date(1970, 1, 1), None]
    assert [r["dtm"] for r in rows] == [dt.datetime(2024, 1, 15, 10, 30), dt.datetime(1999, 12, 31, 23, 59, 59, 500000), None]
    assert rows[0]["ts"] == dt.datetime(2024, 1, 15, 10, 30, 0, 123456)
    assert [r["tz"] for r in rows][:2] == [dt.datetime(2024, 1, 15, 10, 30, tzinfo=utc),
                                           dt.datetime(2000, 1, 1, 0, 0, 0, 250000, tzinfo=utc)]
    assert [r["anything"] for r in rows] == ["7", "text", None]


def test_sqlite_iso_text_times_as_the_delta_column(sqlite_db, tmp_path):
    """'T' separators and 'Z' suffixes as applications write them: bounds are written the same way."""
    sqlite_db.execute("CREATE TABLE events (id INTEGER PRIMARY KEY, at TEXT)")
    base = dt.datetime(2024, 5, 1)
    stamp = lambda i: (base + dt.timedelta(seconds=i * 7, microseconds=i * 1000)).isoformat(timespec="milliseconds") + "Z"
    sqlite_db.executemany("INSERT INTO events VALUES (?, ?)", [(i, stamp(i)) for i in range(1, 101)])
    job = SqlJob(tmp_path, sqlite_db, tables="events", extract__delta__fields="at", extract__primary__key__fields="id",
                 source__querybased__partition__interval="0.05")  # 3-minute ranges
    assert job.run().returncode == 0
    assert job.ids("events", "id") == list(range(1, 101))
    [task] = [t for t in job.state()["events"]["tasks"] if t["expected_high_watermark"]["value"] == max(
        x["expected_high_watermark"]["value"] for x in job.state()["events"]["tasks"])]
    assert task["actual_high_watermark"]["time"] == "2024-05-01T00:11:40.100001"
    sqlite_db.executemany("INSERT INTO events VALUES (?, ?)", [(i, stamp(i)) for i in range(101, 111)])
    assert job.run().returncode == 0
    assert job.ids("events", "id") == list(range(1, 111))


def test_postgres_numerics_of_up_to_18_digits_come_by_adbc_as_scaled_integers(postgres_db, tmp_path):
    """numeric(p,s) with p <= 18 is selected as its value × 10^s in a bigint (the driver's numeric is text,
    decoded value by value) and made back into decimal128(p,s) exactly; wider ones still come as numeric."""
    postgres_db.execute("CREATE TABLE money (id integer PRIMARY KEY, wide numeric(18,4), whole numeric(5,0), "
                        "frac numeric(3,3), big numeric(19,2))")
    postgres_db.execute("INSERT INTO money VALUES (1, 99999999999999.9999, 99999, 0.999, 99999999999999999.99), "
                        "(2, -99999999999999.9999, -99999, -0.999, -0.01), (3, 0.0001, 0, 0, 0), "
                        "(4, NULL, NULL, NULL, NULL), (5, -0.0001, 1, 0.001, 1)")
    job = SqlJob(tmp_path, postgres_db, tables="money", extract__delta__fields="id",
                 source__querybased__fetch__method="adbc")
    [unit] = QueryBasedSource().get_workunits(SourceState(job.props))
    extractor = QueryBasedSource().get_extractor(TaskState("job_n_1", "task_n_1_0", unit, job_state=State(job.props)))
    try:
        extractor.get_schema()
        table = pa.Table.from_batches(list(extractor.read_batches()))
        selects = [c.select for c in extractor.columns or []]
    finally:
        extractor.close()
    assert selects == ['"id"', '("wide" * 10000)::int8 AS "wide"', '"whole"::int8 AS "whole"',
                       '("frac" * 1000)::int8 AS "frac"', '"big"']
    assert table.schema == pa.schema([("id", pa.int32()), ("wide", pa.decimal128(18, 4)),
                                      ("whole", pa.decimal128(5, 0)), ("frac", pa.decimal128(3, 3)),
                                      ("big", pa.decimal128(19, 2))])
    with postgres_db.database.connect() as conn:
        expected = conn.execute("SELECT id, wide, whole, frac, big FROM money ORDER BY id").fetchall()
    assert [tuple(row.values()) for row in table.to_pylist()] == [tuple(row) for row in expected]


def test_a_postgres_numeric_nan_fails_the_read_naming_its_column(postgres_db, tmp_path):
    postgres_db.execute("CREATE TABLE money (id integer PRIMARY KEY, amount numeric(12,2))")
    postgres_db.execute("INSERT INTO money VALUES (1, 1.5), (2, 'NaN')")
    job = SqlJob(tmp_path, postgres_db, tables="money", extract__delta__fields="id",
                 source__querybased__fetch__method="adbc")
    result = job.run()
    assert result.returncode == 1
    assert "column amount (numeric(12,2))" in result.stderr
    assert "nan" in result.stderr.lower()
    assert job.published_files() == {}
