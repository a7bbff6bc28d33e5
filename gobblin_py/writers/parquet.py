"""The Parquet writer: Arrow batches to one Parquet file per task branch, staged then committed."""

from __future__ import annotations

import posixpath

import pyarrow as pa
import pyarrow.parquet as pq

from gobblin_py import fs as fsutil
from gobblin_py.api import DataWriter
from gobblin_py.errors import UsageError

# writer.codec.type -> Parquet compression; "deflate" (Gobblin's Avro default) maps to gzip, its Parquet kin
CODECS = {"snappy": "snappy", "gzip": "gzip", "deflate": "gzip", "zstd": "zstd", "lz4": "lz4", "brotli": "brotli",
          "none": "none", "uncompressed": "none"}


def parquet_codec(value: str | None) -> str:
    codec = (value or "snappy").strip().lower()
    if codec not in CODECS:
        raise UsageError(f"writer.codec.type={value}: Parquet supports {', '.join(sorted(CODECS))}")
    return CODECS[codec]


class ParquetDataWriter(DataWriter):
    """Streams batches into ``<staging>/<P>/<name>``; ``commit`` moves the file to ``<output>/<P>/<name>``."""

    def __init__(self, fs, staging_path: str, output_path: str, schema: pa.Schema, codec: str) -> None:
        self.fs = fs
        self.staging_path = staging_path
        self.output_path = output_path
        self._records = 0
        self._bytes = 0
        fs.makedirs(posixpath.dirname(staging_path), exist_ok=True)
        if fs.exists(staging_path):  # a leftover of an earlier attempt
            fsutil.remove(fs, staging_path)
        self._stream = fs.open(staging_path, "wb")
        self._writer = pq.ParquetWriter(self._stream, schema, compression=codec)

    def write(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows:
            self._writer.write_batch(batch)
            self._records += batch.num_rows

    def _close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._stream.close()
            self._writer = None

    def commit(self) -> list[str]:
        self._close()
        self._bytes = self.fs.size(self.staging_path)
        self.fs.makedirs(posixpath.dirname(self.output_path), exist_ok=True)
        if self.fs.exists(self.output_path):
            fsutil.remove(self.fs, self.output_path)
        self.fs.mv(self.staging_path, self.output_path)
        return [self.output_path]

    def cleanup(self) -> None:
        try:
            self._close()
        finally:
            if self.fs.exists(self.staging_path):
                fsutil.remove(self.fs, self.staging_path)

    @property
    def records_written(self) -> int:
        return self._records

    @property
    def bytes_written(self) -> int:
        return self._bytes
