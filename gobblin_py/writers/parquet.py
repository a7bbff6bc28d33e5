"""The Parquet writer: Arrow batches into one Parquet file (pyarrow), staged then committed."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from gobblin_py.state import State
from gobblin_py.writers.base import StagedFileWriter, codec_for
from gobblin_py.writers.settings import WriterSettings

# writer.codec.type -> Parquet compression; "deflate" (Gobblin's Avro default) maps to gzip, its Parquet kin
CODECS = {"snappy": "snappy", "gzip": "gzip", "deflate": "gzip", "zstd": "zstd", "lz4": "lz4", "brotli": "brotli",
          "none": "none", "uncompressed": "none"}


class ParquetDataWriter(StagedFileWriter):
    """Streams batches into ``<staging>/<P>/<name>``; each batch becomes (at least) one row group."""

    codecs = CODECS
    extension = "parquet"

    def __init__(self, fs, staging_path: str, output_path: str, schema: pa.Schema, codec: str = "snappy",
                 **kwargs: Any) -> None:
        self.codec = codec
        super().__init__(fs, staging_path, output_path, schema, **kwargs)

    @classmethod
    def options(cls, settings: WriterSettings, state: State, schema: pa.Schema) -> dict[str, Any]:
        return {"codec": codec_for(cls, "Parquet", "writer.codec.type", settings.codec, "snappy")}

    def _open(self, sink) -> None:
        self._writer = pq.ParquetWriter(sink, self.schema, compression=self.codec)

    def _write(self, batch: pa.RecordBatch) -> None:
        self._writer.write_batch(batch)

    def _finish(self) -> None:
        self._writer.close()
