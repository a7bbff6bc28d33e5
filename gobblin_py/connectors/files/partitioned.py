"""The partitioned writer (``writer.partitioner.class``): one inner writer per partition folder.

Per batch, the partitioner's fields are rendered into a partition path per row (Arrow kernels); a batch with
one distinct path goes whole to that partition's writer, otherwise it is stably sorted by path and cut at the
path's run ends (``run_end_encode``), so each partition gets one slice per batch, rows in their original order.
A new partition gets its writer lazily, with the next writer id of the task, writing
``<staging>/<P>/<partition path>/<name>`` and committing to ``<output>/<P>/<partition path>/<name>``; the
job-level publisher moves ``<output>/<P>``'s children, so each partition folder moves as a unit.
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
import pyarrow.compute as pc

from gobblin_py.connectors.files.partitioners import normalise_path, render_paths
from gobblin_py.connectors.files.writer_parts import clean_up_all
from gobblin_py.sdk.contracts import CountedOutput, DataWriter
from gobblin_py.sdk.partitioner import WriterPartitioner


class PartitionedDataWriter(DataWriter):
    """Routes rows to ``make_writer(partition_path)`` writers (built on a partition's first row)."""

    def __init__(self, partitioner: WriterPartitioner, make_writer: Callable[[str], DataWriter],
                 include_names: bool = False, replace_separators: bool = False) -> None:
        self.partitioner = partitioner
        self.make_writer = make_writer
        self.include_names = include_names
        self.replace_separators = replace_separators
        self.writers: dict[str, DataWriter] = {}
        self._normalised: dict[str, str] = {}

    def _writer(self, raw_path: str) -> DataWriter:
        path = self._normalised.get(raw_path)
        if path is None:
            path = self._normalised[raw_path] = normalise_path(raw_path)
        writer = self.writers.get(path)
        if writer is None:
            writer = self.writers[path] = self.make_writer(path)
        return writer

    def partition_paths(self, batch: pa.RecordBatch) -> pa.Array:
        """The raw partition path of every row of ``batch``."""
        fields = self.partitioner.partition(batch)
        return render_paths(fields, batch.num_rows, self.include_names, self.replace_separators)

    def write(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows == 0:
            return
        keys = self.partition_paths(batch)
        distinct = pc.unique(keys)
        if len(distinct) == 1:
            self._writer(distinct[0].as_py()).write(batch)
            return
        order = pc.sort_indices(keys)  # stable: rows of a partition keep their order
        ordered = batch.take(order)
        runs = pc.run_end_encode(keys.take(order))
        start = 0
        for end, raw in zip(runs.run_ends.to_pylist(), runs.values.to_pylist(), strict=True):
            self._writer(raw).write(ordered.slice(start, end - start))
            start = end

    def commit(self) -> list[str]:
        outputs: list[str] = []
        for writer in self.writers.values():
            outputs.extend(writer.commit())
        return outputs

    def file_records(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for writer in self.writers.values():
            if isinstance(writer, CountedOutput):
                counts.update(writer.file_records())
        return counts

    def cleanup(self) -> None:
        clean_up_all(self.writers.values())

    @property
    def partitions(self) -> list[str]:
        return sorted(self.writers)

    @property
    def records_written(self) -> int:
        return sum(w.records_written for w in self.writers.values())

    @property
    def bytes_written(self) -> int:
        return sum(w.bytes_written for w in self.writers.values())
