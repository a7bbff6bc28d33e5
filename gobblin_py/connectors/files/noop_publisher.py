"""Publishes nothing (Gobblin's NoopPublisher): for writers that deliver data themselves."""

from __future__ import annotations

from collections.abc import Sequence

from gobblin_py.sdk.contracts import DataPublisher
from gobblin_py.sdk.states import TaskState


class NoopPublisher(DataPublisher):
    """Moves no data; the successful tasks are still committed."""

    def publish(self, task_states: Sequence[TaskState]) -> list[str]:
        return []
