"""The keys of the file writers, each read per branch (``key.N`` when a job has several branches, Gobblin's rule)."""

from __future__ import annotations

from dataclasses import dataclass

from gobblin_py.formats import WRITERS
from gobblin_py.sdk.settings import Kind, Scope, Settings, setting

FORMATS = tuple(WRITERS)
PATH_TYPES = ("DEFAULT", "TABLENAME", "NAMESPACE_TABLE")
CSV_DELIMITER_NAMES = {"\\t": "\t", "tab": "\t", "\\u0001": "\x01"}
DEFAULT_PARQUET_BLOCK_SIZE = 32 << 20


@dataclass(frozen=True)
class FileWriterSettings(Settings):
    """What every staged-file writer of a branch reads, whatever its format."""

    target_size: int | None = setting("writer.target.file.size", kind=Kind.SIZE, scope=Scope.BRANCH, minimum=1,
                                      default_doc="one file per writer",
                                      doc="roll to a new file when one reaches this many bytes (128MB, 1GiB, …)")
    record_count_in_names: bool = setting("writer.include.record.count.in.file.names", scope=Scope.BRANCH,
                                          default=False, doc="part.<taskId>_<k>.<records>.<ext>")
    partition_in_names: bool = setting("writer.include.partition.in.file.names", scope=Scope.BRANCH, default=False,
                                       doc="partition folders as column=value (Hive/Spark layout)")
    replace_separators: bool = setting("writer.replace.path.separators.in.partitions", scope=Scope.BRANCH,
                                       default=False, doc="replace / in partition values too")
    partitioner: str | None = setting("writer.partitioner.class", doc="sends each row to a partition folder")
    fs_uri: str | None = setting("writer.fs.uri", scope=Scope.BRANCH, default_doc="file:///",
                                 doc="filesystem of the staging and output folders")
    file_path: str | None = setting("writer.file.path", scope=Scope.BRANCH, default_doc="by writer.file.pathType",
                                    doc="folder of the branch's files under staging, output and final folders")
    path_type: str = setting("writer.file.pathType", aliases=("writer.file.path.type",), default="DEFAULT",
                             choices=PATH_TYPES, doc="DEFAULT: <namespace>/<table>/<extract id>_append; "
                                                     "TABLENAME; NAMESPACE_TABLE")
    file_name: str | None = setting("writer.file.name", scope=Scope.BRANCH, default_doc="part.<taskId>_<k>.<ext>",
                                    doc="an explicit file name (rolled files get _1, _2, …)")


@dataclass(frozen=True)
class WriterSettings(FileWriterSettings):
    """What a branch's file writer reads: the format and its options, then the keys every file writer reads."""

    format: str | None = setting("writer.output.format", scope=Scope.BRANCH, choices=FORMATS,
                                 default_doc="the builder's: PARQUET (AVRO for AvroDataWriterBuilder, …)",
                                 doc="file format of the branch's output")
    codec: str | None = setting("writer.codec.type", scope=Scope.BRANCH, default_doc="the format's",
                                doc="compression: snappy/gzip/zstd/lz4/brotli/none (Parquet), deflate/null/bzip2/xz "
                                    "(Avro), zlib/snappy/zstd/lz4/none (ORC), none/gzip (JSON, CSV)")
    deflate_level: int = setting("writer.deflate.level", scope=Scope.BRANCH, default=9, minimum=0, maximum=9,
                                 doc="Avro deflate level (Gobblin's default 9)")
    csv_delimiter: str = setting("writer.csv.delimiter", scope=Scope.BRANCH, default=",",
                                 doc="CSV delimiter: one character, \\t or tab for a tab")
    csv_header: bool = setting("writer.csv.header", scope=Scope.BRANCH, default=True, doc="write a CSV header line")
    parquet_block_size: int = setting("parquet.block.size", kind=Kind.SIZE, scope=Scope.BRANCH, shared_fallback=True,
                                      aliases=("writer.file.block.size",), default=DEFAULT_PARQUET_BLOCK_SIZE,
                                      minimum=1, default_doc="32MB",
                                      doc="Parquet row group size: batches are held until they reach this many bytes "
                                          "of Arrow data (or 1,048,576 rows), then written as one row group; also "
                                          "read from Gobblin's writer.file.block.size")
    orc_compress: str | None = setting("orc.compress", doc="ORC codec when writer.codec.type is not set")
    orc_stripe_size: int | None = setting("orc.stripe.size", kind=Kind.SIZE, minimum=1, default_doc="64MB",
                                          doc="ORC stripe size")
    orc_pre_epoch_fractions: bool = setting("writer.orc.allow.pre.epoch.fractions", scope=Scope.BRANCH, default=False,
                                            doc="allow pre-1970 timestamps with fractions (Spark and Hive cannot "
                                                "read them from these files)")

    @property
    def delimiter(self) -> str:
        return CSV_DELIMITER_NAMES.get(self.csv_delimiter.lower(), self.csv_delimiter)


# Gobblin's Hive SerDe types (HiveSerDeWrapper.BuiltInHiveSerDe); gpy maps only Avro records written as ORC
SERDE_TYPES = ("AVRO", "ORC", "PARQUET", "TEXTFILE")


@dataclass(frozen=True)
class HiveSerdeSettings(Settings):
    """The keys of Gobblin's Hive SerDe converter and writer: gpy maps Avro records written as ORC onto its ORC writer."""

    deserializer: str | None = setting("serde.deserializer.type", kind=Kind.STR,
                                       doc="the SerDe the records are read with: AVRO (by avro.schema.literal)")
    serializer: str | None = setting("serde.serializer.type", kind=Kind.STR,
                                     doc="the SerDe the records are written with: ORC (gpy's ORC writer)")
    avro_literal: str | None = setting("avro.schema.literal",
                                       doc="the Avro schema (JSON) Hive's AvroSerDe reads the records as: its fields, "
                                           "by name, are the columns written")

    def check(self) -> list:
        from gobblin_py.sdk.config_errors import ConfigError

        problems = []
        why = ("gpy maps Gobblin's Hive SerDe classes only from Avro records (serde.deserializer.type=AVRO) to ORC "
               "files (serde.serializer.type=ORC)")
        for key, value, wanted in (("serde.deserializer.type", self.deserializer, "AVRO"),
                                   ("serde.serializer.type", self.serializer, "ORC")):
            if (value or "").upper() != wanted:
                problems.append(ConfigError(f"{value or 'not set'}: {why}", key=key, hint=f"set it to {wanted}, or "
                                            "drop the Hive SerDe classes and write with writer.output.format"))
        if not self.avro_literal:
            problems.append(ConfigError("is not set", key="avro.schema.literal",
                                        hint="the Avro schema Hive's AvroSerDe reads the records as"))
        return problems
