"""Target-file-size rolling: a writer that closes its file when it reaches ``writer.target.file.size`` bytes.

Gobblin's writers have no size-based rolling (only compaction has a target output size), so the key is
gpy's own. Each file gets the next writer id of the task (``part.<taskId>_<k>.<ext>``, k + 1 per new file,
shared with the partitioned writer's per-partition ids); rolled files stay in staging until ``commit``, which
moves all of them; ``cleanup`` deletes whatever is still staged. A batch bigger than the room left is split
at a row count estimated from the bytes per row seen so far, so files end close to the target; formats that
buffer (an ORC stripe, an Avro block, a gzip window) can overshoot by about that buffer.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pyarrow as pa

from gobblin_py.connectors.files.writer_parts import clean_up_all
from gobblin_py.formats.base import StagedFileWriter
from gobblin_py.sdk.contracts import DataWriter

TARGET_FILE_SIZE_KEY = "writer.target.file.size"

_TRAILING_K = re.compile(r"^(?P<base>.+)_(?P<k>\d+)$")


class WriterIds:
    """Writer ids of one task branch: the given one first, then ``<base>_<k+1>``, ``<base>_<k+2>``, …

    The task passes ``<taskId>_0`` (Gobblin's partitioned-writer id for the first writer), whose trailing
    ``_<k>`` is counted on; an id that does not end in ``_<digits>`` continues as ``<id>_1``, ``<id>_2``, …
    """

    def __init__(self, first: str) -> None:
        match = _TRAILING_K.match(first)
        self.first = first
        self.base, self.k = (match.group("base"), int(match.group("k"))) if match else (first, 0)
        self.issued = 0

    def next(self) -> str:
        self.issued += 1
        if self.issued == 1:
            return self.first
        self.k += 1
        return f"{self.base}_{self.k}"


class RollingDataWriter(DataWriter):
    """Writes through a sequence of files opened by ``open_file(sequence)``; a new one once the target is hit."""

    def __init__(self, open_file: Callable[[int], StagedFileWriter], target_size: int | None = None) -> None:
        self.open_file = open_file
        self.target_size = target_size
        self.files: list[StagedFileWriter] = []
        self._current: StagedFileWriter | None = None

    def _bytes_per_row(self, batch: pa.RecordBatch) -> float:
        closed = [f for f in self.files if f is not self._current]
        records = sum(f.records_written for f in closed)
        if records:
            return sum(f.bytes_written for f in closed) / records
        current = self._current
        if current is not None and current.records_written and current.size:
            return current.size / current.records_written
        return batch.nbytes / max(batch.num_rows, 1)

    def write(self, batch: pa.RecordBatch) -> None:
        offset, rows = 0, batch.num_rows
        while offset < rows:
            if self._current is None:
                self._current = self.open_file(len(self.files))
                self.files.append(self._current)
            take = rows - offset
            if self.target_size:
                room = self.target_size - self._current.size
                per_row = self._bytes_per_row(batch)
                if per_row > 0:
                    take = max(1, min(take, int(room / per_row)))
            self._current.write(batch.slice(offset, take) if take < rows else batch)
            offset += take
            if self.target_size and self._current.size >= self.target_size:
                self._current.close()
                self._current = None

    def commit(self) -> list[str]:
        outputs: list[str] = []
        for file in self.files:
            outputs.extend(file.commit())
        return outputs

    def file_records(self) -> dict[str, int]:
        return {path: count for file in self.files for path, count in file.file_records().items()}

    def cleanup(self) -> None:
        clean_up_all(self.files)

    @property
    def records_written(self) -> int:
        return sum(f.records_written for f in self.files)

    @property
    def bytes_written(self) -> int:
        return sum(f.bytes_written for f in self.files)
