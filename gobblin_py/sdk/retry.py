"""Which work units of the previous run to run again (``workunit.retry.policy``, Gobblin's semantics).

Policy: ``workunit.retry.policy`` if set, else ``always`` when ``workunit.retry.enabled`` (default true), else
``never``. Candidates are the previous run's work-unit states that did not reach COMMITTED. ``always`` retries
them all; ``onpartial`` only under ``job.commit.policy=partial``; ``onfull`` only under ``full``; ``never``
none.
"""

from __future__ import annotations

from dataclasses import dataclass

from gobblin_py.sdk.job_keys import CommitPolicySettings
from gobblin_py.sdk.settings import Settings, same_as, setting
from gobblin_py.sdk.states import State, WorkingState, WorkUnitState

POLICY_KEY = "workunit.retry.policy"
ENABLED_KEY = "workunit.retry.enabled"


@dataclass(frozen=True)
class RetrySettings(Settings):
    """Which of the previous run's work units a source runs again."""

    policy: str | None = setting(POLICY_KEY, choices=("always", "onpartial", "onfull", "never"),
                                 default_doc="always (never with workunit.retry.enabled=false)",
                                 doc="retry the previous run's uncommitted work units")
    enabled: bool = setting(ENABLED_KEY, default=True, doc="false: the default policy is never")
    commit_policy: str = same_as(CommitPolicySettings, "commit_policy")


def retry_policy(state: State) -> str:
    settings = RetrySettings.load(state)
    return settings.policy or ("always" if settings.enabled else "never")


def workunits_to_retry(state: State, previous: list[WorkUnitState]) -> list[WorkUnitState]:
    """The previous work-unit states to re-queue in this run."""
    policy = retry_policy(state)
    commit_policy = RetrySettings.load(state).commit_policy
    if policy == "never" or (policy == "onpartial" and commit_policy != "partial") or (
        policy == "onfull" and commit_policy != "full"
    ):
        return []
    return [wus for wus in previous if wus.working_state is not WorkingState.COMMITTED]
