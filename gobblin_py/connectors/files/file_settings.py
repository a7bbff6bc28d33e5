"""The file source's keys (:class:`FileSourceSettings`), the names of what it keeps on its work units, and formats.

One declaration per key: validation before a run, ``gpy validate --explain`` and the docs' key tables read it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from gobblin_py.formats import READ_EXTENSIONS
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.settings import Kind, Settings, setting

DATA_DIRECTORY_KEY = "source.filebased.data.directory"
FORMAT_KEY = "source.filebased.format"
SNAPSHOT_KEY = "source.filebased.fs.snapshot"
FILES_TO_PULL_KEY = "source.filebased.files.to.pull"
FILE_MTIMES_KEY = "source.filebased.files.mtime"  # the modification times of the files to pull, in their order
# a replay from a time: the first N files to pull were pulled before, and drop their records before the time
REPLAYED_FILES_KEY = "source.filebased.files.replayed"
SCHEMA_FILE_KEY = "source.filebased.schema.file"  # a unit that reads no file takes its schema from this one
SNAPSHOT_SEPARATOR = ":::"
SCHEMA_CHANGE_KEY = "source.filebased.schema.change"
# the most a CSV or JSON block (so a row) may be: a task holds a few blocks and what is parsed from them at once, and
# a row of a gigabyte fails for memory somewhere past the reader, naming nothing
MAX_BLOCK = 256 << 20

FORMATS = READ_EXTENSIONS


@dataclass(frozen=True)
class FileSourceSettings(Settings):
    """The keys of :class:`FileBasedSource`."""

    directory: str = setting(DATA_DIRECTORY_KEY, required=True, doc="folder to list, recursively (a path or URL)")
    fs_uri: str | None = setting("source.filebased.fs.uri", default_doc="file:///",
                                 doc="filesystem of a bare directory path")
    pattern: str = setting("source.filebased.file.pattern", default="*", doc="glob the file name must match")
    format: str | None = setting(FORMAT_KEY, choices=("csv", "json", "jsonl", "parquet", "avro"), default_doc="by extension",
                                 doc="file format (jsonl = json: JSON lines)")
    urn_level: str = setting("source.filebased.dataset.urn.level", default="directory",
                             choices=("directory", "subdirectory"),
                             doc="directory: one dataset; subdirectory: each first-level sub-folder is a dataset")
    max_files: int | None = setting("source.filebased.maxFilesPerRun", minimum=1, default_doc="unlimited",
                                    doc="at most this many new files per dataset and run (oldest names first)")
    max_units: int | None = setting("source.max.number.of.partitions", minimum=1, default_doc="one per file",
                                    doc="at most this many work units per dataset")
    csv_delimiter: str = setting("source.filebased.csv.delimiter", default=",", doc="CSV field delimiter (one character)")
    csv_header: bool = setting("source.filebased.csv.header", default=True,
                               doc="the first CSV row holds the column names")
    csv_columns: tuple[str, ...] = setting("source.filebased.csv.column.names", default=(),
                                           doc="column names when the CSV has no header")
    csv_block_size: int = setting("source.filebased.csv.block.size", kind=Kind.SIZE, default=16 << 20, minimum=1 << 16,
                                  maximum=MAX_BLOCK, default_doc="16MB",
                                  doc="bytes of CSV parsed at a time (1 MB when the dataset's schema types every "
                                      "column); a row must fit in one block, so this bounds a row's length (a "
                                      "task holds a few blocks at once: at most 256MB)")
    json_block_size: int = setting("source.filebased.json.block.size", kind=Kind.SIZE, default=16 << 20,
                                   minimum=1 << 16, maximum=MAX_BLOCK, default_doc="16MB",
                                   doc="bytes of JSON lines parsed at a time (1 MB when the dataset's schema types "
                                       "every column); a line must fit in one block, so this bounds a line's "
                                       "length (a task holds a few blocks at once: at most 256MB)")
    batch_size: int = setting("source.filebased.batch.size", default=65536, minimum=1,
                              doc="rows per batch read from Parquet and Avro files")
    schema_change: str = setting(SCHEMA_CHANGE_KEY, default="fail", choices=("fail", "allow"),
                                 doc="a file whose columns or types differ from its dataset's (learnt from the "
                                     "previous run, or from the run's first file): fail the task naming the file, "
                                     "column and types; allow: publish it with its own, with a warning")
    avro_schema: str | None = setting("source.schema", default_doc="each file's own",
                                      doc="Avro files: the reader schema (JSON) to read every file with")
    event_column: str | None = setting("source.event.time.column",
                                       doc="the column holding each record's event time (a timestamp, a date or epoch "
                                           "milliseconds): completeness and replay from a time follow it")

    def block_size_key(self, fmt: str) -> tuple[str, int]:
        """The key bounding how long a row of ``fmt`` (csv or json) may be, and its value."""
        name = "json_block_size" if fmt == "json" else "csv_block_size"
        return next(key.name for field, key in self.declared() if field == name), getattr(self, name)

    @property
    def delimiter(self) -> str:
        return "\t" if self.csv_delimiter in ("\\t", "tab") else self.csv_delimiter

    def check(self) -> list[ConfigError]:
        if len(self.delimiter) != 1:
            return [ConfigError(f"{self.csv_delimiter!r} is not one character", key="source.filebased.csv.delimiter",
                                hint="use one character, or \\t or tab for a tab")]
        return []



def file_format(path: str, configured: str | None) -> str:
    """The format of ``path``: the configured one (``jsonl`` read as ``json``), else by its extension."""
    if configured:
        return "json" if configured == "jsonl" else configured
    ext = os.path.splitext(path)[1].lower()
    if ext not in FORMATS:
        raise UsageError(f"{path}: cannot tell the file format from its extension; set {FORMAT_KEY}")
    return FORMATS[ext]

