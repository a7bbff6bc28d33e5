"""What a benchmark is made of: cases (rows of the results table), contenders, their steps, and targets.

A :class:`Benchmark` is a set of contenders measured together, in interleaved rounds. In each round every
contender runs one *trial* in a fresh folder: its :class:`Step` list, each step one whole process. A step
names the :class:`Case` its time counts for (a SQL contender's trial times the first load, then the
incremental load, then the run with nothing new, so one trial serves three cases), and the number of rows its
contender's output must hold afterwards.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

Role = Literal["gpy", "peer", "limit"]
GPY_LOCAL = "gpy --engine local"
GPY_SPARK = "gpy --engine spark"


@dataclass
class Step:
    """One process of a contender's trial.

    ``case`` is the case key its time counts for; ``None`` makes it an untimed preparation. After it ran,
    ``count()`` must return ``expect`` (the rows of the contender's output in total, or whatever the step
    promises to have produced) unless ``expect`` is ``None``. ``before`` runs first, untimed (new rows into a
    source table, say). The process's output goes to ``log`` (by default a file in the trial's folder), where
    ``count`` may read it. ``reports()``, when given, returns times the process measured itself, in seconds by
    case key (one commit among many runs), each counted as a sample of that case beside the process's own.
    """

    argv: Sequence[str]
    case: str | None
    expect: int | None = None
    count: Callable[[], int] | None = None
    before: Callable[[], None] | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    log: Path | None = None
    reports: Callable[[], Mapping[str, float]] | None = None


@dataclass
class Contender:
    """A program doing the benchmark's work: gpy, a peer (dlt, plain PySpark) or the limit (a bare script).

    ``trial(work)`` returns the steps of one trial, ``work`` being an empty folder of its own. ``cases`` names
    the cases it takes part in when not all of the benchmark's. A peer whose environment could not be made has
    ``error`` set and is reported as FAILED without running.
    """

    name: str
    role: Role
    trial: Callable[[Path], list[Step]]
    cases: tuple[str, ...] = ()
    error: str | None = None

    def takes_part(self, case: str) -> bool:
        return not self.cases or case in self.cases


@dataclass(frozen=True)
class Target:
    """A promise about two contenders' medians in one case: ``subject`` compared with ``baseline``.

    ``measure`` "time" compares wall times (subject ÷ baseline), "rate" compares rows per second
    (subject ÷ baseline); the ratio must satisfy ``op`` ``bound``. "seconds" is a goal for the subject's own
    median time (no baseline), for work no other contender does. "memory" compares peak resident memory
    (subject ÷ baseline), the baseline's taken in ``baseline_case`` when given (gpy's own at a smaller size: the
    growth from one size to the next). A tuple of baselines is compared with the fastest of them that ran.
    """

    case: str
    subject: str
    baseline: str | tuple[str, ...]
    op: Literal["<=", "<", ">=", ">"]
    bound: float
    measure: Literal["time", "rate", "seconds", "memory"] = "time"
    baseline_case: str | None = None

    @property
    def baselines(self) -> tuple[str, ...]:
        return self.baseline if isinstance(self.baseline, tuple) else (self.baseline,)

    def holds(self, ratio: float) -> bool:
        return {"<=": operator.le, "<": operator.lt, ">=": operator.ge, ">": operator.gt}[self.op](ratio, self.bound)

    def describe(self) -> str:
        if self.measure == "seconds":
            return f"{self.subject} seconds {self.op} {self.bound:g}"
        what = {"time": "time", "rate": "rows/s", "memory": "peak memory"}[self.measure]
        if self.baseline_case is not None and self.baseline == self.subject:
            return f"{self.subject} {what} ÷ its own at {self.baseline_case} {self.op} {self.bound:g}"
        baseline = (f"the fastest of {', '.join(self.baseline)}" if isinstance(self.baseline, tuple)
                    else self.baseline)
        if self.baseline_case is not None:
            baseline += f" at {self.baseline_case}"
        return f"{self.subject} {what} ÷ {baseline} {what} {self.op} {self.bound:g}"


@dataclass
class Case:
    """One group of rows of the results table: the same work done by several contenders.

    ``work`` is what one run moves (rows, messages, datasets), for the per-second column; 0 leaves it empty
    (a run with nothing to do). Ratios are to ``reference``'s median time.
    """

    key: str
    title: str
    work: int
    unit: str = "rows"
    reference: str = GPY_LOCAL
    targets: list[Target] = field(default_factory=list)


@dataclass
class Benchmark:
    """Contenders measured together over some cases; ``max_rounds`` caps the rounds of a slow one, and
    ``rounds_factor`` multiplies those of a fast one (a run of a third of a second is the noisiest)."""

    name: str
    cases: list[Case]
    contenders: list[Contender]
    before_trial: Callable[[], None] | None = None
    max_rounds: int | None = None
    rounds_factor: int = 1
    notes: list[str] = field(default_factory=list)


def peers_slower(case: str, peers: Sequence[str], gpy: str = GPY_LOCAL) -> list[Target]:
    """The standing promise: each peer takes longer than gpy on this case."""
    return [Target(case, peer, gpy, ">", 1.0) for peer in peers]


MEMORY_RATIO = 1.5  # gpy's peak resident memory at most this × the bare script's, on every row that has one


def memory_within(case: str, limit: str, gpy: str = GPY_LOCAL) -> Target:
    """gpy's peak memory on ``case`` at most ``MEMORY_RATIO`` × the limit script's."""
    return Target(case, gpy, limit, "<=", MEMORY_RATIO, "memory")
