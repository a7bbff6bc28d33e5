"""What a Source declares to start a dataset where an operator asks (``gpy state startpoint``) instead of at its
checkpointed watermark: the kinds it supports, and optionally how it checks a startpoint and what its data holds.

The runtime checks each with ``isinstance`` on the source's class (they are class attributes and class methods:
a startpoint is checked before any source is built). A startpoint is a
:class:`gobblin_py.store.startpoints.Startpoint`; the store is a layer above the SDK, so it is typed ``Any`` here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Protocol, runtime_checkable


@runtime_checkable
class StartpointSource(Protocol):
    """A Source that starts a dataset, or one partition of it, where an operator asks instead of at its
    checkpointed watermark; a source without it refuses every startpoint.

    ``startpoint_kinds`` names the kinds it supports (``OLDEST``, ``UPCOMING``, ``TIMESTAMP``, ``SPECIFIC``). While
    planning, it asks :func:`gobblin_py.store.startpoints.startpoint_for` for each partition it plans and marks
    every work unit planned from a startpoint with :func:`gobblin_py.store.startpoints.mark_applied`; the commit
    that publishes the dataset consumes the startpoint. A run that fails or crashes before that keeps it.

    A ``TIMESTAMP`` one replays, never skipping a record not read yet: with none read at or after its time the
    dataset goes on from its checkpoint, and records read for the first time are kept (``filtered=False``).
    """

    startpoint_kinds: ClassVar[frozenset[str]]


@runtime_checkable
class ChecksStartpoints(Protocol):
    """A StartpointSource that checks a startpoint offline, when an operator sets it and again when a run loads
    it: a partition name of its kind (Kafka: a partition number), a ``SPECIFIC`` value of its watermark's type.
    One without it is held to the kind only."""

    @classmethod
    def check_startpoint(cls, props: Mapping[str, str], urn: str, partition: str, point: Any) -> None:
        """Raise :class:`~gobblin_py.sdk.errors.UsageError` unless dataset ``urn`` (partition ``partition``, ""
        for the whole dataset) can start at ``point``."""


@runtime_checkable
class ReportsNewestEvent(Protocol):
    """A StartpointSource whose data says how far it reaches, asked when an operator sets a startpoint: a
    partition the dataset lacks is refused, and so is a ``TIMESTAMP`` after its newest event (it would replay
    nothing)."""

    @classmethod
    def newest_event_ms(cls, props: Mapping[str, str], urn: str, partition: str) -> int | None:
        """The newest event time (epoch ms) of dataset ``urn`` (of its partition ``partition``, when given), None
        when it cannot tell; :class:`~gobblin_py.sdk.errors.UsageError` for a partition it lacks (or records
        without event times)."""
