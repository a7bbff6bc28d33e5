"""File formats, one module each: how a format is written, read, counted and named.

The one list of gpy's formats is here; the writer builder, the writer keys, the output paths and the file source
all read it. Each writer is imported only when a job writes its format (a Parquet job loads neither fastavro nor
pyarrow.orc), so this package's ``__init__`` imports nothing.

- :mod:`~gobblin_py.formats.parquet`, :mod:`~gobblin_py.formats.orc`, :mod:`~gobblin_py.formats.avro`,
  :mod:`~gobblin_py.formats.jsonl`, :mod:`~gobblin_py.formats.csv`: each format's staged file writer
  (:mod:`~gobblin_py.formats.base`), Avro↔Arrow schemas in ``avro``, Avro reading in ``avro_read``;
- :mod:`~gobblin_py.formats.counting`: the records a written file holds, read back from the file;
- :mod:`~gobblin_py.formats.text`: records rendered as text lines; :mod:`~gobblin_py.formats.types`: Arrow types by name.
"""

from __future__ import annotations

# writer.output.format → the writer class ("module:Class")
WRITERS: dict[str, str] = {
    "PARQUET": "gobblin_py.formats.parquet:ParquetDataWriter",
    "AVRO": "gobblin_py.formats.avro:AvroDataWriter",
    "ORC": "gobblin_py.formats.orc:OrcDataWriter",
    "JSON": "gobblin_py.formats.jsonl:JsonLinesDataWriter",
    "CSV": "gobblin_py.formats.csv:CsvDataWriter",
}
# writer.output.format → the extension of the files written (Gobblin's names, some of which gpy only names)
EXTENSIONS: dict[str, str] = {"AVRO": "avro", "PARQUET": "parquet", "PROTOBUF": "protobuf", "JSON": "json",
                              "ORC": "orc", "CSV": "csv", "TXT": "txt"}
# a file's extension → the format the file source reads it as
READ_EXTENSIONS: dict[str, str] = {".csv": "csv", ".tsv": "csv", ".json": "json", ".jsonl": "json",
                                   ".ndjson": "json", ".parquet": "parquet", ".avro": "avro"}
