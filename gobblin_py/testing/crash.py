"""Killing ``gpy run`` between two commit steps, and checking what the next run makes of it.

The runtime marks each boundary of a dataset's commit — before its commit sequence is logged, once logged, after
each step, done — and a process started with ``GPY_TEST_CRASH_AT_BOUNDARY=n`` SIGKILLs itself at its n-th
boundary (``gobblin_py.io.crash_points.boundary``), as a crash there would. :func:`boundary_campaign`
kills a run at its first boundary, reruns the job until it succeeds and checks; then, with new data, kills a run
at its second boundary; and so on until a run has fewer boundaries than the one it was to die at.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from dataclasses import dataclass, field

from gobblin_py.testing.harness import ContractJob

CRASH_ENV = "GPY_TEST_CRASH_AT_BOUNDARY"
LOG_ENV = "GPY_TEST_BOUNDARY_LOG"


@dataclass
class Campaign:
    """What a boundary campaign did: the boundaries it killed runs at, by name."""

    killed_at: list[str] = field(default_factory=list)

    @property
    def covered(self) -> int:
        """How many boundaries a run was killed at."""
        return len(self.killed_at)


def run_until_success(job: ContractJob, tries: int = 3) -> None:
    """Rerun the job (``gpy run`` in a subprocess) until it exits 0."""
    outputs = []
    for _ in range(tries):
        done = job.run_cli()
        if done.returncode == 0:
            return
        outputs.append(f"exit {done.returncode}: {done.stdout[-1500:]}{done.stderr[-1500:]}")
    raise AssertionError(f"the job did not succeed after a crash in {tries} runs:\n" + "\n".join(outputs))


def boundary_campaign(job: ContractJob, published: Callable[[], list], add_data: Callable[[], None],
                      check: Callable[[], None], limit: int = 20) -> Campaign:
    """Kill a run at each commit boundary in turn, rerun to success and ``check`` after each, adding data between.

    A run killed before its commit sequence was logged, or just after, must have published nothing: the
    publisher's ``plan`` changes nothing, its steps do. Returns the boundaries covered.
    """
    campaign = Campaign()
    for n in range(1, limit + 1):
        before = sorted(map(repr, published()))
        log = job.root / f"boundary-{n}.log"
        done = job.run_cli(env={CRASH_ENV: str(n), LOG_ENV: str(log)})
        if done.returncode == 0:  # the run had fewer than n boundaries: every one was covered
            check()
            assert not job.pending_commits(), "a run that was not killed left a commit sequence behind"
            return campaign
        assert done.returncode == -signal.SIGKILL, (
            f"the run to be killed at boundary {n} exited {done.returncode}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
        name = log.read_text().split()[-1]
        campaign.killed_at.append(name)
        if name.endswith((":before_log", ":logged")):
            assert sorted(map(repr, published())) == before, f"killed at {name}: data was published before any step ran"
        run_until_success(job)
        check()
        assert not job.pending_commits(), f"killed at {name}: a commit sequence was left behind"
        add_data()
    raise AssertionError(f"runs still had a boundary {limit}: raise the campaign's limit")
