"""Property tests: the Arrow → Avro schema mapping is invertible on its image, Avro files of random rows read
back unchanged by fastavro, and the vectorised JSON rendering agrees with Python's JSON parser."""

from __future__ import annotations

import datetime as dt
import io
import json
import math
from decimal import Decimal

import fastavro
import fsspec
import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gobblin_py.formats.avro import AvroDataWriter, arrow_to_avro, avro_to_arrow
from gobblin_py.formats.jsonl import json_lines

NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
ZONES = st.sampled_from([None, "UTC", "America/New_York", "Asia/Kolkata"])


def _decimal(draw_precision: int, draw_scale: int) -> pa.DataType:
    return pa.decimal128(draw_precision, draw_scale) if draw_precision <= 38 else pa.decimal256(draw_precision, draw_scale)


PRIMITIVES = st.one_of(
    st.sampled_from([pa.bool_(), pa.int32(), pa.int64(), pa.float32(), pa.float64(), pa.string(), pa.binary(),
                     pa.date32(), pa.time32("ms"), pa.time64("us")]),
    st.integers(1, 16).map(pa.binary),
    st.integers(1, 76).flatmap(lambda p: st.integers(0, p).map(lambda s: _decimal(p, s))),
    st.tuples(st.sampled_from(["ms", "us"]), ZONES).map(lambda t: pa.timestamp(*t)),
)


def _fields(children: st.SearchStrategy) -> st.SearchStrategy:
    return st.lists(st.tuples(NAMES, children, st.booleans()), min_size=1, max_size=5,
                    unique_by=lambda f: f[0]).map(lambda fs: [pa.field(n, t, nullable=b) for n, t, b in fs])


TYPES = st.recursive(
    PRIMITIVES,
    lambda children: st.one_of(
        st.tuples(children, st.booleans()).map(lambda t: pa.list_(pa.field("item", t[0], nullable=t[1]))),
        st.tuples(children, st.booleans()).map(lambda t: pa.map_(pa.string(), pa.field("value", t[0], nullable=t[1]))),
        _fields(children).map(pa.struct),
    ),
    max_leaves=8,
)
SCHEMAS = _fields(TYPES).map(pa.schema)


@given(SCHEMAS)
def test_arrow_to_avro_schema_round_trip(schema):
    avro = arrow_to_avro(schema, "Row", "gobblin.test")
    parsed = fastavro.parse_schema(avro)  # a valid Avro schema (names, logical types, unique named types)
    assert parsed["type"] == "record"
    assert avro_to_arrow(avro) == schema
    assert avro_to_arrow(json.dumps(avro)) == schema


UTC = dt.timezone.utc
ROW_SCHEMA = pa.schema([
    ("i", pa.int64()), ("f", pa.float64()), ("g", pa.float32()), ("s", pa.string()), ("b", pa.binary()),
    ("flag", pa.bool_()), ("dec", pa.decimal128(20, 4)), ("ts", pa.timestamp("us", "UTC")),
    ("local", pa.timestamp("ms")), ("d", pa.date32()),
])
FLOAT32 = st.floats(width=32, allow_nan=False)
ROWS = st.lists(st.fixed_dictionaries({
    "i": st.none() | st.integers(-2**63, 2**63 - 1),
    "f": st.none() | st.floats(allow_nan=False),
    "g": st.none() | FLOAT32,
    "s": st.none() | st.text(),
    "b": st.none() | st.binary(max_size=20),
    "flag": st.none() | st.booleans(),
    "dec": st.none() | st.decimals(min_value=Decimal("-1e15"), max_value=Decimal("1e15"), places=4,
                                   allow_nan=False, allow_infinity=False),
    "ts": st.none() | st.datetimes(dt.datetime(1900, 1, 1), dt.datetime(2200, 1, 1), timezones=st.just(UTC)),
    "local": st.none() | st.datetimes(dt.datetime(1900, 1, 1), dt.datetime(2200, 1, 1)).map(
        lambda v: v.replace(microsecond=v.microsecond // 1000 * 1000)),
    "d": st.none() | st.dates(),
}), min_size=1, max_size=30)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ROWS, st.sampled_from(["null", "deflate", "bzip2"]))
def test_avro_rows_read_back_unchanged(rows, codec):
    batch = pa.RecordBatch.from_pylist(rows, schema=ROW_SCHEMA)
    fs = fsspec.filesystem("memory")
    writer = AvroDataWriter(fs, "/props/staging/x.avro", "/props/output/x.avro", ROW_SCHEMA, codec=codec)
    try:
        writer.write(batch)
        (path,) = writer.commit()
        with fsspec.open(path, "rb") as f:
            assert list(fastavro.reader(f)) == batch.to_pylist()
    finally:
        writer.cleanup()
        fs.rm("/props", recursive=True)


@given(st.lists(st.none() | st.text(), min_size=1, max_size=20),
       st.lists(st.none() | st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=20),
       st.lists(st.none() | st.integers(-2**63, 2**63 - 1), min_size=1, max_size=20))
def test_json_lines_parse_back_to_the_same_values(texts, floats, ints):
    n = min(len(texts), len(floats), len(ints))
    batch = pa.record_batch({"s\"é": pa.array(texts[:n], pa.string()), "f": pa.array(floats[:n], pa.float64()),
                             "i": pa.array(ints[:n], pa.int64())})
    lines = json_lines(batch).to_pylist()
    assert all(line.endswith("}\n") and "\n" not in line[:-1] for line in lines)
    parsed = [json.loads(line) for line in lines]
    assert [p["s\"é"] for p in parsed] == texts[:n]
    assert [p["i"] for p in parsed] == ints[:n]
    for got, want in zip((p["f"] for p in parsed), floats[:n]):
        assert got == want and (want is None or math.copysign(1, got) == math.copysign(1, want))


def test_json_lines_text_is_valid_utf8(tmp_path):
    data = json_lines(pa.record_batch({"s": pa.array(["\x00\x1f\x7f\u2028\U0001F642"])})).to_pylist()[0]
    assert json.loads(io.StringIO(data).read())["s"] == "\x00\x1f\x7f\u2028\U0001F642"
