"""A run's budget of retry waiting (``gpy.retry.budget.seconds``): one bound over every retry loop of the run.

Gobblin's retry keys multiply: five task retries 0/300/…/1200 s apart, each made of a REST client's own retries,
hold a run that has no network for about 50 minutes. Every retry loop of a run (the task runner's, the REST
client's, the Hive metastore's connect, the replay of an earlier run's unfinished commit) asks the run's
:class:`RetryBudget` before it waits: a wait that fits is granted, one that would pass the budget is shortened to
what is left (one last try at the end of the budget), and once the budget is spent no retry is made
(:class:`RetryBudgetSpent`, a message naming the key). The budget counts wall-clock time on a monotonic clock during
which at least one retry wait of the run was under way: tasks waiting side by side for the same outage spend it
once.

The runtime opens the run's budget (:func:`open_budget`) before its tasks run and closes it after; a plugin finds it
with :func:`run_budget` from its state (``job.id``), so it never imports the runtime. A process that runs tasks
without the driver (a Spark executor, a task worker process) opens the run's budget on first use: there each
process keeps its own account.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from gobblin_py.sdk.errors import TransientError
from gobblin_py.sdk.settings import Settings, setting

BUDGET_KEY = "gpy.retry.budget.seconds"
DEFAULT_BUDGET_S = 900.0
_KEPT = 64  # budgets of runs a long-lived executor process remembers (the oldest go first)
monotonic: Callable[[], float] = time.monotonic  # the clock budgets read unless given one (tests move it by hand)


@dataclass(frozen=True)
class RetryBudgetSettings(Settings):
    """The bound on a run's retry waiting."""

    seconds: float = setting(BUDGET_KEY, default=DEFAULT_BUDGET_S, minimum=0, maximum=7 * 86400,
                             doc="the longest a run spends waiting to retry, over all its retry loops together "
                                 "(task.maxretries, rest.retry.max, the Hive metastore's connect retries, the "
                                 "replays of earlier runs' unfinished commits): a wait "
                                 "that would pass it is shortened to what is left, then no retry is made and the "
                                 "task fails naming this key. The default (15 minutes: Gobblin's first three task "
                                 "retries) fits an hourly schedule; 0: no retries")


class RetryBudgetSpent(TransientError):
    """A retry refused because the run's retry budget is spent (a later run may pass: transient)."""


class RetryBudget:
    """The run's retry waiting: granted, shortened or refused against ``seconds`` (thread-safe)."""

    def __init__(self, seconds: float, clock: Callable[[], float] | None = None) -> None:
        self.seconds = seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._spent = 0.0  # seconds of the budget promised to waits, up to ``_until``
        self._until: float | None = None  # when the last granted wait ends
        self._granted = 0

    def remaining(self) -> float:
        """Seconds of waiting the run may still spend."""
        with self._lock:
            return max(0.0, self.seconds - self._spent)

    def spent_text(self) -> str:
        """Why no retry is made, naming the key."""
        return f"the run's retry budget is spent ({BUDGET_KEY}={self.seconds:g})"

    def grant(self, wanted: float) -> Grant:
        """The wait a retry may make now, ``wanted`` seconds or less; :class:`RetryBudgetSpent` when none."""
        with self._lock:
            left = self.seconds - self._spent
            if left <= 0:
                raise RetryBudgetSpent(self.spent_text())
            now = (self._clock or monotonic)()
            start = now if self._until is None else max(now, self._until)
            wait = max(0.0, wanted)
            extra = max(0.0, now + wait - start)  # beyond the waits already under way
            if extra > left:
                wait -= extra - left
                extra = left
            self._spent += extra
            self._until = max(start, now + wait)
            self._granted += 1
            return Grant(wait, wanted - wait, left, self._granted == 1, self.seconds)


@dataclass(frozen=True)
class Grant:
    """A retry's wait as the budget allows it."""

    seconds: float
    cut_s: float  # how much shorter than asked
    left_before_s: float  # what the run could still wait before this wait
    first: bool  # the run's first retry
    budget_s: float

    def note(self) -> str | None:
        """What the retry line says about the budget: on the run's first retry how long the run may still wait,
        and whenever the wait was shortened to fit."""
        parts = []
        if self.first:
            parts.append(f"the run may still wait {self.left_before_s:g} s in all for retries "
                         f"({BUDGET_KEY}={self.budget_s:g})")
        if self.cut_s > 0:
            parts.append(f"the wait is shortened by {self.cut_s:g} s: the last of the run's retry budget "
                         f"({BUDGET_KEY})")
        return "; ".join(parts) or None


_budgets: dict[str, RetryBudget] = {}
_registry_lock = threading.Lock()


def open_budget(job_id: str, props: Any, clock: Callable[[], float] | None = None) -> RetryBudget:
    """The run ``job_id``'s budget, opened from ``props`` (a mapping or a State) unless already open."""
    with _registry_lock:
        budget = _budgets.get(job_id)
        if budget is None:
            budget = RetryBudget(RetryBudgetSettings.load(props).seconds, clock)
            while len(_budgets) >= _KEPT:
                _budgets.pop(next(iter(_budgets)))
            _budgets[job_id] = budget
        return budget


def close_budget(job_id: str) -> None:
    """Forget the run's budget (the run is over)."""
    with _registry_lock:
        _budgets.pop(job_id, None)


def run_budget(state: Any) -> RetryBudget:
    """The budget of the run ``state`` belongs to (its ``job.id``; a state of no run gets a budget of its own)."""
    props: Mapping[str, str] | Any = state
    job_id = _get(props, "job.id")
    if not job_id:
        return RetryBudget(RetryBudgetSettings.load(props).seconds)
    return open_budget(job_id, props)


def _get(props: Any, key: str) -> str | None:
    getter = getattr(props, "get_prop", None)
    value = getter(key) if callable(getter) else props.get(key)
    return str(value) if value else None
