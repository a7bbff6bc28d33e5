"""Kills aimed at the phases of a run: ``gpy run`` SIGKILLs itself inside the phase a campaign picks.

The runtime marks its phases (``gobblin_py.io.crash_points.phase``): taking the lock, finishing an earlier
run's unfinished commit (``recovery``), removing run folders (``cleanup``), ``planning``, the ``tasks``, and each
step of a dataset's commit (``commit.log``, ``commit.fs_rename``, ``commit.published_records`` — the check of the
published files —, ``commit.dataset_state``, ``commit.unlog``),
and a local batch's group sync (``commit.sync``).
A run started with ``GPY_TEST_KILL_IN_PHASE=<phase>:<n>:<delay>`` dies ``delay`` seconds into the n-th time it
enters the phase, or as that phase ends if it ends sooner, so every kill lands inside the phase aimed at. The
campaigns pick the phase, n and the delay at random (seeded); n and the delay are drawn within what earlier runs
of the campaign logged (how often each phase is entered in a run, how long it lasts).
"""

from __future__ import annotations

import random
import signal
import statistics
from collections import Counter
from dataclasses import dataclass, field

from tests.crash.harness import LOGS, PHASE_LOG_ENV, CrashJob

KILL_ENV = "GPY_TEST_KILL_IN_PHASE"
# a kill in any of these leaves a logged commit unfinished
COMMIT_STEPS = ("commit.fs_rename", "commit.published_records", "commit.dataset_state")
PHASES = ("lock", "recovery", "cleanup", "planning", "tasks", "commit.log", *COMMIT_STEPS, "commit.unlog")
# a batch of commits on local disk also has its group sync: renames and unlinks waiting on one flush
BATCH_PHASES = (*PHASES, "commit.sync")


@dataclass
class Kills:
    """Where a campaign's kills landed: per phase, and how many of them before the phase had ended."""

    landed: Counter = field(default_factory=Counter)
    mid: Counter = field(default_factory=Counter)
    missed: int = 0  # runs that never entered the phase n times, so finished unkilled
    again: int = 0  # runs killed finishing commits after an earlier run was killed finishing them

    def describe(self) -> str:
        landed = ", ".join(f"{p} {self.landed[p]} ({self.mid[p]} mid-phase)" for p in sorted(self.landed))
        return f"{landed}; {self.missed} runs missed their phase; {self.again} recoveries killed again"


@dataclass
class PhaseProfile:
    """How often each phase is entered in a run, and how long it lasts, from the runs' phase logs."""

    most: Counter = field(default_factory=Counter)
    seconds: dict[str, list[float]] = field(default_factory=dict)

    def learn(self, lines: list[str]) -> None:
        entered: dict[tuple[str, str], float] = {}
        for line in lines:
            event, name, *rest = line.split()
            if event == "enter":
                entered[name, rest[0]] = float(rest[1])
                self.most[name] = max(self.most[name], int(rest[0]))
            elif event == "leave" and (name, rest[0]) in entered:
                self.seconds.setdefault(name, []).append(float(rest[1]) - entered[name, rest[0]])

    def pick(self, rng: random.Random, name: str, most: int | None = None) -> str:
        """``<phase>:<n>:<delay>`` for a kill at a random instant of a random time (of ``most``, else of as many
        as a run has entered it) the phase is entered."""
        typical = statistics.median(self.seconds.get(name) or [0.01])
        n = rng.randint(1, most or max(1, self.most[name]))
        return f"{name}:{n}:{rng.uniform(0, 1.5 * typical):.6f}"


class PhaseRuns:
    """Runs of a CrashJob with a phase log each, learning the profile and counting where kills landed."""

    def __init__(self, job: CrashJob) -> None:
        self.job = job
        self.profile = PhaseProfile()
        self.kills = Kills()
        (job.root / LOGS).mkdir(exist_ok=True)

    def run(self, aim: str | None = None) -> str | None:
        """One run, killed inside the phase ``aim`` names (``<phase>:<n>:<delay>``); the phase it died in, if any."""
        log = self.job.root / LOGS / f"run-{self.job.runs:05d}.log"
        env = {PHASE_LOG_ENV: str(log), **({KILL_ENV: aim} if aim else {})}
        code = self.job.run(env=env)
        lines = log.read_text().splitlines() if log.exists() else []
        self.profile.learn(lines)
        killed = [line.split() for line in lines if line.startswith("kill ")]
        if code == 0:
            assert not killed, f"a run killed at {killed} exited 0"
            self.kills.missed += aim is not None
            return None
        assert code == -signal.SIGKILL and len(killed) == 1, (code, killed)
        _, name, _, where = killed[0]
        assert aim is not None and name == aim.split(":")[0], f"aimed at {aim}, killed in {name}"
        self.kills.landed[name] += 1
        self.kills.mid[name] += where == "mid"
        return name

    def run_until_success(self, limit: int = 20) -> None:
        for _ in range(limit):
            if self.run() is None:
                return
        raise AssertionError("the job did not succeed after repeated runs")


def phase_campaign(job: CrashJob, kills: int, seed: int, phases: tuple[str, ...] = PHASES) -> Kills:
    """``kills`` runs each killed inside a phase, every one of ``phases`` in turn in a random order, new files
    arriving before each run; a kill aimed at recovery when no commit is unfinished first leaves one (a kill
    inside a commit step). Runs go on until every phase has had a kill too. Then a clean finish and every check."""
    rng = random.Random(seed)
    runs = PhaseRuns(job)
    job.add_files(6)
    runs.run_until_success()  # a first profile
    job.add_files(len(job.datasets))
    order: list[str] = []
    while sum(runs.kills.landed.values()) < kills or not all(runs.kills.landed[p] for p in phases):
        assert job.runs < 4 * kills + 50, f"kills keep missing their phases: {runs.kills.describe()}"
        order = order or rng.sample(phases, len(phases))  # every phase in turn, in a random order each round
        name = order.pop()
        job.add_files(rng.randint(1, 3))  # every run has tasks and commits
        if name == "recovery" and not job.pending_commits():
            runs.run(runs.profile.pick(rng, rng.choice(COMMIT_STEPS), most=1))
        pending = len(job.pending_commits()) if name == "recovery" else None
        runs.run(runs.profile.pick(rng, name, most=pending))
    runs.run_until_success()
    job.check()
    return runs.kills


def recovery_campaign(job: CrashJob, rounds: int, seed: int, max_recovery_kills: int = 3) -> Kills:
    """Each round: a run killed inside a commit step leaves its commit unfinished; the next runs are killed while
    they finish it (1 to ``max_recovery_kills`` of them, as long as one is still unfinished); then a run
    finishes it and commits new data, and every check runs. Returns where the kills landed; every round's first
    recovery kill must land, since a commit was left to recover."""
    rng = random.Random(seed)
    runs = PhaseRuns(job)
    job.add_files(len(job.datasets))
    runs.run_until_success()
    for _ in range(rounds):
        job.add_files(len(job.datasets))  # a file, so a step of each kind, for each dataset to commit
        assert runs.run(runs.profile.pick(rng, rng.choice(COMMIT_STEPS), most=len(job.datasets))) in COMMIT_STEPS
        assert job.pending_commits(), "a run killed inside a commit step left no commit sequence"
        job.add_files(rng.randint(1, len(job.datasets)))
        for attempt in range(rng.randint(1, max_recovery_kills)):
            pending = len(job.pending_commits())
            if not pending:  # the last kill came as the last unfinished commit was done
                break
            # a run enters recovery once per unfinished commit: aimed at one of those, the kill lands
            aim = runs.profile.pick(rng, "recovery", most=pending)
            assert runs.run(aim) == "recovery", f"a run aimed at {aim} was not killed in recovery"
            runs.kills.again += attempt > 0
        runs.run_until_success()
        job.check()
    assert runs.kills.landed["recovery"] >= rounds, runs.kills.describe()
    return runs.kills
