"""gpy's built-in task-level policies; the runtime evaluates the task policies a job names
(``qualitychecker.task.policies``) on each branch when it commits."""

from __future__ import annotations

import json
from dataclasses import dataclass

from gobblin_py.sdk.contracts import FAILED, NOT_EVALUATED, PASSED, TaskPolicy, TaskPolicyResult
from gobblin_py.sdk.settings import Settings, setting
from gobblin_py.sdk.states import State


def _long(state: State, key: str) -> int | None:
    value = state.get_prop(key)
    try:
        return None if value is None else int(value)
    except ValueError:
        return None


class RowCountPolicy(TaskPolicy):
    """PASSED when the branch wrote as many rows as the extractor expected (NOT_EVALUATED if it could not tell)."""

    def evaluate(self, state: State) -> TaskPolicyResult:
        expected, written = _long(state, "qualitychecker.rows.expected"), _long(state, "qualitychecker.rows.written")
        if expected is None or written is None or expected < 0:
            return NOT_EVALUATED
        return PASSED if expected == written else FAILED


@dataclass(frozen=True)
class RowCountRangeSettings(Settings):
    """The key of :class:`RowCountRangePolicy`."""

    range: float = setting("qualitychecker.row.count.range", required=True, minimum=0,
                           doc="allowed |written - expected| / expected")


class RowCountRangePolicy(TaskPolicy):
    """PASSED when |written − expected| / expected ≤ ``qualitychecker.row.count.range``."""

    settings_class = RowCountRangeSettings

    def init(self, state: State) -> None:
        self.range = RowCountRangeSettings.load(state).range

    def evaluate(self, state: State) -> TaskPolicyResult:
        expected, written = _long(state, "qualitychecker.rows.expected"), _long(state, "qualitychecker.rows.written")
        if expected is None or written is None or expected < 0:
            return NOT_EVALUATED
        if expected == 0:
            return PASSED if written == 0 else FAILED
        return PASSED if abs(written - expected) / expected <= self.range else FAILED


class SchemaCompatibilityPolicy(TaskPolicy):
    """PASSED when the branch's output schema equals the previous run's for the dataset (or there is none)."""

    def evaluate(self, state: State) -> TaskPolicyResult:
        previous, current = state.get_prop("previous.extract.schema"), state.get_prop("extract.schema")
        if not previous or current is None:
            return PASSED
        return PASSED if json.loads(previous) == json.loads(current) else FAILED
