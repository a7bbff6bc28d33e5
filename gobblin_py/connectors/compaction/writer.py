"""The compaction writer: a dataset's records, in its input's format, into the hidden folder beside its
destination (``.<time>.gpy-new``) that the publisher's commit swaps in.

The folder is made afresh by each attempt (what a crashed or failed one left there goes first); its file is
staged under a ``_tmp_`` name and, once complete, named as Gobblin's compaction names its reducer output:
``part-r-<records>.<run start ms>.<n>.<ext>``.
"""

from __future__ import annotations

import posixpath
from typing import Any

import pyarrow as pa

from gobblin_py.connectors.compaction.unit_keys import FORMAT_KEY, INIT_KEY, MODE_KEY, NEW_KEY
from gobblin_py.formats.avro import AvroDataWriter
from gobblin_py.formats.base import StagedFileWriter
from gobblin_py.formats.orc import OrcDataWriter
from gobblin_py.formats.parquet import ParquetDataWriter
from gobblin_py.io import fs as fsutil
from gobblin_py.sdk.contracts import CountingDataWriter, DataWriter, DataWriterBuilder
from gobblin_py.sdk.states import WorkUnitState

_WRITERS: dict[str, tuple[type[StagedFileWriter], str]] = {
    "avro": (AvroDataWriter, "avro"), "parquet": (ParquetDataWriter, "parquet"), "orc": (OrcDataWriter, "orc")}


class PartFile:
    """One output file of a compaction, staged under a ``_tmp_`` name (``tag`` tells concurrent writers' apart)
    and named ``part-r-<records>.<stamp>.<n>.<ext>`` once complete."""

    def __init__(self, fs: Any, folder: str, fmt: str, schema: pa.Schema, stamp: str, n: int, tag: str = "") -> None:
        cls, self.ext = _WRITERS[fmt]
        self.fs, self.folder, self.stamp, self.n = fs, folder, stamp, n
        staging = posixpath.join(folder, f"{fsutil.TEMP_PREFIX}part{tag}.{self.ext}")
        output = posixpath.join(folder, f"{fsutil.TEMP_PREFIX}done{tag}.{self.ext}")
        self.file = cls(fs, staging, output, schema)
        self.records = 0

    def write(self, batch: pa.RecordBatch) -> None:
        self.file.write(batch)
        self.records += batch.num_rows

    def commit(self) -> tuple[str, int]:
        """The final file's path and size."""
        final = posixpath.join(self.folder, f"part-r-{self.records}.{self.stamp}.{self.n}.{self.ext}")
        for path in self.file.commit():
            self.fs.mv(path, final)
        return final, int(self.fs.size(final))

    def cleanup(self) -> None:
        self.file.cleanup()


class CompactionWriter(CountingDataWriter):
    """Writes one dataset's compacted records (see the module); writes nothing for a late-files-only action."""

    def __init__(self, state: WorkUnitState, schema: pa.Schema, writer_id: str) -> None:
        self.schema = schema
        self.active = state.get_prop(MODE_KEY) == "compact"
        self.format = state.get_prop(FORMAT_KEY) or "avro"
        self.folder = state.get_prop(NEW_KEY) or ""
        self.stamp = state.get_prop(INIT_KEY) or "0"
        self.writer_id = writer_id
        self.fs: Any
        self.fs, self.root = fsutil.open_fs(self.folder) if self.active else (None, "")
        self._file: PartFile | None = None
        if self.active:
            if self.fs.exists(self.root):
                fsutil.remove_tree(self.fs, self.root)
            fsutil.makedirs(self.fs, self.root)

    def write(self, batch: pa.RecordBatch) -> None:
        if not self.active or batch.num_rows == 0:
            return
        if self._file is None:
            self._file = PartFile(self.fs, self.root, self.format, self.schema, self.stamp, 0)
        self._file.write(batch)
        self._records += batch.num_rows

    def commit(self) -> list[str]:
        if self._file is None:
            return []
        final, size = self._file.commit()
        self._bytes += size
        return [final]

    def cleanup(self) -> None:
        if self._file is not None:
            self._file.cleanup()


class CompactionWriterBuilder(DataWriterBuilder):
    """Builds the :class:`CompactionWriter` of a compaction task."""

    def build(self, state: WorkUnitState, schema: pa.Schema, branches: int, branch: int, writer_id: str) -> DataWriter:
        return CompactionWriter(state, schema, writer_id)
