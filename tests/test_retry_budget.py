"""The run's retry budget (``gpy.retry.budget.seconds``) on a clock moved by hand: waits under way side by side spend
it once, a wait that would pass it is shortened, a spent budget refuses naming the key, and every retry loop of a run
finds the same budget from its state."""

from __future__ import annotations

import pytest

from gobblin_py.sdk.retry_budget import RetryBudget, RetryBudgetSpent, close_budget, open_budget, run_budget
from gobblin_py.sdk.states import State


def test_waits_side_by_side_spend_the_budget_once_and_the_last_is_shortened():
    now = [0.0]
    budget = RetryBudget(10, clock=lambda: now[0])
    first = budget.grant(6)
    assert first.seconds == 6 and first.first
    assert first.note() == "the run may still wait 10 s in all for retries (gpy.retry.budget.seconds=10)"
    second = budget.grant(6)  # another task, the same outage, the same 6 s
    assert second.seconds == 6 and not second.first and second.note() is None
    assert budget.remaining() == 4
    now[0] = 6.0
    last = budget.grant(6)
    assert last.seconds == 4 and last.cut_s == 2 and "shortened by 2 s" in (last.note() or "")
    with pytest.raises(RetryBudgetSpent, match=r"the run's retry budget is spent \(gpy.retry.budget.seconds=10\)"):
        budget.grant(0)


def test_every_retry_loop_of_a_run_finds_its_one_budget():
    props = {"job.id": "job_Budget_1", "gpy.retry.budget.seconds": "30"}
    try:
        opened = open_budget("job_Budget_1", props)
        assert run_budget(State({"job.id": "job_Budget_1"})) is opened and opened.seconds == 30
    finally:
        close_budget("job_Budget_1")
    assert run_budget(State(props)) is not opened  # a process without the driver opens the run's own
    close_budget("job_Budget_1")
    assert run_budget(State({})).seconds == 900  # a state of no run: the default
