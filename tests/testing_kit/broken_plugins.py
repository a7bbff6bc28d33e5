"""Built-in plugins with exactly one defect each, for proving that the contract kit notices it.

Each is a small subclass of a real built-in (the file source, the file writer builder, the file publisher) that
breaks one promise and keeps every other; tests/testing_kit/test_kit_catches_broken_plugins.py runs the kit's
suites over them and expects the suite to fail on that promise.
"""

from __future__ import annotations

import os
import posixpath
import shutil
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa

from gobblin_py.connectors.files.builder import FsDataWriterBuilder
from gobblin_py.connectors.files.file_extractor import FileExtractor
from gobblin_py.connectors.files.file_startpoints import Start
from gobblin_py.connectors.files.filebased import FileBasedSource
from gobblin_py.connectors.files.publisher import BaseDataPublisher
from gobblin_py.io.rename_step import FsRenameStep
from gobblin_py.sdk.commit import CommitStep, step_class_path
from gobblin_py.sdk.contracts import DataWriter, Extractor
from gobblin_py.sdk.run_states import SourceState
from gobblin_py.sdk.states import WorkUnit, WorkUnitState
from gobblin_py.store.startpoints import Startpoint, StartpointKind

# ---------------------------------------------------------------------- sources


class RowDroppingExtractor(FileExtractor):
    """Reads its files but loses the first row of the first batch."""

    _dropped = False

    def read_batches(self) -> Iterator[pa.RecordBatch]:
        for batch in super().read_batches():
            if not self._dropped and batch.num_rows:
                self._dropped = True
                batch = batch.slice(1)
            yield batch


class RowDroppingSource(FileBasedSource):
    """The file source whose extractor drops one row of every work unit."""

    def get_extractor(self, state: WorkUnitState) -> Extractor:
        return RowDroppingExtractor(state)


class RereadingSource(FileBasedSource):
    """The file source that ignores what earlier runs committed: every run reads every file again."""

    def get_workunits(self, state: SourceState) -> list[WorkUnit]:
        return super().get_workunits(SourceState(state.all_properties()))


class ValueStartpointIgnoringSource(FileBasedSource):
    """The file source that takes a ``--value`` startpoint (and consumes it) but goes on from its own snapshot."""

    def _start(self, startpoint: Startpoint, seen: set[str], listed: dict[str, int], previous: Any, urn: str,
               event_column: str | None) -> Start:
        if startpoint.kind is StartpointKind.SPECIFIC:
            return Start(seen)
        return super()._start(startpoint, seen, listed, previous, urn, event_column)


# ---------------------------------------------------------------------- writers


class OutputFolderWriterBuilder(FsDataWriterBuilder):
    """The file writer builder whose files are written straight into the output folder: no staging."""

    def build(self, state: WorkUnitState, schema: pa.Schema, branches: int, branch: int, writer_id: str) -> DataWriter:
        state.set_prop("writer.staging.dir", state.get_prop("writer.output.dir"))
        return super().build(state, schema, branches, branch, writer_id)


class ArrowBytesWriter(DataWriter):
    """A file writer that reports the bytes of the Arrow batches it was given, not of the files it wrote."""

    def __init__(self, inner: DataWriter) -> None:
        self.inner = inner
        self.arrow_bytes = 0

    def write(self, batch: pa.RecordBatch) -> None:
        self.arrow_bytes += batch.nbytes
        self.inner.write(batch)

    def commit(self) -> list[str]:
        return self.inner.commit()

    def cleanup(self) -> None:
        self.inner.cleanup()

    @property
    def records_written(self) -> int:
        return self.inner.records_written

    @property
    def bytes_written(self) -> int:
        return self.arrow_bytes


class ByteMiscountingWriterBuilder(FsDataWriterBuilder):
    """The file writer builder whose writers miscount the bytes they wrote."""

    def build(self, state: WorkUnitState, schema: pa.Schema, branches: int, branch: int, writer_id: str) -> DataWriter:
        return ArrowBytesWriter(super().build(state, schema, branches, branch, writer_id))


# ---------------------------------------------------------------------- publishers


class CopyAsideStep(CommitStep):
    """Copies a task output file next to its final place under another name (``again-<name>``)."""

    kind = "copy_aside"

    def __init__(self, src: str, dst: str) -> None:
        self.src, self.dst = src, dst

    def is_completed(self) -> bool:
        return os.path.exists(self.dst)

    def execute(self, fresh: bool = False) -> None:
        if os.path.exists(self.src) and not os.path.exists(self.dst):
            os.makedirs(os.path.dirname(self.dst), exist_ok=True)
            shutil.copyfile(self.src, self.dst)

    def to_json(self) -> dict[str, Any]:
        return {"class": step_class_path(self), "kind": self.kind, "src": self.src, "dst": self.dst}

    @classmethod
    def from_json(cls, item: dict[str, Any], props: dict[str, str]) -> CopyAsideStep:
        return cls(item["src"], item["dst"])


class TwicePublishingPublisher(BaseDataPublisher):
    """The file publisher that publishes every file twice: a copy under another name, then the file itself."""

    def plan(self, task_states: Sequence[Any], allow_replace: bool = False) -> list[CommitStep]:  # type: ignore[override]
        steps: list[CommitStep] = []
        for step in super().plan(task_states, allow_replace):
            if isinstance(step, FsRenameStep):
                folder, name = posixpath.split(step.dst)
                steps.append(CopyAsideStep(step.src, posixpath.join(folder, f"again-{name}")))
            steps.append(step)
        return steps
