"""The plugin contracts: what a Source, Extractor, Converter, DataWriter and DataPublisher provide.

Records travel as Apache Arrow record batches, so the hot path stays vectorised. Gobblin-style per-record
plugins (a converter with ``convert_record(schema, record)``) are supported through an adapter that turns a
batch into Python dicts and back: that is the slow path (the runtime wraps such a converter itself).

Plugins are plain classes built with no arguments and configured through ``init(state)``, so that a class
named in a job file by dotted path (or by its Gobblin Java name) can be constructed on any executor.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

import pyarrow as pa

if TYPE_CHECKING:
    from gobblin_py.sdk.commit import CommitStep
    from gobblin_py.sdk.config_errors import ConfigError
    from gobblin_py.sdk.run_states import SourceState
    from gobblin_py.sdk.settings import Settings
    from gobblin_py.sdk.states import TaskState, WorkUnit, WorkUnitState


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

    def close(self) -> None:  # noqa: B027 - an optional hook (a no-op)
        """Release resources; the place to set the actual high watermark on the work unit state."""


class Source(ABC):
    """Plans a run (work units) on the driver, and opens an Extractor for each work unit on an executor."""

    @abstractmethod
    def get_workunits(self, state: SourceState) -> list[WorkUnit]:
        """Work units (or MultiWorkUnits) for this run; an empty list means there is nothing to do."""

    @abstractmethod
    def get_extractor(self, state: WorkUnitState) -> Extractor:
        """An extractor for one work unit; called on a fresh Source instance inside the task."""

    def shutdown(self, state: SourceState) -> None:  # noqa: B027 - an optional hook (a no-op)
        """Called once on the driver at the end of the job."""


class Converter(ABC):
    """Turns batches into batches (vectorised); built and ``init``-ed once per task."""

    def init(self, state: WorkUnitState) -> None:  # noqa: B027 - an optional hook (a no-op)
        """Read configuration from the task state (use ``gobblin_py.sdk.branches`` for branch keys)."""

    @abstractmethod
    def convert_schema(self, schema: pa.Schema, state: WorkUnitState) -> pa.Schema:
        """The output schema for ``schema``."""

    @abstractmethod
    def convert_batch(self, batch: pa.RecordBatch, state: WorkUnitState) -> pa.RecordBatch | Iterable[pa.RecordBatch]:
        """Convert one batch; may return one batch or any number of them (none filters the batch out)."""

    def close(self) -> None:  # noqa: B027 - an optional hook (a no-op)
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


class CountingDataWriter(DataWriter):
    """A writer that keeps its counts in ``_records`` (records written) and ``_bytes`` (bytes of committed
    output) and reports them as such."""

    _records: int = 0
    _bytes: int = 0

    @property
    def records_written(self) -> int:
        return self._records

    @property
    def bytes_written(self) -> int:
        return self._bytes


class DataWriterBuilder(ABC):
    """Builds the writer of one task branch (``writer.builder.class``)."""

    @abstractmethod
    def build(self, state: WorkUnitState, schema: pa.Schema, branches: int, branch: int, writer_id: str) -> DataWriter:
        """A writer for branch ``branch`` of ``branches`` with file-name id ``writer_id``."""


class DataPublisher(ABC):
    """Moves the committed output of a dataset's tasks to its final place (``data.publisher.type``).

    ``marks_final_folders``: what it publishes lands under ``data.publisher.final.dir`` with names new to each run,
    so a run that lost the job's state, or another job, would publish it all again beside it; the runtime then
    marks each final folder with the job (the first job to publish there owns it) and refuses such a run (a
    publisher that never replaces or repeats a name, or publishes elsewhere, leaves it false).
    """

    marks_final_folders: bool = False

    def init(self, job_props: dict[str, str]) -> None:  # noqa: B027 - an optional hook (a no-op)
        """Read job-level configuration."""

    @abstractmethod
    def publish(self, task_states: Sequence[TaskState]) -> list[str]:
        """Publish every SUCCESSFUL task's output; returns the final directories written. Raise to fail."""


def plugin_name(obj: Any) -> str:
    """``module.Class`` of a plugin instance or class, for messages."""
    cls = obj if isinstance(obj, type) else type(obj)
    return f"{cls.__module__}.{cls.__qualname__}"


class ForkBranchMismatchError(Exception):
    """A fork operator answered with a different number of branches than it declared."""

    def __init__(self, operator: object, what: str, got: int, expected: int) -> None:
        super().__init__(
            f"fork operator {plugin_name(operator)}: number of forked {what} [{got}] is not equal to "
            f"number of branches [{expected}]"
        )


class ForkOperator(ABC):
    """Routes a task's schema and records to branches (``fork.operator.class``).

    The fast path is :meth:`fork_batch`: one boolean mask (or a plain bool for "all"/"none") per branch for a
    whole batch. The default implementation calls :meth:`fork_data_record` once per record — the slow path.
    The operator never copies data: Arrow batches are immutable and shared by the branches.
    """

    routes_everything: ClassVar[bool] = False  # True: every batch goes whole to every branch (fork_batch is skipped)

    def init(self, state: WorkUnitState) -> None:  # noqa: B027 - an optional hook (a no-op)
        """Read configuration."""

    @abstractmethod
    def get_branches(self, state: WorkUnitState) -> int:
        """How many branches the task has."""

    def fork_schema(self, state: WorkUnitState, schema: pa.Schema) -> list[bool]:
        """Which branches get this schema (a branch without it gets no records and writes nothing)."""
        return [True] * self.get_branches(state)

    def fork_data_record(self, state: WorkUnitState, record: dict) -> list[bool]:
        """Which branches get one record (per-record form)."""
        raise NotImplementedError(f"{plugin_name(self)} implements neither fork_batch nor fork_data_record")

    def fork_batch(self, state: WorkUnitState, batch: pa.RecordBatch) -> list[pa.BooleanArray | bool]:
        """One mask per branch for a whole batch (vectorised form)."""
        branches = self.get_branches(state)
        rows = [self.fork_data_record(state, record) for record in batch.to_pylist()]
        for answer in rows:
            if len(answer) != branches:
                raise ForkBranchMismatchError(self, "data records", len(answer), branches)
        return [pa.array([bool(r[i]) for r in rows], pa.bool_()) for i in range(branches)]

    def close(self) -> None:  # noqa: B027 - an optional hook (a no-op)
        """Release resources."""


class RowPolicy(ABC):
    """A row-level quality policy (``qualitychecker.row.policies``): which rows of a batch pass."""

    def init(self, state: WorkUnitState) -> None:  # noqa: B027 - an optional hook (a no-op)
        """Read configuration."""

    @abstractmethod
    def check_batch(self, batch: pa.RecordBatch, state: WorkUnitState) -> pa.BooleanArray:
        """True for each row that passes (vectorised)."""


class TaskPolicyResult(str):
    """PASSED, FAILED or NOT_EVALUATED."""


PASSED = TaskPolicyResult("PASSED")
FAILED = TaskPolicyResult("FAILED")
NOT_EVALUATED = TaskPolicyResult("NOT_EVALUATED")


class TaskPolicy(ABC):
    """A task-level quality policy (``qualitychecker.task.policies``), evaluated on a branch when it commits."""

    def init(self, state: WorkUnitState) -> None:  # noqa: B027 - an optional hook (a no-op)
        """Read configuration."""

    @abstractmethod
    def evaluate(self, state: WorkUnitState) -> TaskPolicyResult:
        """PASSED, FAILED or NOT_EVALUATED for the branch whose counters ``state`` holds."""


# ---------------------------------------------------------------------------------------------------------------
# Optional abilities. A plugin has one when it defines the members below; the runtime asks with ``isinstance``
# (the protocols are runtime-checkable), so a plugin need not subclass them.


class StandaloneJob(ABC):
    """A job that is no ingestion pipeline, named by ``job.class`` (Gobblin's ``DatasetCleanerJob``): no source,
    writers or publisher; ``run`` does all its work. It declares its keys (``settings_class``) and checks them
    with ``validate`` like any plugin; ``plugin_keys`` are the keys of its own that name classes."""

    settings_class: ClassVar[type[Settings]]
    plugin_keys: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def validate(cls, props: Mapping[str, str]) -> list[ConfigError]:
        return []

    @abstractmethod
    def run(self, props: Mapping[str, str], dry_run: bool) -> list[str]:
        """Do the job (``dry_run``: say what it would do, change nothing); the lines of its report."""


@runtime_checkable
class Configurable(Protocol):
    """Declares its keys: ``settings_class`` is a :class:`gobblin_py.sdk.settings.Settings` dataclass.

    The runtime checks those keys before any work starts, and ``gpy plugins`` / ``gpy validate --explain`` and
    the docs' key tables are generated from the declaration.
    """

    settings_class: ClassVar[type[Settings]]


@runtime_checkable
class Validating(Protocol):
    """Checks what its declared settings cannot say alone (keys that depend on each other, a reachable path).

    ``validate`` is a class method, called on the driver before any work with the job's properties; it returns
    every problem found (an empty list when there is none).
    """

    @classmethod
    def validate(cls, props: Mapping[str, str]) -> list[ConfigError]: ...


@runtime_checkable
class Initializable(Protocol):
    """Reads its configuration from a state once built (``init(state)``)."""

    def init(self, state: Any) -> None: ...


@runtime_checkable
class Closeable(Protocol):
    """Holds resources to release at the end of the task (``close()``)."""

    def close(self) -> None: ...


@runtime_checkable
class ExactlyOncePublisher(Protocol):
    """Publishes exactly once: ``plan`` returns the commit steps without making them, and ``final_dirs`` names
    where they land. The runtime logs the steps with the dataset's new state as one commit sequence, then runs
    them. A publisher without ``plan`` publishes at least once."""

    final_dirs: list[str]

    def plan(self, task_states: Sequence[TaskState]) -> list[CommitStep]: ...


@runtime_checkable
class BatchForkOperator(Protocol):
    """Routes whole batches: one boolean mask (or a plain bool) per branch (the fast path)."""

    def fork_batch(self, state: WorkUnitState, batch: pa.RecordBatch) -> list[pa.BooleanArray | bool]: ...


@runtime_checkable
class RecordForkOperator(Protocol):
    """Routes one record at a time (Gobblin's per-record form; the slow path)."""

    def get_branches(self, state: WorkUnitState) -> int: ...

    def fork_data_record(self, state: WorkUnitState, record: dict) -> list[bool]: ...


@runtime_checkable
class CountedOutput(Protocol):
    """A writer that says, once committed, how many records each output file holds (``{path: records}``); the
    publisher checks the files against it before publishing (reconciliation)."""

    def file_records(self) -> dict[str, int]: ...


@runtime_checkable
class RecordConverter(Protocol):
    """A Gobblin-style per-record converter, run through an adapter (the slow path)."""

    def convert_record(self, schema: Any, record: dict, *state: Any) -> Any: ...


@runtime_checkable
class DeclaresRecordSchema(Protocol):
    """A per-record converter that gives its output schema up front (``convert_schema(schema[, state])``, a
    ``pyarrow.Schema``); without it, the adapter infers the schema from the first records converted."""

    def convert_schema(self, schema: Any, *state: Any) -> Any: ...


@runtime_checkable
class RecordRowPolicy(Protocol):
    """A per-record row policy, run through an adapter (the slow path)."""

    def check_record(self, record: dict) -> bool: ...


@runtime_checkable
class RecordPartitioner(Protocol):
    """A per-record writer partitioner (``partition_for_record(record) -> dict``), run through an adapter."""

    def partition_for_record(self, record: dict) -> dict | None: ...


@runtime_checkable
class BatchPartitioner(Protocol):
    """A vectorised writer partitioner: ``partition(batch)`` gives per-row partition values."""

    def partition(self, batch: pa.RecordBatch) -> list: ...


@dataclass(frozen=True)
class EmptyPlan:
    """Why a Source planned no work unit, in a few words an operator acts on (``reason``), and whether it found
    nothing at all to pull (``nothing_found``: a pattern matching no file, an empty list of files or tables) or
    only nothing new (everything it found was pulled before: the normal incremental case)."""

    reason: str
    nothing_found: bool = False


@runtime_checkable
class ExplainsEmptyPlan(Protocol):
    """A Source that says why its last ``get_workunits`` (on the same instance) planned nothing; None when it
    cannot tell. The run summary and the run history show the reason; finding nothing at all on a job's first run
    is a warning, and an error under ``job.fail.on.empty``."""

    def explain_empty_plan(self) -> EmptyPlan | None: ...


@dataclass
class PartitionProgress:
    """What a task read of one partition: from which watermark to which, how many records, their event times.

    ``low`` and ``high`` are the partition's watermark values (an offset, an id, a time: a number or text) before
    and after the task; event times are epoch milliseconds (None when the records carry none). The runtime keeps,
    per partition, the committed event-time progress (the completeness watermark) and pairs of (watermark, event
    time) that resolve a TIMESTAMP startpoint to a watermark.
    """

    low: Any
    high: Any
    records: int = 0
    min_event_ms: int | None = None
    max_event_ms: int | None = None


@runtime_checkable
class ProgressReporting(Protocol):
    """An extractor that reports, after reading, what it read of each partition of its work unit."""

    def partition_progress(self) -> dict[str, PartitionProgress]: ...


@runtime_checkable
class TimestampFiltering(Protocol):
    """An extractor that itself drops records whose event time is before a replay's start time."""

    def filter_before(self, timestamp_ms: int) -> None: ...


@runtime_checkable
class RowCountChanging(Protocol):
    """A converter that may emit fewer or more rows than it receives (a filter, a sampler, an exploder).

    The runtime reconciles a task's counts: a converter without this declaration that changes the number of rows
    has lost (or invented) records, and fails the task.
    """

    changes_row_count: bool


def supports(plugin: object, ability: type) -> bool:
    """Whether a plugin (an instance or its class) has an optional ability (one of the protocols above)."""
    return isinstance(plugin, ability)
