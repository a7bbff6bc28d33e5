"""WriterContract over every file writer and format: FsDataWriterBuilder writing Parquet, Avro, ORC, JSON lines and CSV,
the format-named builders (Gobblin's AvroDataWriterBuilder and the others default their format), and the byte writer."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pyarrow as pa

from gobblin_py.testing import WriterContract

FORMATS = ("PARQUET", "AVRO", "ORC", "JSON", "CSV")


class TestFsDataWriterBuilder(WriterContract):
    builder_class = "FsDataWriterBuilder"
    formats = FORMATS
    engines = ("local", "spark")


class TestFormatNamedBuilders(WriterContract):
    """Each format-named builder writes its format when writer.output.format is not set."""

    formats = ("ParquetDataWriterBuilder", "org.apache.gobblin.writer.AvroDataWriterBuilder",
               "org.apache.gobblin.writer.GobblinOrcWriterBuilder", "JsonDataWriterBuilder", "CsvDataWriterBuilder")
    engines = ("local",)

    def builder_for(self, fmt):
        return fmt

    def writer_props(self, fmt):
        return {"writer.output.format": None}  # unset (the contract jobs set PARQUET): the builder's own format


class TestSimpleDataWriterBuilder(WriterContract):
    """Gobblin's byte writer: a string column's values, one per line (and framed by their length)."""

    builder_class = "org.apache.gobblin.writer.SimpleDataWriterBuilder"
    formats = ("lines", "framed")
    key_columns = ("value",)
    engines = ("local",)

    def writer_props(self, fmt):
        props = {"writer.output.format": "txt", "simple.writer.delimiter": "\n"}
        if fmt == "framed":
            props.update({"simple.writer.prepend.size": "true", "writer.codec.type": "gzip"})
        return props

    def sample_batches(self):
        values = [f"record {i}: héllo" for i in range(7)]
        return [pa.record_batch({"value": values[:4]}), pa.record_batch({"value": values[4:]})]

    def rolling_batches(self):
        values = [hashlib.sha256(str(i).encode()).hexdigest() * 2 for i in range(2000)]
        return pa.table({"value": values}).to_batches(max_chunksize=50)

    def read_back(self, paths, fmt):
        import gzip

        values = []
        for path in sorted(paths):
            data = Path(path).read_bytes()
            if path.endswith(".gzip"):
                data = gzip.decompress(data)
            while data:
                if fmt == "framed":
                    size = int.from_bytes(data[:8], "big")
                    record, data = data[8:8 + size], data[8 + size:]
                else:
                    record, _, data = data.partition(b"\n")
                    record += b"\n"
                assert record.endswith(b"\n"), record
                values.append(record[:-1].decode())
        return pa.table({"value": pa.array(values, pa.string())})
