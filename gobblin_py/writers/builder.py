"""Writer builders: pick the writer for a task branch from ``writer.output.format[.i]`` and the paths."""

from __future__ import annotations

import posixpath

import pyarrow as pa

from gobblin_py import fs as fsutil
from gobblin_py.api import DataWriter, DataWriterBuilder
from gobblin_py.errors import UsageError
from gobblin_py.state import WorkUnitState
from gobblin_py.writers import paths
from gobblin_py.writers.parquet import ParquetDataWriter, parquet_codec


class FsDataWriterBuilder(DataWriterBuilder):
    """Builds a file writer of the branch's ``writer.output.format`` on ``writer.fs.uri[.i]``."""

    default_format = "PARQUET"

    def build(self, state: WorkUnitState, schema: pa.Schema, branches: int, branch: int, writer_id: str) -> DataWriter:
        fmt, extension = paths.output_format(state, branches, branch, self.default_format)
        staging, output = paths.writer_dirs(state, branches, branch)
        relative = paths.writer_file_path(state, branches, branch)
        name = paths.file_name(state, branches, branch, writer_id, extension)
        fs, staging_root = fsutil.open_fs(staging, paths.branch_prop(state, "writer.fs.uri", branches, branch))
        _, output_root = fsutil.open_fs(output, paths.branch_prop(state, "writer.fs.uri", branches, branch))
        staging_path = posixpath.join(staging_root, relative, name)
        output_path = posixpath.join(output_root, relative, name)
        if fmt == "PARQUET":
            codec = parquet_codec(paths.branch_prop(state, "writer.codec.type", branches, branch))
            return ParquetDataWriter(fs, staging_path, output_path, schema, codec)
        raise UsageError(
            f"{paths.branch_key('writer.output.format', branches, branch)}={fmt}: no writer for this format yet (use PARQUET)"
        )


class ParquetDataWriterBuilder(FsDataWriterBuilder):
    """Gobblin's ParquetDataWriterBuilder: Parquet unless ``writer.output.format`` says otherwise."""

    default_format = "PARQUET"
