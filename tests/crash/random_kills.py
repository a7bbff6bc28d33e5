"""Random kills: runs of a CrashJob SIGKILLed from outside at random instants, each kill's landing read from the
run's phase log (``enter|leave <phase> <n> <time>``, on the clock this process shares with the run).

The instants are drawn in three strata, each uniform over a span measured on unkilled runs of the same job (so
that an instant falls inside the span of most runs, the lower quartile of their windows, the shortest of their
tasks and of their commits, killed runs' included where they finished them: an instant past a run's phase lands
after it):

- *window*: from taking the lock to the run's exit — where kills land follows how long each phase lasts;
- *tasks*: from the run's entry into its tasks to their measured length;
- *commits*: from the run's entry into its datasets' commits (``commit.datasets``) to their measured length.

Drawn over the window alone, the kills would reach a phase as often as it fills the window, and a job's commits
can be a few per cent of it (renames on local disk beside tasks reading a broker): two fifths of the kills are
drawn over each of the tasks and the commits, the rest over the whole window. Within a stratum the k-th of its m
kills falls in the k-th m-th of the span (stratified), the strata in a random order. The kill is a SIGKILL sent
by this process at that instant, as an operator or the out-of-memory killer would send it: the run does not aim
it, and where it landed is read back from the log, so an instant the run had already left (a phase that was
quicker this time) counts where it fell.
"""

from __future__ import annotations

import random
import statistics
from collections import Counter
from dataclasses import dataclass, field

from tests.crash.harness import LOGS, PHASE_LOG_ENV, CrashJob
from tests.crash.report import report

RUNS_PER_KILL = 3  # runs at most for one kill: the others ended before their instant
AIMED_SHARE = 0.4  # of the kills, drawn over each of the tasks and the commits; the rest over the window
# the phase whose first entry starts each stratum's span, and what counts as landing in it
ENTRY = {"window": "lock", "tasks": "tasks", "commits": "commit.datasets"}
STRATA = tuple(ENTRY)


def open_phases(lines: list[str], instant: float) -> set[str]:
    """The phases a run was inside at ``instant``, from its phase log (``enter|leave <phase> <n> <time>``)."""
    inside: set[tuple[str, str]] = set()
    for line in lines:
        parts = line.split()
        if len(parts) < 4 or parts[0] not in ("enter", "leave") or float(parts[3]) > instant:
            continue
        event, name, count = parts[:3]
        if event == "enter":
            inside.add((name, count))
        else:
            inside.discard((name, count))
    return {name for name, _ in inside}


def quicker(lengths: list[float]) -> float:
    """A span's length from the quicker runs (the lower quartile): one too long sends the last kills past its end."""
    return sorted(lengths)[len(lengths) // 4]


def _first(lines: list[str], event: str, name: str) -> float | None:
    return next((float(parts[3]) for parts in map(str.split, lines)
                 if len(parts) >= 4 and parts[0] == event and parts[1] == name and parts[2] == "1"), None)


@dataclass
class Profile:
    """The spans of unkilled runs, from their phase logs: the window (lock to exit), the tasks and the commits."""

    lengths: dict[str, list[float]] = field(default_factory=lambda: {stratum: [] for stratum in STRATA})
    shares: dict[str, list[float]] = field(default_factory=lambda: {"tasks": [], "commits": []})

    def learn(self, lines: list[str], ended: float) -> None:
        """One more unkilled run, its log read whole and its exit at ``ended``."""
        locked = _first(lines, "enter", "lock")
        assert locked is not None, "an unkilled run logged no lock"
        window = ended - locked
        self.lengths["window"].append(window)
        for stratum in ("tasks", "commits"):
            start, end = _first(lines, "enter", ENTRY[stratum]), _first(lines, "leave", ENTRY[stratum])
            assert start is not None and end is not None, f"an unkilled run logged no {ENTRY[stratum]}"
            self.lengths[stratum].append(end - start)
            self.shares[stratum].append((end - start) / window)

    def learn_phases(self, lines: list[str]) -> None:
        """A killed run's tasks or commits, each if it finished them before the kill: the spans follow the
        machine's load as the campaign goes on, from more runs than the unkilled ones."""
        for stratum in ("tasks", "commits"):
            start, end = _first(lines, "enter", ENTRY[stratum]), _first(lines, "leave", ENTRY[stratum])
            if start is not None and end is not None:
                self.lengths[stratum].append(end - start)

    def span(self, stratum: str) -> float:
        lengths = self.lengths[stratum]
        return quicker(lengths) if stratum == "window" else min(lengths)

    def share(self, stratum: str) -> float:
        return statistics.median(self.shares[stratum])


@dataclass
class Landings:
    """Where a random campaign's kills landed: after the run took its lock, inside its tasks, inside a commit;
    and per stratum, the phases its kills landed in."""

    profile: Profile
    first_spans: dict[str, float]  # the spans measured before the kills
    kills: int = 0
    finished: int = 0  # runs that ended before their instant came
    after_lock: int = 0
    tasks: int = 0
    commits: int = 0
    phases: Counter = field(default_factory=Counter)
    per_stratum: dict[str, Counter] = field(default_factory=lambda: {stratum: Counter() for stratum in STRATA})
    late: list[float] = field(default_factory=list)  # per kill, seconds it was sent after its instant

    def record(self, stratum: str, lines: list[str], killed_at: float | None) -> None:
        if killed_at is None:
            self.finished += 1
            return
        self.kills += 1
        entered = {line.split()[1] for line in lines if line.startswith("enter ")
                   and float(line.split()[3]) <= killed_at}
        inside = open_phases(lines, killed_at)
        self.after_lock += "lock" in entered
        self.tasks += "tasks" in inside
        self.commits += any(name.startswith("commit.") for name in inside)
        outermost = "commits" if "commit.datasets" in inside else "tasks" if "tasks" in inside else \
            ", ".join(sorted(inside)) or ("between phases" if "lock" in entered else "before the lock")
        self.phases.update(inside or {"(between phases)" if "lock" in entered else "(before the lock)"})
        self.per_stratum[stratum][outermost] += 1

    def describe(self) -> str:
        spans = ", ".join(f"{stratum} {self.profile.span(stratum):.3f} s (first {self.first_spans[stratum]:.3f} s)"
                          for stratum in STRATA)
        strata = "; ".join(
            f"{sum(counts.values())} over the {stratum}: "
            + ", ".join(f"{where} {count}" for where, count in sorted(counts.items()))
            for stratum, counts in self.per_stratum.items() if counts)
        return (f"{self.kills} kills: {self.after_lock} after the lock, {self.tasks} in tasks, {self.commits} in "
                f"commits ({strata}); {self.finished} runs ended before their instant; spans (windows of "
                f"{len(self.profile.lengths['window'])} unkilled runs, tasks of {len(self.profile.lengths['tasks'])} "
                f"runs, commits of {len(self.profile.lengths['commits'])}): {spans}; the unkilled runs spent "
                f"{self.profile.share('tasks'):.0%} of the window in tasks, {self.profile.share('commits'):.0%} in "
                f"commits; kills sent after their instant by {1000 * statistics.median(self.late or [0]):.1f} ms "
                f"(the median), {1000 * max(self.late or [0]):.1f} ms at most")

    def check_spread(self) -> None:
        """Every kill after the lock, at least a third of them inside the tasks and a third inside the commits,
        and no more than a quarter as many runs as kills ended before their instant."""
        assert self.kills and self.after_lock == self.kills, self.describe()
        assert 3 * self.tasks >= self.kills, f"too few kills in tasks: {self.describe()}"
        assert 3 * self.commits >= self.kills, f"too few kills in commits: {self.describe()}"
        assert self.finished <= self.kills // 4, f"too many runs ended before their instant: {self.describe()}"


def plan(kills: int, rng: random.Random) -> list[tuple[str, int, int]]:
    """``(stratum, k, m)`` per kill: the k-th of the stratum's m kills, in a random order."""
    aimed = max(1, round(AIMED_SHARE * kills))
    counts = {"tasks": aimed, "commits": aimed, "window": max(0, kills - 2 * aimed)}
    kills_of = [(stratum, k, m) for stratum, m in counts.items() for k in range(m)]
    return rng.sample(kills_of, len(kills_of))


def _measured_run(job: CrashJob, profile: Profile) -> None:
    (job.root / LOGS).mkdir(exist_ok=True)
    log = job.root / LOGS / f"measure-{job.runs:05d}.log"
    assert job.run(env={PHASE_LOG_ENV: str(log)}) == 0
    assert job.ended_at is not None
    profile.learn(log.read_text().splitlines(), job.ended_at)


def random_campaign(job: CrashJob, kills: int, seed: int, files_per_run: int = 0) -> Landings:
    """``kills`` runs each SIGKILLed at a random instant (see the module), each with ``files_per_run`` new files
    (else one per dataset) and each followed by runs that finish what it left; then every check.

    A run that ends before its instant is an unkilled run like the measured ones: the spans are measured again
    with it (runs vary with the machine's load, and the measured runs may have met a slower spell than the
    campaign's), and its kill gets another run, up to ``RUNS_PER_KILL`` in all.
    """
    rng = random.Random(seed)
    job.add_files(6)
    job.run_until_success()  # a warm start: the first run of a job is slower than the rest
    per_run = files_per_run or len(job.datasets)
    profile = Profile()
    for _ in range(5):
        job.add_files(per_run)  # as much to do as the killed runs have
        _measured_run(job, profile)
    landings = Landings(profile=profile, first_spans={stratum: profile.span(stratum) for stratum in STRATA})
    for stratum, k, m in plan(kills, rng):
        for _ in range(RUNS_PER_KILL):
            job.add_files(per_run)
            log = job.root / LOGS / f"run-{job.runs:05d}.log"
            delay = profile.span(stratum) * (k + rng.random()) / m
            killed_at = job.run_killed_after(ENTRY[stratum], delay, log)
            lines = log.read_text().splitlines() if log.exists() else []
            landings.record(stratum, lines, killed_at)
            if killed_at is not None:
                landings.late.append(job.late)
                profile.learn_phases(lines)
                job.run_until_success()  # finishes what the kill left: the next killed run starts from a clean store
                break
            assert job.ended_at is not None
            profile.learn(lines, job.ended_at)
    job.run_until_success()
    job.check()
    report(f"{landings.describe()}; then {job.rows_expected()} rows checked by identity: none lost, "
           "none published twice")
    return landings
