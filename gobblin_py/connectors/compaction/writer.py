"""The compaction writer: a dataset's records, in its input's format, into the hidden folder beside its
destination (``.<time>.gpy-new``) that the publisher's commit swaps in.

The folder is made afresh by each attempt (what a crashed or failed one left there goes first); its files are
staged under ``_tmp_`` names and, once complete, named as Gobblin's compaction names its reducer output:
``part-r-<records>.<run start ms>.<n>.<ext>``.

Encoding is what a one-machine compaction spends most of its time on, and one file's encoder uses one core. So
records are gathered into groups of :data:`GROUP_BYTES` and the groups dealt in turn to :data:`LANES` files, each
encoded on a thread of its own (pyarrow's encoders let go of Python's interpreter lock): a dataset of one group
gets one file, a larger one a file per lane (as Gobblin's job gets a file per reducer). At most one group per lane
waits to be encoded, so memory stays bounded.
"""

from __future__ import annotations

import posixpath
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pyarrow as pa

from gobblin_py.connectors.compaction.unit_keys import FORMAT_KEY, INIT_KEY, MODE_KEY, NEW_KEY
from gobblin_py.formats.avro import AvroDataWriter
from gobblin_py.formats.base import StagedFileWriter
from gobblin_py.formats.orc import OrcDataWriter
from gobblin_py.formats.parquet import ParquetDataWriter
from gobblin_py.formats.settings import DEFAULT_PARQUET_BLOCK_SIZE
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


LANES = 2  # files encoded at once
GROUP_BYTES = DEFAULT_PARQUET_BLOCK_SIZE  # Arrow bytes dealt to a lane at a time (a Parquet row group's worth)


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
        self._files: list[PartFile] = []
        self._pending: list[Future[None] | None] = []  # each lane's group being encoded
        self._pool: ThreadPoolExecutor | None = None
        self._group: list[pa.RecordBatch] = []
        self._group_bytes = 0
        self._dealt = 0
        if self.active:
            if self.fs.exists(self.root):
                fsutil.remove_tree(self.fs, self.root)
            fsutil.makedirs(self.fs, self.root)

    def write(self, batch: pa.RecordBatch) -> None:
        if not self.active or batch.num_rows == 0:
            return
        self._group.append(batch)
        self._group_bytes += batch.nbytes
        self._records += batch.num_rows
        if self._group_bytes >= GROUP_BYTES:
            self._deal()

    def _deal(self) -> None:
        """Hand the gathered group to the next lane, once that lane's last group is encoded."""
        group, self._group, self._group_bytes = self._group, [], 0
        lane = self._dealt % LANES
        self._dealt += 1
        if lane == len(self._files):
            self._files.append(PartFile(self.fs, self.root, self.format, self.schema, self.stamp, lane, f"-{lane}"))
            self._pending.append(None)
        self._wait(lane)
        if self._pool is None:
            self._pool = ThreadPoolExecutor(LANES, thread_name_prefix="gpy-compaction-write")
        self._pending[lane] = self._pool.submit(self._encode, self._files[lane], group)

    @staticmethod
    def _encode(file: PartFile, group: list[pa.RecordBatch]) -> None:
        for batch in group:
            file.write(batch)

    def _wait(self, lane: int) -> None:
        pending, self._pending[lane] = self._pending[lane], None
        if pending is not None:
            pending.result()

    def commit(self) -> list[str]:
        if self._group:
            self._deal()
        try:
            for lane in range(len(self._files)):
                self._wait(lane)
        finally:
            self._shutdown()
        written = []
        for file in self._files:
            final, size = file.commit()
            self._bytes += size
            written.append(final)
        return written

    def cleanup(self) -> None:
        self._shutdown()
        for file in self._files:
            file.cleanup()

    def _shutdown(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)  # a lane still encoding finishes before its file is touched
            self._pool = None


class CompactionWriterBuilder(DataWriterBuilder):
    """Builds the :class:`CompactionWriter` of a compaction task."""

    def build(self, state: WorkUnitState, schema: pa.Schema, branches: int, branch: int, writer_id: str) -> DataWriter:
        return CompactionWriter(state, schema, writer_id)
