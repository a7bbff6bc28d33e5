"""Gobblin's byte writer (SimpleDataWriterBuilder) and console writer, on Arrow batches."""

from __future__ import annotations

import gzip
import struct
from pathlib import Path

import pyarrow as pa
import pytest

from gobblin_py.connectors.files.simple import SimpleDataWriterBuilder
from gobblin_py.connectors.testdata.console import ConsoleWriterBuilder
from gobblin_py.sdk.errors import UsageError
from tests.support.writers import task_state, write_all

RECORDS = [b"a" * 10, b"b" * 15, b"c" * 20]  # Gobblin's SimpleDataWriterTest records


def _write(tmp_path: Path, batch: pa.RecordBatch, **props: str) -> tuple[object, Path]:
    writer, [output] = write_all(task_state(tmp_path, **props), batch, builder=SimpleDataWriterBuilder())
    return writer, Path(output)


@pytest.mark.parametrize("props, size", [
    ({}, 45),
    ({"simple__writer__delimiter": "\n"}, 48),
    ({"simple__writer__prepend__size": "true"}, 45 + 3 * 8),
    ({"simple__writer__prepend__size": "true", "simple__writer__delimiter": "\n"}, 45 + 3 * 8 + 3),
])
def test_byte_layout_matches_gobblin(tmp_path, props, size):
    writer, path = _write(tmp_path, pa.RecordBatch.from_pydict({"value": pa.array(RECORDS)}), **props)
    data = path.read_bytes()
    assert len(data) == size == writer.bytes_written and writer.records_written == 3
    delimiter = b"\n" if "simple__writer__delimiter" in props else b""
    expected = b""
    for record in RECORDS:
        if "simple__writer__prepend__size" in props:
            expected += struct.pack(">q", len(record) + len(delimiter))
        expected += record + delimiter
    assert data == expected
    assert path.name == "part.task_7_0"  # no writer.output.format: no extension


def test_txt_extension_gzip_codec_and_string_values(tmp_path):
    batch = pa.RecordBatch.from_pydict({"value": ["héllo", "wörld"], "kafka_offset": [0, 1]})
    _, path = _write(tmp_path, batch, writer__output__format="txt", writer__codec__type="gzip",
                     simple__writer__delimiter="\n")
    assert path.name == "part.task_7_0.txt.gzip"
    assert gzip.decompress(path.read_bytes()) == "héllo\nwörld\n".encode()


def test_several_columns_need_a_named_one(tmp_path):
    batch = pa.RecordBatch.from_pydict({"id": [1], "payload": [b"x"]})
    with pytest.raises(UsageError, match="simple.writer.column"):
        _write(tmp_path, batch)
    _, path = _write(tmp_path, batch, simple__writer__column="payload")
    assert path.read_bytes() == b"x"
    with pytest.raises(UsageError, match="is int64"):
        _write(tmp_path, batch, simple__writer__column="id")


def test_console_prints_values_or_json_rows(tmp_path, capfdbinary):
    state = task_state(tmp_path)
    for batch in (pa.RecordBatch.from_pydict({"value": [b"one", None]}),
                  pa.RecordBatch.from_pydict({"id": [1, 2], "name": ["a", None]})):
        writer = ConsoleWriterBuilder().build(state, batch.schema, 1, 0, "task_0")
        writer.write(batch)
        assert writer.commit() == [] and writer.records_written == 2
    out = capfdbinary.readouterr().out
    assert out == b'one\nnull\n{"id":1,"name":"a"}\n{"id":2,"name":null}\n'
