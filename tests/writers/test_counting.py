"""Counting the records of a written file from the file itself (the publisher's reconciliation)."""

from __future__ import annotations

import gzip
import io

import fsspec
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
from hypothesis import given
from hypothesis import strategies as st

from gobblin_py.formats.counting import count_records

LOCAL = fsspec.filesystem("file")


def write_csv(path, table: pa.Table, header: bool = True, delimiter: str = ",") -> None:
    buffer = io.BytesIO()
    pcsv.write_csv(table, buffer, write_options=pcsv.WriteOptions(include_header=header, delimiter=delimiter))
    data = buffer.getvalue()
    path.write_bytes(gzip.compress(data) if str(path).endswith(".gz") else data)


@given(st.lists(st.text(alphabet=st.sampled_from('ab,;"\n\r\t é'), max_size=8), max_size=30), st.booleans(),
       st.sampled_from([",", ";", "\t"]))
def test_csv_records_are_counted_whatever_their_values_hold(tmp_path_factory, values, header, delimiter):
    path = tmp_path_factory.mktemp("csv") / "part.csv"
    table = pa.table({"text": pa.array(values, pa.string()), "n": pa.array(range(len(values)), pa.int64())})
    write_csv(path, table, header, delimiter)
    assert count_records(LOCAL, str(path), csv_header=header, csv_delimiter=delimiter) == len(values)


def test_gzipped_csv_and_json_lines_and_parquet(tmp_path):
    table = pa.table({"text": ["one\ntwo", "three"], "n": [1, 2]})
    write_csv(tmp_path / "part.csv.gz", table)
    assert count_records(LOCAL, str(tmp_path / "part.csv.gz")) == 2
    (tmp_path / "part.json").write_text('{"a": "x\\ny"}\n{"a": 2}')  # the last line without its line break
    assert count_records(LOCAL, str(tmp_path / "part.json")) == 2
    assert count_records(LOCAL, str(tmp_path / "part.json"), text_formats=False) is None
    pq.write_table(table, tmp_path / "part.parquet")
    assert count_records(LOCAL, str(tmp_path / "part.parquet")) == 2
    (tmp_path / "empty.csv").write_bytes(b"")
    assert count_records(LOCAL, str(tmp_path / "empty.csv")) == 0
    assert count_records(LOCAL, str(tmp_path / "part.bin")) is None
