"""A local spool of raw message batches: JSON inference reads a work unit once, infers, then decodes from here.

Batches go to an Arrow IPC file in a temporary folder (``tempfile``'s: ``TMPDIR``), so a
work unit of any size is read from the brokers once with bounded memory; the folder is removed on close.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc

from gobblin_py.connectors.kafka.raw import RawBatch, repeated_int32

SCHEMA = pa.schema([("index", pa.int32()), ("value", pa.binary()), ("offset", pa.int64()), ("timestamp", pa.int64()),
                    ("key", pa.binary())])


class Spool:
    """Raw batches written once and replayed once, in order."""

    def __init__(self, directory: str | None = None) -> None:
        self.directory = tempfile.mkdtemp(prefix="gpy-kafka-spool-", dir=directory)
        self.path = Path(self.directory) / "raw.arrows"
        self._writer = ipc.new_file(str(self.path), SCHEMA)
        self._keys = False

    def append(self, raw: RawBatch) -> None:
        rows = len(raw.values)
        self._keys = self._keys or raw.keys is not None
        keys = raw.keys if raw.keys is not None else pa.nulls(rows, pa.binary())
        index = repeated_int32(raw.index, rows)
        self._writer.write_batch(pa.RecordBatch.from_arrays([index, raw.values, raw.offsets, raw.timestamps, keys],
                                                            schema=SCHEMA))

    def finish(self) -> None:
        self._writer.close()

    def replay(self) -> Iterator[RawBatch]:
        with pa.memory_map(str(self.path)) as source:
            reader = ipc.open_file(source)
            for i in range(reader.num_record_batches):
                batch = reader.get_batch(i)
                if batch.num_rows == 0:
                    continue
                yield RawBatch(batch.column(0)[0].as_py(), batch.column(1), batch.column(2), batch.column(3),
                               batch.column(4) if self._keys else None)

    def close(self) -> None:
        try:
            self._writer.close()
        except Exception:  # noqa: BLE001 - closed already
            pass
        shutil.rmtree(self.directory, ignore_errors=True)
