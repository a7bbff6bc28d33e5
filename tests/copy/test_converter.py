"""UnGzipConverter over a batch of descriptors: a decoding appended, archive extensions stripped."""

from __future__ import annotations

import pyarrow as pa
import pytest

from gobblin_py.connectors.copy import descriptor
from gobblin_py.connectors.copy.converter import UnGzipConverter
from gobblin_py.sdk.errors import UsageError


def test_gzip_is_appended_and_extensions_leave_the_file_name_only():
    files = [descriptor.FileCopy("/s/LogData.tar.gz", "LogData.tar.gz", 1, 2),
             descriptor.FileCopy("/s/a.txt.gz", "x/a.txt.gz", 1, 2, ("gzip",)),
             descriptor.FileCopy("/s/b.tgz", "b.tgz", 1, 2),
             descriptor.FileCopy("/s/c", "d.tar.d/c.gzip", 1, 2),
             descriptor.FileCopy("/s/.gz", "y/.gz", 1, 2)]
    batch = next(descriptor.batches(files)).slice(0)
    out = UnGzipConverter().convert_batch(batch, None)
    assert out.schema == descriptor.SCHEMA
    assert out.column("destination").to_pylist() == ["LogData", "x/a.txt", "b", "d.tar.d/c", "y/.gz"]
    assert out.column("decodings").to_pylist() == [["gzip"], ["gzip", "gzip"], ["gzip"], ["gzip"], ["gzip"]]
    sliced = UnGzipConverter().convert_batch(batch.slice(1, 2), None)  # a batch that views part of another
    assert sliced.column("decodings").to_pylist() == [["gzip", "gzip"], ["gzip"]]


def test_records_that_are_not_copied_files_are_refused():
    with pytest.raises(UsageError, match="source.class must be CopySource"):
        UnGzipConverter().convert_schema(pa.schema([("value", pa.string())]), None)
