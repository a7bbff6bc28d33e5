"""Task-level policies (``qualitychecker.task.policies[.N]`` with ``qualitychecker.task.policy.types[.N]``).

Evaluated on each branch when it commits, with the branch's counters (``qualitychecker.rows.expected``,
``qualitychecker.rows.written``) and output schema (``extract.schema``). A branch's status is FAILED if a
``FAIL`` policy failed, else NOT_EVALUATED if a ``FAIL`` policy could not be evaluated, else PASSED;
``OPTIONAL`` policies are reported and never block.

Whether a FAILED status blocks the commit is ``data.quality.enforce.failure``: gobblin_py defaults it to
**true** — a FAIL policy that fails fails the task (Gobblin's classic behaviour). Gobblin changed its own
default to false in 2025 (the result is only recorded); set the key to false for that.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from gobblin_py.api import FAILED, NOT_EVALUATED, PASSED, TaskPolicy, TaskPolicyResult, plugin_name
from gobblin_py.config.branches import branch_key
from gobblin_py.errors import UsageError
from gobblin_py.config.settings import Settings, setting
from gobblin_py.plugins import instantiate
from gobblin_py.state import State

POLICIES_KEY = "qualitychecker.task.policies"
TYPES_KEY = "qualitychecker.task.policy.types"
ENFORCE_KEY = "data.quality.enforce.failure"
TYPES = ("FAIL", "OPTIONAL")


@dataclass(frozen=True)
class QualitySettings(Settings):
    """Whether a failed task policy blocks the commit."""

    enforce: bool = setting(ENFORCE_KEY, default=True, doc="a failing FAIL task policy fails the task "
                            "(Gobblin's default since 2025 is false: only recorded)")


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


class RowCountRangePolicy(TaskPolicy):
    """PASSED when |written − expected| / expected ≤ ``qualitychecker.row.count.range``."""

    def init(self, state: State) -> None:
        self.range = state.get_prop_as_float("qualitychecker.row.count.range")
        if self.range is None:
            raise UsageError("qualitychecker.row.count.range is not set: RowCountRangePolicy needs the allowed ratio")

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


def build_task_policies(state: State, branches: int, branch: int) -> list[tuple[TaskPolicy, str, str]]:
    """The ``(policy, type, name)`` list of a branch (suffix ``.N`` only with several branches)."""
    names_key, types_key = branch_key(POLICIES_KEY, branches, branch), branch_key(TYPES_KEY, branches, branch)
    names, types = state.get_prop_as_list(names_key), state.get_prop_as_list(types_key)
    if not names and not types:
        return []
    if len(names) != len(types):
        raise UsageError(f"{names_key} lists {len(names)} policies but {types_key} lists {len(types)} types")
    policies = []
    for name, kind in zip(names, types):
        if kind not in TYPES:
            raise UsageError(f"{types_key}: type {kind!r} is not one of {', '.join(TYPES)}")
        policy = instantiate(name, names_key, TaskPolicy)
        policy.init(state)  # type: ignore[union-attr]
        policies.append((policy, kind, plugin_name(policy)))  # type: ignore[arg-type]
    return policies


def evaluate(policies: list[tuple[TaskPolicy, str, str]], state: State) -> tuple[str, list[dict]]:
    """The branch status and each policy's result."""
    results, status = [], PASSED
    for policy, kind, name in policies:
        try:
            result = policy.evaluate(state)
        except Exception as exc:  # noqa: BLE001 - a policy that cannot be evaluated counts as not passed
            result = FAILED
            name = f"{name} ({type(exc).__name__}: {exc})"
        results.append({"policy": name, "type": kind, "result": str(result)})
        if kind == "FAIL":
            if result == FAILED:
                status = FAILED
            elif result == NOT_EVALUATED and status != FAILED:
                status = NOT_EVALUATED
    return str(status), results


def enforce(state: State) -> bool:
    return QualitySettings.load(state).enforce
