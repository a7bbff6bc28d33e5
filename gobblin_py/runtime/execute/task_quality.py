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

from dataclasses import dataclass
from typing import cast

from gobblin_py.sdk.branches import branch_key
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.contracts import FAILED, NOT_EVALUATED, PASSED, TaskPolicy, plugin_name
from gobblin_py.sdk.plugins import instantiate
from gobblin_py.sdk.settings import Scope, Settings, setting
from gobblin_py.sdk.states import State, WorkUnitState

POLICIES_KEY = "qualitychecker.task.policies"
TYPES_KEY = "qualitychecker.task.policy.types"
ENFORCE_KEY = "data.quality.enforce.failure"
TYPES = ("FAIL", "OPTIONAL")


@dataclass(frozen=True)
class QualitySettings(Settings):
    """The task-level policies of a branch (``.N`` with several branches) and whether a failure blocks the commit."""

    enforce: bool = setting(ENFORCE_KEY, default=True, doc="a failing FAIL task policy fails the task "
                            "(Gobblin's default since 2025 is false: only recorded)")
    policies: tuple[str, ...] = setting(POLICIES_KEY, scope=Scope.BRANCH, default=(),
                                        doc="task-level policy classes, judged when a branch commits")
    types: tuple[str, ...] = setting(TYPES_KEY, scope=Scope.BRANCH, default=(), doc="one type per policy: FAIL or OPTIONAL")

    def check(self) -> list[ConfigError]:
        if len(self.policies) != len(self.types):
            return [ConfigError(f"lists {len(self.types)} types for {len(self.policies)} policies", key=TYPES_KEY,
                                hint="give one type per policy in qualitychecker.task.policies")]
        bad = [t for t in self.types if t not in TYPES]
        if bad:
            return [ConfigError(f"{bad[0]!r} is not a task policy type", key=TYPES_KEY, hint=f"use {', '.join(TYPES)}")]
        return []


def build_task_policies(state: WorkUnitState, branches: int, branch: int) -> list[tuple[TaskPolicy, str, str]]:
    """The ``(policy, type, name)`` list of a branch (suffix ``.N`` only with several branches)."""
    settings = QualitySettings.load(state, branches=branches, branch=branch)
    names_key = branch_key(POLICIES_KEY, branches, branch)
    policies = []
    for name, kind in zip(settings.policies, settings.types, strict=True):
        policy = cast(TaskPolicy, instantiate(name, names_key, TaskPolicy))  # instantiate checked its class
        policy.init(state)
        policies.append((policy, kind, plugin_name(policy)))
    return policies


def evaluate(policies: list[tuple[TaskPolicy, str, str]], state: WorkUnitState) -> tuple[str, list[dict]]:
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
