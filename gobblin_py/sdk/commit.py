"""What a plugin's publisher commits with: the steps of a commit and the delivery semantics.

A publisher returns :class:`CommitStep` objects; the runtime logs them (its commit sequence) and runs each
that has not taken effect yet, so a dataset's data and state commit as one step.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from gobblin_py.sdk.errors import GobblinPyError
from gobblin_py.sdk.settings import Settings, setting

if TYPE_CHECKING:
    from gobblin_py.sdk.states import TaskState, WorkUnitState

SEMANTICS_KEY = "gobblin.runtime.delivery.semantics"
EXACTLY_ONCE, AT_LEAST_ONCE = "EXACTLY_ONCE", "AT_LEAST_ONCE"
FILE_RECORDS_KEY = "writer.output.file.records"  # per branch: {task output file: records}, for reconciliation


@dataclass(frozen=True)
class DeliverySettings(Settings):
    """The delivery semantics of a job's commits.

    A publisher plans its steps by them; where the runtime logs the steps is its own keys
    (:mod:`gobblin_py.runtime.commit.sequence_settings`)."""

    semantics: str = setting(SEMANTICS_KEY, default=EXACTLY_ONCE, choices=(EXACTLY_ONCE, AT_LEAST_ONCE),
                             doc="EXACTLY_ONCE: a dataset's data and state commit as one logged sequence")


def delivery_semantics(props) -> str:
    """``EXACTLY_ONCE`` or ``AT_LEAST_ONCE``."""
    return DeliverySettings.load(props).semantics


# ------------------------------------------------------------------ steps


class CommitStep(ABC):
    """One idempotent part of a commit."""

    kind: str = ""

    @abstractmethod
    def is_completed(self) -> bool:
        """Whether the step has already taken effect."""

    @abstractmethod
    def execute(self, fresh: bool = False) -> None:
        """Make the step take effect; safe to repeat. ``fresh``: the commit was just logged by this run."""

    @abstractmethod
    def to_json(self) -> dict[str, Any]:
        """The step as JSON (with ``kind``)."""

    def describe(self) -> str:
        return self.kind


@runtime_checkable
class ReportsCommit(Protocol):
    """A step that makes something a person looks for (a table's snapshot, a Delta version): once it has run (or
    found itself done), :meth:`committed` says what, as the run's summary, history and metrics show it."""

    def committed(self) -> str | None:
        """What the step made, e.g. ``iceberg://gpy/shop.orders snapshot 8046…``; None before it ran."""


def step_class_path(step: CommitStep) -> str:
    """``module:Class`` of a step, for its JSON's ``class``: how a later run rebuilds a plugin's step."""
    cls = type(step)
    return f"{cls.__module__}:{cls.__qualname__}"


class PublishConflictError(GobblinPyError):
    """A file to publish already exists at its destination (gpy never overwrites published data)."""


@runtime_checkable
class PreflightPublisher(Protocol):
    """A publisher that checks its destinations once the work is planned and before any task runs: a table that
    exists with another partitioning than the job's, say. ``preflight`` raises :class:`UsageError` to stop the
    run (exit 2, nothing done); what it cannot find out there (a catalog down) it leaves to ``plan``."""

    def preflight(self, work_units: Sequence[WorkUnitState]) -> None: ...


@runtime_checkable
class ChecksPublishing(Protocol):
    """An exactly-once publisher that verifies what it publishes: ``published_check`` gives, for the steps its
    ``plan`` returned, the step that counts each published file against the records its task wrote (None when
    there is nothing to count), or raises RecordsLost at once for a counted file no step publishes. The runtime
    runs that step after the moves and before the dataset's state is saved, in the same commit sequence."""

    def published_check(self, urn: str, task_states: Sequence[TaskState],
                        steps: Sequence[CommitStep]) -> CommitStep | None: ...
