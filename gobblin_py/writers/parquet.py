"""The Parquet writer: Arrow batches into one Parquet file (pyarrow), staged then committed."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from gobblin_py.errors import UsageError
from gobblin_py.state import State
from gobblin_py.writers import paths
from gobblin_py.writers.base import StagedFileWriter

# writer.codec.type -> Parquet compression; "deflate" (Gobblin's Avro default) maps to gzip, its Parquet kin
CODECS = {"snappy": "snappy", "gzip": "gzip", "deflate": "gzip", "zstd": "zstd", "lz4": "lz4", "brotli": "brotli",
          "none": "none", "uncompressed": "none"}


def parquet_codec(value: str | None) -> str:
    codec = (value or "snappy").strip().lower()
    if codec not in CODECS:
        raise UsageError(f"writer.codec.type={value}: Parquet supports {', '.join(sorted(CODECS))}")
    return CODECS[codec]


class ParquetDataWriter(StagedFileWriter):
    """Streams batches into ``<staging>/<P>/<name>``; each batch becomes (at least) one row group."""

    codecs = CODECS
    extension = "parquet"

    def __init__(self, fs, staging_path: str, output_path: str, schema: pa.Schema, codec: str = "snappy",
                 **kwargs: Any) -> None:
        self.codec = codec
        super().__init__(fs, staging_path, output_path, schema, **kwargs)

    @classmethod
    def options(cls, state: State, branches: int, branch: int, schema: pa.Schema) -> dict[str, Any]:
        return {"codec": parquet_codec(paths.branch_prop(state, "writer.codec.type", branches, branch))}

    def _open(self, sink) -> None:
        self._writer = pq.ParquetWriter(sink, self.schema, compression=self.codec)

    def _write(self, batch: pa.RecordBatch) -> None:
        self._writer.write_batch(batch)

    def _finish(self) -> None:
        self._writer.close()
