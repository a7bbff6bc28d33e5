"""The plugin contracts: what a Source, Extractor, Converter, DataWriter and DataPublisher provide.

Records travel as Apache Arrow record batches, so the hot path stays vectorised. Gobblin-style per-record
plugins (a converter with ``convert_record(schema, record)``) are supported through an adapter that turns a
batch into Python dicts and back: that is the slow path (see ``gobblin_py.converters.record_adapter``).

Plugins are plain classes built with no arguments and configured through ``init(state)``, so that a class
named in a job file by dotted path (or by its Gobblin Java name) can be constructed on any executor.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

if TYPE_CHECKING:
    from gobblin_py.state import SourceState, TaskState, WorkUnit, WorkUnitState


class Extractor(ABC):
    """Reads the records of one work unit as Arrow record batches."""

    @abstractmethod
    def get_schema(self) -> pa.Schema:
        """The schema of the batches :meth:`read_batches` yields."""

    @abstractmethod
    def read_batches(self) -> Iterator[pa.RecordBatch]:
        """The work unit's records, in batches of bounded size."""

    def get_expected_record_count(self) -> int:
        """How many records the extractor expects to read; -1 when it cannot tell."""
        return -1

    def close(self) -> None:
        """Release resources; the place to set the actual high watermark on the work unit state."""


class Source(ABC):
    """Plans a run (work units) on the driver, and opens an Extractor for each work unit on an executor."""

    @abstractmethod
    def get_workunits(self, state: "SourceState") -> list["WorkUnit"]:
        """Work units (or MultiWorkUnits) for this run; an empty list means there is nothing to do."""

    @abstractmethod
    def get_extractor(self, state: "WorkUnitState") -> Extractor:
        """An extractor for one work unit; called on a fresh Source instance inside the task."""

    def shutdown(self, state: "SourceState") -> None:
        """Called once on the driver at the end of the job."""


class Converter(ABC):
    """Turns batches into batches (vectorised); built and ``init``-ed once per task."""

    def init(self, state: "WorkUnitState") -> None:
        """Read configuration from the task state (use ``gobblin_py.config.branches`` for branch keys)."""

    @abstractmethod
    def convert_schema(self, schema: pa.Schema, state: "WorkUnitState") -> pa.Schema:
        """The output schema for ``schema``."""

    @abstractmethod
    def convert_batch(self, batch: pa.RecordBatch, state: "WorkUnitState") -> pa.RecordBatch | Iterable[pa.RecordBatch]:
        """Convert one batch; may return one batch or any number of them (none filters the batch out)."""

    def close(self) -> None:
        """Release resources."""


class DataWriter(ABC):
    """Writes batches to a staging file and, on commit, moves the file to the task output directory."""

    @abstractmethod
    def write(self, batch: pa.RecordBatch) -> None:
        """Write one batch."""

    @abstractmethod
    def commit(self) -> list[str]:
        """Close and move staged output to the output directory; returns the output file paths."""

    @abstractmethod
    def cleanup(self) -> None:
        """Delete whatever is left in staging (always called, after commit or failure)."""

    @property
    @abstractmethod
    def records_written(self) -> int:
        """Records written so far."""

    @property
    @abstractmethod
    def bytes_written(self) -> int:
        """Bytes of committed output."""


class DataWriterBuilder(ABC):
    """Builds the writer of one task branch (``writer.builder.class``)."""

    @abstractmethod
    def build(self, state: "WorkUnitState", schema: pa.Schema, branches: int, branch: int, writer_id: str) -> DataWriter:
        """A writer for branch ``branch`` of ``branches`` with file-name id ``writer_id``."""


class DataPublisher(ABC):
    """Moves the committed output of a dataset's tasks to its final place (``data.publisher.type``)."""

    def init(self, job_props: dict[str, str]) -> None:
        """Read job-level configuration."""

    @abstractmethod
    def publish(self, task_states: Sequence["TaskState"]) -> list[str]:
        """Publish every SUCCESSFUL task's output; returns the final directories written. Raise to fail."""


def plugin_name(obj: Any) -> str:
    """``module.Class`` of a plugin instance or class, for messages."""
    cls = obj if isinstance(obj, type) else type(obj)
    return f"{cls.__module__}.{cls.__qualname__}"
