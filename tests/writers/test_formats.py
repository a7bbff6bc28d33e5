"""Each format writer: an all-types batch read back by an independent reader (pyarrow, fastavro) unchanged,
codecs, the staging → output protocol's specifics (file names, cleanup after a failed write, leftovers, overwrite;
the protocol itself, no rows → no file included, is WriterContract's in tests/contracts), and the types a format
refuses at build time."""

from __future__ import annotations

import base64
import gzip
import json
import subprocess
import sys
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.json as pj
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest

from gobblin_py.connectors.files.builder import AvroDataWriterBuilder, FsDataWriterBuilder, OrcDataWriterBuilder
from gobblin_py.formats.avro import _codec_problem
from gobblin_py.sdk.errors import UsageError
from tests.support.environment import missing
from tests.support.paths import REPO
from tests.support.writers import (
    ROWS,
    SCHEMA,
    all_types_batch,
    build,
    files_under,
    orc_safe_batch,
    orc_safe_rows,
    task_state,
    write_all,
)

FORMATS = ["PARQUET", "AVRO", "ORC", "JSON", "CSV"]
EXT = {"PARQUET": "parquet", "AVRO": "avro", "ORC": "orc", "JSON": "json", "CSV": "csv"}


def _batch_for(fmt: str) -> pa.RecordBatch:
    return orc_safe_batch() if fmt == "ORC" else all_types_batch()


def _rows_for(fmt: str) -> list[dict]:
    return orc_safe_rows() if fmt == "ORC" else ROWS


def _decode_base64_column(table: pa.Table, name: str) -> pa.Table:
    values = [None if v is None else base64.b64decode(v) for v in table.column(name).to_pylist()]
    return table.set_column(table.schema.get_field_index(name), name, pa.array(values, pa.binary()))


# -- round trips through independent readers ------------------------------------------------------------------

def test_parquet_read_back_by_pyarrow_is_identical(tmp_path, batch):
    writer, outputs = write_all(task_state(tmp_path, writer__output__format="PARQUET"), batch)
    assert outputs == [f"{tmp_path}/output/out/part.task_7_0.parquet"]
    table = pq.read_table(outputs[0])
    assert table.schema.equals(SCHEMA) and table.to_pylist() == ROWS
    assert writer.records_written == 4 and writer.bytes_written == Path(outputs[0]).stat().st_size


def test_orc_read_back_by_pyarrow_is_identical(tmp_path):
    _, outputs = write_all(task_state(tmp_path, writer__output__format="ORC"), orc_safe_batch())
    table = orc.read_table(outputs[0])
    # ORC keeps instants (tz-aware columns come back in UTC, in ns): cast back to the written schema, losslessly
    assert table.cast(SCHEMA).to_pylist() == orc_safe_rows()


def test_avro_read_back_by_fastavro_is_identical(tmp_path, batch):
    _, outputs = write_all(task_state(tmp_path, writer__output__format="AVRO"), batch)
    with open(outputs[0], "rb") as f:
        reader = fastavro.reader(f)
        records = list(reader)
        assert reader.codec == "deflate"  # Gobblin's default Avro codec
        schema = reader.writer_schema
    assert records == ROWS
    assert schema["name"] == "AllTypes"
    types = {f["name"]: f["type"] for f in schema["fields"]}
    assert types["id"] == "long"
    assert types["dec"] == ["null", {"type": "bytes", "logicalType": "decimal", "precision": 18, "scale": 4}]
    assert types["ts_utc"][1]["logicalType"] == "timestamp-micros"
    assert types["ts_ny"][1] == {"type": "long", "logicalType": "timestamp-millis", "arrow.timezone": "America/New_York"}
    assert types["ts_naive"][1]["logicalType"] == "local-timestamp-micros"
    assert types["d"][1] == {"type": "int", "logicalType": "date"}
    assert types["bin"] == ["null", "bytes"]


def test_json_read_back_by_pyarrow_is_identical(tmp_path, batch):
    _, outputs = write_all(task_state(tmp_path, writer__output__format="JSON"), batch)
    assert outputs[0].endswith("part.task_7_0.json")
    text = Path(outputs[0]).read_text(encoding="utf-8")
    assert len(text.splitlines()) == 4 and all(json.loads(line) for line in text.splitlines())
    # pyarrow's JSON reader parses dates only from numbers, and base64 is ours to decode
    read_schema = pa.schema([f if f.name not in ("d", "bin") else pa.field(f.name, pa.string()) for f in SCHEMA])
    read_schema = read_schema.set(read_schema.get_field_index("ts_ny"), pa.field("ts_ny", pa.timestamp("ms", "UTC")))
    table = pj.read_json(outputs[0], parse_options=pj.ParseOptions(explicit_schema=read_schema))
    table = _decode_base64_column(table, "bin")
    assert table.cast(SCHEMA).to_pylist() == ROWS


def test_json_values_are_rendered_as_documented(tmp_path, batch):
    _, outputs = write_all(task_state(tmp_path, writer__output__format="JSON"), batch)
    first, second, nulls, _ = [json.loads(line) for line in Path(outputs[0]).read_text("utf-8").splitlines()]
    assert first["dec"] == "12345678901234.5678" and first["ts_utc"] == "2024-01-02T03:04:05.123456Z"
    assert first["ts_ny"] == "2024-07-01T23:30:00.250Z" and first["ts_naive"] == "2024-01-02T03:04:05.654321"
    assert first["d"] == "2024-01-02" and first["bin"] == "AAH+/w==" and first["flag"] is True
    assert second["s"] == ROWS[1]["s"] and second["f64"] == -1e300
    assert all(v is None for k, v in nulls.items() if k != "id")


def test_csv_read_back_by_pyarrow_is_identical(tmp_path, batch):
    _, outputs = write_all(task_state(tmp_path, writer__output__format="CSV"), batch)
    types = {f.name: f.type for f in SCHEMA}
    types["bin"] = pa.string()
    types["ts_ny"] = pa.timestamp("ms", "UTC")
    table = pcsv.read_csv(
        outputs[0],
        parse_options=pcsv.ParseOptions(newlines_in_values=True),
        convert_options=pcsv.ConvertOptions(column_types=types, strings_can_be_null=True,
                                            quoted_strings_can_be_null=False),
    )
    table = _decode_base64_column(table, "bin")
    assert table.cast(SCHEMA).to_pylist() == ROWS


def test_csv_delimiter_and_header_keys(tmp_path, batch):
    small = batch.select(["id", "s"]).slice(0, 1)
    _, outputs = write_all(task_state(tmp_path, writer__output__format="CSV", writer__csv__delimiter="\\t",
                                      writer__csv__header="false"), small)
    assert Path(outputs[0]).read_text() == '1\t"plain"\n'
    with pytest.raises(UsageError, match="writer.csv.delimiter"):
        build(task_state(tmp_path, writer__output__format="CSV", writer__csv__delimiter=";;"))


# -- codecs ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("codec,expected", [("snappy", "SNAPPY"), ("gzip", "GZIP"), ("deflate", "GZIP"),
                                            ("zstd", "ZSTD"), ("none", "UNCOMPRESSED"), (None, "SNAPPY")])
def test_parquet_codecs(tmp_path, batch, codec, expected):
    props = {"writer__output__format": "PARQUET"} | ({"writer__codec__type": codec} if codec else {})
    _, outputs = write_all(task_state(tmp_path, **props), batch)
    assert pq.ParquetFile(outputs[0]).metadata.row_group(0).column(0).compression == expected
    assert pq.read_table(outputs[0]).to_pylist() == ROWS


@pytest.mark.parametrize("codec,expected", [("null", "null"), ("deflate", "deflate"), ("DEFLATE", "deflate"),
                                            ("bzip2", "bzip2"), ("xz", "xz"), (None, "deflate")])
def test_avro_codecs(tmp_path, batch, codec, expected):
    props = {"writer__output__format": "AVRO"} | ({"writer__codec__type": codec} if codec else {})
    _, outputs = write_all(task_state(tmp_path, **props), batch)
    with open(outputs[0], "rb") as f:
        reader = fastavro.reader(f)
        assert reader.codec == expected and list(reader) == ROWS


def test_avro_deflate_level(tmp_path):
    text = pa.record_batch({"s": pa.array(["gobblin " * 50 + str(i) for i in range(2000)])})
    sizes = {}
    for level in ("0", "9"):
        _, outputs = write_all(task_state(tmp_path / level, writer__output__format="AVRO",
                                          writer__deflate__level=level), text)
        sizes[level] = Path(outputs[0]).stat().st_size
    assert sizes["9"] * 5 < sizes["0"]
    with pytest.raises(UsageError, match="key 'writer.deflate.level': '12': must be at most 9"):
        build(task_state(tmp_path, writer__output__format="AVRO", writer__deflate__level="12"))


OPTIONAL_AVRO_CODECS = ("snappy", "zstandard", "lz4")


@pytest.mark.parametrize("codec", OPTIONAL_AVRO_CODECS)
def test_avro_codec_with_its_library_writes(tmp_path, batch, codec):
    if _codec_problem(codec) is not None:
        missing(f"the library of the Avro {codec} codec ({_codec_problem(codec)}): pip install -e '.[dev]'")
    _, outputs = write_all(task_state(tmp_path, writer__output__format="AVRO", writer__codec__type=codec), batch)
    with open(outputs[0], "rb") as f:
        reader = fastavro.reader(f)
        assert reader.codec == codec and list(reader) == ROWS


# A machine without the codecs' libraries, made by hiding them from the import system before fastavro loads.
_WITHOUT_CODEC_LIBRARIES = """
import json, sys, tempfile
from pathlib import Path
for name in ("cramjam", "lz4", "backports.zstd", "compression.zstd", "zstandard"):
    sys.modules[name] = None
from gobblin_py.sdk.errors import UsageError
from tests.support.writers import build, files_under, task_state
said = {}
for codec in sys.argv[1:]:
    folder = Path(tempfile.mkdtemp())
    try:
        build(task_state(folder, writer__output__format="AVRO", writer__codec__type=codec))
    except UsageError as exc:
        said[codec] = [str(exc), files_under(folder)]
print(json.dumps(said))
"""


def test_avro_codec_without_its_library_says_what_is_missing():
    ran = subprocess.run([sys.executable, "-c", _WITHOUT_CODEC_LIBRARIES, *OPTIONAL_AVRO_CODECS], cwd=REPO,
                         capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    said = json.loads(ran.stdout)
    assert sorted(said) == sorted(OPTIONAL_AVRO_CODECS), ran.stdout
    for codec, (message, files) in said.items():
        assert message.startswith(f"writer.codec.type={codec}: this Python environment cannot write Avro {codec}")
        assert "install that library" in message and files == []


@pytest.mark.parametrize("codec,expected", [("zlib", "ZLIB"), ("snappy", "SNAPPY"), ("zstd", "ZSTD"), ("lz4", "LZ4"),
                                            ("none", "UNCOMPRESSED"), (None, "ZLIB")])
def test_orc_codecs(tmp_path, codec, expected):
    props = {"writer__output__format": "ORC"} | ({"writer__codec__type": codec} if codec else {})
    _, outputs = write_all(task_state(tmp_path, **props), orc_safe_batch())
    assert orc.ORCFile(outputs[0]).compression == expected
    assert orc.read_table(outputs[0]).cast(SCHEMA).to_pylist() == orc_safe_rows()


def test_orc_compress_key_is_the_fallback(tmp_path):
    _, outputs = write_all(task_state(tmp_path, writer__output__format="ORC", orc__compress="SNAPPY"), orc_safe_batch())
    assert orc.ORCFile(outputs[0]).compression == "SNAPPY"


@pytest.mark.parametrize("fmt", ["JSON", "CSV"])
def test_text_formats_gzip(tmp_path, batch, fmt):
    _, outputs = write_all(task_state(tmp_path, writer__output__format=fmt, writer__codec__type="gzip"), batch)
    assert outputs == [f"{tmp_path}/output/out/part.task_7_0.{EXT[fmt]}.gz"]
    plain = gzip.decompress(Path(outputs[0]).read_bytes())
    _, plain_outputs = write_all(task_state(tmp_path / "plain", writer__output__format=fmt), batch)
    assert plain == Path(plain_outputs[0]).read_bytes()


@pytest.mark.parametrize("fmt", FORMATS)
def test_unknown_codec_is_refused_with_the_choices(tmp_path, fmt):
    with pytest.raises(UsageError, match=r"writer.codec.type=rot13: .* supports"):
        build(task_state(tmp_path, writer__output__format=fmt, writer__codec__type="rot13"))
    assert files_under(tmp_path) == []


# -- the staging → output protocol (with tests/contracts/test_writers.py, WriterContract) ------------------------

def test_a_task_attempt_of_one_branch_writes_straight_into_its_own_folder(tmp_path):
    """No ``P`` level inside an attempt's folder: it holds only that attempt's files; staged files sit flat beside
    other attempts' (two folders fewer per task)."""
    writer = build(task_state(tmp_path, task__attempt__id="r0_ab12cd34"))
    writer.write(all_types_batch())
    assert files_under(tmp_path / "staging") == ["_attempts/r0_ab12cd34.part.task_7_0.parquet"]
    outputs = writer.commit()
    writer.cleanup()
    assert outputs == [f"{tmp_path}/output/_attempts/r0_ab12cd34/part.task_7_0.parquet"]
    branch = FsDataWriterBuilder().build(task_state(tmp_path / "two", task__attempt__id="r0_ab12cd34"), SCHEMA, 2, 1,
                                         "task_7_0")
    branch.write(all_types_batch())
    # several branches keep P (here the default path, ending in the branch name) apart
    assert branch.commit() == [f"{tmp_path}/two/output/fork_1/_attempts/r0_ab12cd34/AllTypes/_append/fork_1/part.task_7_0.parquet"]
    branch.cleanup()


@pytest.mark.parametrize("fmt", FORMATS)
def test_commit_moves_the_staged_file_and_cleanup_leaves_nothing(tmp_path, fmt):
    writer = build(task_state(tmp_path, writer__output__format=fmt))
    writer.write(_batch_for(fmt))
    assert files_under(tmp_path / "staging") == [f"out/part.task_7_0.{EXT[fmt]}"]
    assert files_under(tmp_path / "output") == []
    outputs = writer.commit()
    writer.cleanup()
    assert files_under(tmp_path / "staging") == []
    assert files_under(tmp_path / "output") == [f"out/part.task_7_0.{EXT[fmt]}"]
    assert outputs == [f"{tmp_path}/output/out/part.task_7_0.{EXT[fmt]}"]
    assert writer.records_written == 4 and writer.bytes_written == Path(outputs[0]).stat().st_size > 0


@pytest.mark.parametrize("fmt", FORMATS)
def test_cleanup_after_a_failure_deletes_the_staged_file(tmp_path, fmt):
    writer = build(task_state(tmp_path, writer__output__format=fmt))
    writer.write(_batch_for(fmt))
    with pytest.raises(ValueError, match=r"field names are not matching the record batch's field names: \['other'\]"):
        writer.write(pa.record_batch({"other": pa.array([1])}))  # a batch of another schema fails the write
    writer.cleanup()
    assert files_under(tmp_path) == []


def test_a_leftover_staging_file_is_replaced_and_an_old_output_overwritten(tmp_path, batch):
    leftover = tmp_path / "staging/out/part.task_7_0.parquet"
    old_output = tmp_path / "output/out/part.task_7_0.parquet"
    for path in (leftover, old_output):
        path.parent.mkdir(parents=True)
        path.write_bytes(b"garbage of an earlier attempt")
    _, outputs = write_all(task_state(tmp_path), batch)
    assert pq.read_table(outputs[0]).to_pylist() == ROWS
    assert files_under(tmp_path / "staging") == []


def test_record_count_in_file_names(tmp_path, batch):
    _, outputs = write_all(task_state(tmp_path, writer__output__format="AVRO",
                                      writer__include__record__count__in__file__names="true"), batch)
    assert outputs == [f"{tmp_path}/output/out/part.task_7_0.4.avro"]


def test_explicit_file_name(tmp_path, batch):
    _, outputs = write_all(task_state(tmp_path, writer__output__format="CSV", writer__file__name="data.csv"), batch)
    assert outputs == [f"{tmp_path}/output/out/data.csv"]


def test_any_fsspec_filesystem(batch):
    import fsspec

    fs = fsspec.filesystem("memory")
    state = task_state("memory://gpy-writer-test", writer__output__format="AVRO")
    try:
        writer, outputs = write_all(state, batch)
        assert outputs == ["memory:///gpy-writer-test/output/out/part.task_7_0.avro"]
        assert fs.find("/gpy-writer-test/staging") == []
        with fsspec.open(outputs[0], "rb") as f:
            assert list(fastavro.reader(f)) == ROWS
    finally:
        fs.rm("/gpy-writer-test", recursive=True)


@pytest.mark.parametrize("fmt,builder", [("AVRO", AvroDataWriterBuilder()), ("ORC", OrcDataWriterBuilder()),
                                         ("PARQUET", FsDataWriterBuilder())])
def test_format_builders_default_their_format(tmp_path, fmt, builder):
    _, outputs = write_all(task_state(tmp_path), _batch_for(fmt), builder=builder)
    assert outputs[0].endswith("." + EXT[fmt])


def test_unknown_format_is_refused(tmp_path):
    with pytest.raises(UsageError, match="key 'writer.output.format': 'PROTOBUF': not one of the accepted values"):
        build(task_state(tmp_path, writer__output__format="PROTOBUF"))


# -- types a format cannot hold ---------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt,column,message", [
    ("CSV", pa.array([[1, 2]]), "CSV has no form"),
    ("CSV", pa.array([{"a": 1}]), "CSV has no form"),
    ("AVRO", pa.array([1], pa.duration("s")), "has no Avro form"),
    ("AVRO", pa.array([[(7, 1)]], pa.map_(pa.int32(), pa.int32())), "Avro maps have string keys"),
    ("ORC", pa.array([1], pa.time64("us")), "ORC has no time64"),
])
def test_types_a_format_cannot_hold_fail_the_build(tmp_path, fmt, column, message):
    schema = pa.schema([("c", column.type)])
    with pytest.raises(UsageError, match=message):
        build(task_state(tmp_path, writer__output__format=fmt), schema)
    assert files_under(tmp_path) == []


def test_orc_refuses_pre_epoch_fractions_unless_allowed(tmp_path, batch):
    writer = build(task_state(tmp_path / "refused", writer__output__format="ORC"))
    with pytest.raises(UsageError, match="column 'ts_utc'.*before 1970.*writer.orc.allow.pre.epoch.fractions"):
        writer.write(batch)
    writer.cleanup()
    assert files_under(tmp_path / "refused") == []
    _, outputs = write_all(task_state(tmp_path / "allowed", writer__output__format="ORC",
                                      writer__orc__allow__pre__epoch__fractions="true"), batch)
    assert orc.read_table(outputs[0]).cast(SCHEMA).to_pylist() == ROWS  # pyarrow reads it right


def test_orc_casts_what_it_lacks(tmp_path):
    batch = pa.record_batch({"u": pa.array([1, 2**63 - 1], pa.uint64()), "u8": pa.array([255, 0], pa.uint8()),
                             "k": pa.array(["x", "y"]).dictionary_encode(),
                             "d": pa.array([1, 2], pa.int64()).cast(pa.decimal256(20, 0))})
    _, outputs = write_all(task_state(tmp_path, writer__output__format="ORC"), batch)
    assert orc.read_table(outputs[0]).to_pylist() == batch.to_pylist()


def test_avro_nested_and_unusual_types_round_trip(tmp_path):
    import datetime as dt

    batch = pa.record_batch({
        "list_ts": pa.array([[dt.datetime(2020, 1, 1, 0, 0, 1)], None, []], pa.list_(pa.timestamp("s"))),
        "rec": pa.array([{"a b": 1, "when": dt.date(2020, 1, 2)}, None, {"a b": None, "when": None}],
                        pa.struct([("a b", pa.int16()), ("when", pa.date32())])),
        "m": pa.array([[("k", 1.5)], None, []], pa.map_(pa.string(), pa.float64())),
        "fixed": pa.array([b"abcd", None, b"\x00\x00\x00\x00"], pa.binary(4)),
        "u64": pa.array([0, None, 2**63 - 1], pa.uint64()),
        "t": pa.array([1, None, 86399999999], pa.time64("us")),
        "cat": pa.array(["a", None, "b"]).dictionary_encode(),
        "big": pa.array([1, None, -1], pa.int64()).cast(pa.decimal256(50, 3)),
        "1st col": pa.array([1, 2, 3], pa.int32()),
    })
    _, outputs = write_all(task_state(tmp_path, writer__output__format="AVRO"), batch)
    with open(outputs[0], "rb") as f:
        records = list(fastavro.reader(f))
    expected = batch.to_pylist()
    for row in expected:
        row["rec"] = None if row["rec"] is None else {"a_b": row["rec"]["a b"], "when": row["rec"]["when"]}
        row["m"] = None if row["m"] is None else dict(row["m"])
        row["_1st_col"] = row.pop("1st col")
    assert records == expected


def test_json_nested_types(tmp_path):
    batch = pa.record_batch({
        "l": pa.array([[1, None], None, []]),
        "st": pa.array([{"x": 1.5, "y": "q\""}, None, {"x": None, "y": None}]),
        "m": pa.array([[("k", [1])], None, []], pa.map_(pa.string(), pa.list_(pa.int64()))),
        "f": pa.array([float("nan"), float("inf"), float("-inf")]),
    })
    _, outputs = write_all(task_state(tmp_path, writer__output__format="JSON"), batch)
    lines = Path(outputs[0]).read_text().splitlines()
    assert lines[0] == '{"l":[1,null],"st":{"x":1.5,"y":"q\\""},"m":{"k":[1]},"f":NaN}'
    assert lines[1] == '{"l":null,"st":null,"m":null,"f":Infinity}'
    assert lines[2] == '{"l":[],"st":{"x":null,"y":null},"m":{},"f":-Infinity}'
    assert [json.loads(line) for line in lines][2]["m"] == {}
