"""Which work units of the previous run to run again (``workunit.retry.policy``, Gobblin's semantics).

Policy: ``workunit.retry.policy`` if set, else ``always`` when ``workunit.retry.enabled`` (default true), else
``never``. Candidates are the previous run's work-unit states that did not reach COMMITTED. ``always`` retries
them all; ``onpartial`` only under ``job.commit.policy=partial``; ``onfull`` only under ``full``; ``never``
none.
"""

from __future__ import annotations

from gobblin_py.errors import UsageError
from gobblin_py.state import State, WorkingState, WorkUnitState

POLICY_KEY = "workunit.retry.policy"
ENABLED_KEY = "workunit.retry.enabled"


def retry_policy(state: State) -> str:
    policy = state.get_prop(POLICY_KEY)
    if policy is None:
        return "always" if state.get_prop_as_bool(ENABLED_KEY, True) else "never"
    policy = policy.strip().lower()
    if policy not in ("always", "onpartial", "onfull", "never"):
        raise UsageError(f"{POLICY_KEY}={policy}: use always, onpartial, onfull or never")
    return policy


def workunits_to_retry(state: State, previous: list[WorkUnitState]) -> list[WorkUnitState]:
    """The previous work-unit states to re-queue in this run."""
    policy = retry_policy(state)
    commit_policy = (state.get_prop("job.commit.policy") or "full").strip().lower()
    if policy == "never" or (policy == "onpartial" and commit_policy != "partial") or (
        policy == "onfull" and commit_policy != "full"
    ):
        return []
    return [wus for wus in previous if wus.working_state is not WorkingState.COMMITTED]
