"""Writer builders: the writer of a task branch from ``writer.output.format[.i]``, the paths, rolling and partitions.

``FsDataWriterBuilder`` picks the file writer by format (PARQUET, AVRO, ORC, JSON, CSV), reads and checks the
format's options (so a bad codec or a type the format cannot hold fails the build, before any file exists),
and wraps it:

- always in a :class:`~gobblin_py.connectors.files.rolling.RollingDataWriter` (files opened lazily; with
  ``writer.target.file.size[.i]`` a new file, with the next writer id, whenever one reaches the size);
- with ``writer.partitioner.class`` in a :class:`~gobblin_py.connectors.files.partitioned.PartitionedDataWriter`, one
  rolling writer per partition folder.

The format-named builders (``AvroDataWriterBuilder`` …) differ only in the format used when
``writer.output.format`` is not set; an explicit ``writer.output.format[.i]`` always wins.
"""

from __future__ import annotations

import importlib
from typing import Any

import pyarrow as pa

from gobblin_py.connectors.files.rolling import RollingDataWriter, WriterIds
from gobblin_py.formats import EXTENSIONS as FORMAT_EXTENSIONS
from gobblin_py.formats import WRITERS
from gobblin_py.formats.base import StagedFileWriter
from gobblin_py.formats.settings import FileWriterSettings, HiveSerdeSettings, WriterSettings
from gobblin_py.io import fs as fsutil
from gobblin_py.io.branch_paths import BranchScope
from gobblin_py.io.contained_paths import contained_join
from gobblin_py.sdk.branches import branch_count, branch_key
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.contracts import BatchPartitioner, DataWriter, DataWriterBuilder, RecordPartitioner
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.partitioner import PartitionerInit, RecordPartitionerAdapter, WriterPartitioner
from gobblin_py.sdk.settings import Settings, problem_at
from gobblin_py.sdk.states import State, WorkUnitState

# each format's writer, imported when a job writes it (a Parquet job loads neither fastavro nor pyarrow.orc)
FORMAT_WRITERS: dict[str, str] = WRITERS
PARTITIONER_KEY = "writer.partitioner.class"


def format_writer(fmt: str) -> type[StagedFileWriter]:
    """The file writer class of ``writer.output.format`` ``fmt`` (PARQUET, AVRO, ORC, JSON or CSV)."""
    module, _, name = FORMAT_WRITERS[fmt].partition(":")
    return getattr(importlib.import_module(module), name)


def numbered_name(name: str, sequence: int, extension: str) -> str:
    """An explicit ``writer.file.name``'s name for the ``sequence``-th rolled file: ``data_1.csv.gz`` …"""
    if sequence == 0:
        return name
    if extension and name.endswith("." + extension) and len(name) > len(extension) + 1:
        return f"{name[: -len(extension) - 1]}_{sequence}.{extension}"
    return f"{name}_{sequence}"


def load_partitioner(state: State, branches: int, branch: int) -> WriterPartitioner | None:
    """The ``init``-ed partitioner named by ``writer.partitioner.class``, or None when it is not set."""
    from gobblin_py.sdk.plugins import instantiate

    name = state.get_prop(PARTITIONER_KEY)
    if not name or not name.strip():
        return None
    plugin: Any = instantiate(name, PARTITIONER_KEY)
    if not isinstance(plugin, (WriterPartitioner, BatchPartitioner)):
        if not isinstance(plugin, RecordPartitioner):
            raise UsageError(f"{PARTITIONER_KEY}={name}: {type(plugin).__qualname__} is not a WriterPartitioner "
                             "(it needs partition(batch) or partition_for_record(record))")
        plugin = RecordPartitionerAdapter(plugin)
    if isinstance(plugin, PartitionerInit):
        plugin.init(state, branches, branch)
    return plugin


class FsDataWriterBuilder(DataWriterBuilder):
    """Builds the file writer of the branch's ``writer.output.format`` on ``writer.fs.uri[.i]``."""

    settings_class: type[Settings] = WriterSettings
    default_format = "PARQUET"

    @classmethod
    def writer_for(cls, settings: Any) -> tuple[type[StagedFileWriter], str]:
        """``(file writer class, file extension)`` of a branch (a builder of one writer overrides this)."""
        fmt = settings.format or cls.default_format
        return format_writer(fmt), FORMAT_EXTENSIONS[fmt]

    @classmethod
    def validate(cls, props) -> list[ConfigError]:
        """Per branch, what the format says of its options (a codec it can write, a one-character delimiter)."""
        problems: list[ConfigError] = []
        branches = branch_count(props)
        for branch in range(branches):
            if cls.settings_class.problems(props, branches=branches, branch=branch):
                continue  # reported with the settings
            settings = cls.settings_class.load(props, branches=branches, branch=branch)
            writer_cls, _ = cls.writer_for(settings)
            try:
                writer_cls.options(settings, State(dict(props)), None)
            except UsageError as exc:
                key, _, problem = str(exc).partition(": ")
                key = branch_key(key.split("=", 1)[0], branches, branch)
                problems.append(problem_at(props, key, problem or str(exc)))
        return problems

    def build(self, state: WorkUnitState, schema: pa.Schema, branches: int, branch: int, writer_id: str) -> DataWriter:
        settings = self.settings_class.load(state, branches=branches, branch=branch)
        files = settings if isinstance(settings, FileWriterSettings) else \
            FileWriterSettings.load(state, branches=branches, branch=branch)
        writer_cls, extension = self.writer_for(settings)
        options: dict[str, Any] = writer_cls.options(settings, state, schema)
        options["include_record_count"] = files.record_count_in_names
        target = files.target_size
        for buffered in ("stripe_size", "row_group_bytes"):  # ORC stripes, Parquet row groups: at most a file
            if target and buffered in options:
                options[buffered] = min(options[buffered], target)
        suffix = writer_cls.name_suffix(options)
        partitioner = load_partitioner(state, branches, branch)
        if isinstance(partitioner, WriterPartitioner):
            partitioner.check_schema(schema)

        scope = BranchScope(state, branches, branch)
        staging, output = scope.writer_dirs()
        fs, staging_root = fsutil.open_fs(staging, files.fs_uri)
        _, output_root = fsutil.open_fs(output, files.fs_uri)
        relative = scope.attempt_file_path()
        explicit_name = scope.explicit_file_name()
        ids = WriterIds(writer_id)

        def open_file(partition: str, sequence: int) -> StagedFileWriter:
            file_id = ids.next()
            if explicit_name:
                name = numbered_name(explicit_name, sequence, extension + suffix)
            else:
                name = scope.file_name(file_id, extension) + suffix
            where = contained_join(relative, partition, name, what="partition folder and file name")
            return writer_cls(fs, scope.staging_file(staging_root, where), contained_join(output_root, where), schema,
                              **options)

        def rolling(partition: str) -> RollingDataWriter:
            return RollingDataWriter(lambda sequence: open_file(partition, sequence), target)

        if partitioner is None:
            return rolling("")
        from gobblin_py.connectors.files.partitioned import (
            PartitionedDataWriter,  # its Arrow kernels only when partitioning
        )

        return PartitionedDataWriter(partitioner, rolling,
                                     include_names=files.partition_in_names,
                                     replace_separators=files.replace_separators)


class ParquetDataWriterBuilder(FsDataWriterBuilder):
    """Gobblin's ParquetDataWriterBuilder: Parquet unless ``writer.output.format`` says otherwise."""

    default_format = "PARQUET"


class AvroDataWriterBuilder(FsDataWriterBuilder):
    """Gobblin's AvroDataWriterBuilder (its default builder): Avro unless ``writer.output.format`` says otherwise."""

    default_format = "AVRO"


class OrcDataWriterBuilder(FsDataWriterBuilder):
    """Gobblin's GobblinOrcWriterBuilder: ORC unless ``writer.output.format`` says otherwise."""

    default_format = "ORC"


class HiveWritableHdfsDataWriterBuilder(OrcDataWriterBuilder):
    """Gobblin's Hive writables writer with an ORC SerDe: ORC files written straight from the rows (the rows of
    ``HiveSerDeConverter``); another SerDe or output format is refused naming the key."""

    @classmethod
    def validate(cls, props) -> list[ConfigError]:
        problems = list(HiveSerdeSettings.problems(props)) + super().validate(props)
        branches = branch_count(props)
        for branch in range(branches):
            fmt = props.get(branch_key("writer.output.format", branches, branch)) or props.get("writer.output.format")
            if fmt and fmt.upper() != "ORC":
                problems.append(problem_at(props, branch_key("writer.output.format", branches, branch),
                                           f"{fmt}: HiveWritableHdfsDataWriterBuilder writes ORC (its ORC SerDe)",
                                           "set ORC, or name the format's own writer builder"))
        return problems


class JsonDataWriterBuilder(FsDataWriterBuilder):
    """JSON lines unless ``writer.output.format`` says otherwise."""

    default_format = "JSON"


class CsvDataWriterBuilder(FsDataWriterBuilder):
    """CSV unless ``writer.output.format`` says otherwise."""

    default_format = "CSV"
