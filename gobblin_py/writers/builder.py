"""Writer builders: the writer of a task branch from ``writer.output.format[.i]``, the paths, rolling and partitions.

``FsDataWriterBuilder`` picks the file writer by format (PARQUET, AVRO, ORC, JSON, CSV), reads and checks the
format's options (so a bad codec or a type the format cannot hold fails the build, before any file exists),
and wraps it:

- always in a :class:`~gobblin_py.writers.rolling.RollingDataWriter` (files opened lazily; with
  ``writer.target.file.size[.i]`` a new file, with the next writer id, whenever one reaches the size);
- with ``writer.partitioner.class`` in a :class:`~gobblin_py.writers.partitioned.PartitionedDataWriter`, one
  rolling writer per partition folder.

The format-named builders (``AvroDataWriterBuilder`` …) differ only in the format used when
``writer.output.format`` is not set; an explicit ``writer.output.format[.i]`` always wins.
"""

from __future__ import annotations

import posixpath
from typing import Any

import pyarrow as pa

from gobblin_py import fs as fsutil
from gobblin_py.api import DataWriter, DataWriterBuilder
from gobblin_py.errors import UsageError
from gobblin_py.state import State, WorkUnitState
from gobblin_py.writers import paths
from gobblin_py.writers.avro import AvroDataWriter
from gobblin_py.writers.base import StagedFileWriter, parse_size
from gobblin_py.writers.csv import CsvDataWriter
from gobblin_py.writers.jsonl import JsonLinesDataWriter
from gobblin_py.writers.orc import OrcDataWriter
from gobblin_py.writers.parquet import ParquetDataWriter, parquet_codec  # noqa: F401 - parquet_codec re-exported
from gobblin_py.writers.partitioned import PartitionedDataWriter
from gobblin_py.writers.partitioners import RecordPartitionerAdapter, WriterPartitioner
from gobblin_py.writers.rolling import TARGET_FILE_SIZE_KEY, RollingDataWriter, WriterIds

FORMAT_WRITERS: dict[str, type[StagedFileWriter]] = {
    "PARQUET": ParquetDataWriter,
    "AVRO": AvroDataWriter,
    "ORC": OrcDataWriter,
    "JSON": JsonLinesDataWriter,
    "CSV": CsvDataWriter,
}
PARTITIONER_KEY = "writer.partitioner.class"
INCLUDE_PARTITION_KEY = "writer.include.partition.in.file.names"
REPLACE_SEPARATORS_KEY = "writer.replace.path.separators.in.partitions"
RECORD_COUNT_KEY = "writer.include.record.count.in.file.names"


def _flag(state: State, key: str, branches: int, branch: int) -> bool:
    value = (paths.branch_prop(state, key, branches, branch) or "false").strip().lower()
    if value not in ("true", "false"):
        raise UsageError(f"{paths.branch_key(key, branches, branch)}={value}: expected true or false")
    return value == "true"


def numbered_name(name: str, sequence: int, extension: str) -> str:
    """An explicit ``writer.file.name``'s name for the ``sequence``-th rolled file: ``data_1.csv.gz`` …"""
    if sequence == 0:
        return name
    if extension and name.endswith("." + extension) and len(name) > len(extension) + 1:
        return f"{name[: -len(extension) - 1]}_{sequence}.{extension}"
    return f"{name}_{sequence}"


def load_partitioner(state: State, branches: int, branch: int) -> WriterPartitioner | None:
    """The ``init``-ed partitioner named by ``writer.partitioner.class``, or None when it is not set."""
    from gobblin_py.plugins import instantiate

    name = state.get_prop(PARTITIONER_KEY)
    if not name or not name.strip():
        return None
    plugin: Any = instantiate(name, PARTITIONER_KEY)
    if not isinstance(plugin, WriterPartitioner):
        if hasattr(plugin, "partition_for_record"):
            plugin = RecordPartitionerAdapter(plugin)
        elif not hasattr(plugin, "partition"):
            raise UsageError(f"{PARTITIONER_KEY}={name}: {type(plugin).__qualname__} is not a WriterPartitioner "
                             "(it needs partition(batch) or partition_for_record(record))")
    if hasattr(plugin, "init"):
        plugin.init(state, branches, branch)
    return plugin


class FsDataWriterBuilder(DataWriterBuilder):
    """Builds the file writer of the branch's ``writer.output.format`` on ``writer.fs.uri[.i]``."""

    default_format = "PARQUET"

    def writer_class(self, fmt: str, branches: int, branch: int) -> type[StagedFileWriter]:
        """The file writer of ``writer.output.format`` (a builder of one writer overrides this)."""
        writer_cls = FORMAT_WRITERS.get(fmt)
        if writer_cls is None:
            raise UsageError(f"{paths.branch_key('writer.output.format', branches, branch)}={fmt}: no file writer "
                             f"for this format (use {', '.join(FORMAT_WRITERS)})")
        return writer_cls

    def build(self, state: WorkUnitState, schema: pa.Schema, branches: int, branch: int, writer_id: str) -> DataWriter:
        fmt, extension = paths.output_format(state, branches, branch, self.default_format)
        writer_cls = self.writer_class(fmt, branches, branch)
        options: dict[str, Any] = writer_cls.options(state, branches, branch, schema)  # type: ignore[attr-defined]
        options["include_record_count"] = _flag(state, RECORD_COUNT_KEY, branches, branch)
        target = parse_size(paths.branch_key(TARGET_FILE_SIZE_KEY, branches, branch),
                            paths.branch_prop(state, TARGET_FILE_SIZE_KEY, branches, branch))
        if target and "stripe_size" in options:  # let an ORC file's growth show before it passes the target
            options["stripe_size"] = min(options["stripe_size"], target)
        suffix = writer_cls.name_suffix(options) if hasattr(writer_cls, "name_suffix") else ""
        partitioner = load_partitioner(state, branches, branch)
        if partitioner is not None and hasattr(partitioner, "validate"):
            partitioner.validate(schema)

        staging, output = paths.writer_dirs(state, branches, branch)
        fs_uri = paths.branch_prop(state, "writer.fs.uri", branches, branch)
        fs, staging_root = fsutil.open_fs(staging, fs_uri)
        _, output_root = fsutil.open_fs(output, fs_uri)
        relative = paths.writer_file_path(state, branches, branch)
        explicit_name = paths.branch_prop(state, "writer.file.name", branches, branch)
        ids = WriterIds(writer_id)

        def open_file(partition: str, sequence: int) -> StagedFileWriter:
            file_id = ids.next()
            if explicit_name:
                name = numbered_name(explicit_name, sequence, extension + suffix)
            else:
                name = paths.file_name(state, branches, branch, file_id, extension) + suffix
            where = posixpath.join(relative, partition, name) if partition else posixpath.join(relative, name)
            return writer_cls(fs, posixpath.join(staging_root, where), posixpath.join(output_root, where), schema,
                              **options)

        def rolling(partition: str) -> RollingDataWriter:
            return RollingDataWriter(lambda sequence: open_file(partition, sequence), target)

        if partitioner is None:
            return rolling("")
        return PartitionedDataWriter(partitioner, rolling,  # type: ignore[arg-type]
                                     include_names=_flag(state, INCLUDE_PARTITION_KEY, branches, branch),
                                     replace_separators=_flag(state, REPLACE_SEPARATORS_KEY, branches, branch))


class ParquetDataWriterBuilder(FsDataWriterBuilder):
    """Gobblin's ParquetDataWriterBuilder: Parquet unless ``writer.output.format`` says otherwise."""

    default_format = "PARQUET"


class AvroDataWriterBuilder(FsDataWriterBuilder):
    """Gobblin's AvroDataWriterBuilder (its default builder): Avro unless ``writer.output.format`` says otherwise."""

    default_format = "AVRO"


class OrcDataWriterBuilder(FsDataWriterBuilder):
    """Gobblin's GobblinOrcWriterBuilder: ORC unless ``writer.output.format`` says otherwise."""

    default_format = "ORC"


class JsonDataWriterBuilder(FsDataWriterBuilder):
    """JSON lines unless ``writer.output.format`` says otherwise."""

    default_format = "JSON"


class CsvDataWriterBuilder(FsDataWriterBuilder):
    """CSV unless ``writer.output.format`` says otherwise."""

    default_format = "CSV"
