"""A compaction SIGKILLed at each of its commit boundaries, and inside its task, leaves the old output or the new
one — never a mix, never a record twice — and the next run finishes the job: the output then holds each distinct
record once, nothing is left beside it, no commit is pending.

Each round adds late data to the hour and recompacts it from the input
(``compaction.recompact.from.input.for.late.data`` with ``compaction.job.overwrite.output.dir``), so every commit
replaces an output that exists.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from pathlib import Path

from tests.compaction.lake import Lake, event, ids

HOUR = "2017/04/03/10"


class Campaign:
    """One hour of a lake, compacted again after each batch of late events, by runs that may be killed."""

    def __init__(self, root: Path) -> None:
        self.lake = Lake(root, "PARQUET")
        self.job = self.lake.gobblin_job("minutely_to_hourly.pull",
                                         compaction__recompact__from__input__for__late__data="true",
                                         compaction__job__overwrite__output__dir="true")
        self.log = root / "boundaries.log"
        self.next_id = 0
        self.expected: list[tuple[int, int]] = []
        self.dest = self.lake.dataset / "hourly" / HOUR

    def add_late_events(self) -> None:
        """Ten new events and five repeats of earlier ones, in the hour."""
        repeats = [event(i, i % 60) for i in range(max(0, self.next_id - 5), self.next_id)]
        fresh = [event(i, i % 60) for i in range(self.next_id, self.next_id + 10)]
        self.next_id += 10
        self.lake.ingest(repeats + fresh)
        self.expected = [(i, 0) for i in range(self.next_id)]

    def run(self, env: dict[str, str] | None = None) -> int:
        proc = subprocess.run([sys.executable, "-m", "gobblin_py.cli", "--log-format", "json", "run", str(self.job),
                               "--engine", "local"], env={**os.environ, **(env or {})}, capture_output=True,
                              timeout=120)
        assert proc.returncode in (0, -signal.SIGKILL), proc.stderr.decode(errors="replace")[-3000:]
        return proc.returncode

    def check_old_or_new(self, old: list[tuple[int, int]]) -> None:
        """After a kill: the output is the old one or the new one whole (or, between the swap's two renames, absent
        with the old one waiting beside it for the next run to finish the swap)."""
        if not self.dest.exists():
            assert (self.dest.parent / f".{self.dest.name}.gpy-old").exists()
            return
        found = ids(self.lake.records(f"hourly/{HOUR}"))
        assert len(found) == len(set(found)), "a record twice"
        assert found in (old, self.expected), "a mix of old and new output"

    def check_finished(self) -> None:
        assert ids(self.lake.records(f"hourly/{HOUR}")) == self.expected
        assert not list(self.dest.parent.glob(".*.gpy-*")), "a new or old output left beside the destination"
        pending = [p for p in (self.lake.root / "tmp").rglob("_commit_sequences/**/*.json")]
        assert not pending, pending
        assert (self.dest / "_COMPACTION_COMPLETE").exists()


def test_a_compaction_killed_at_every_commit_boundary_leaves_old_or_new_output(tmp_path):
    campaign = Campaign(tmp_path)
    campaign.add_late_events()
    assert campaign.run() == 0
    campaign.check_finished()
    killed_at = []
    for n in range(1, 30):
        old = campaign.expected
        campaign.add_late_events()
        code = campaign.run({"GPY_TEST_CRASH_AT_BOUNDARY": str(n), "GPY_TEST_BOUNDARY_LOG": str(campaign.log)})
        if code == 0:
            break  # fewer than n boundaries: every one was covered
        campaign.check_old_or_new(old)
        assert campaign.run() == 0
        campaign.check_finished()
        killed_at.append(campaign.log.read_text().splitlines()[-1].split(":")[-1])
    assert {"before_log", "logged", "compaction_swap", "compaction_marker", "done"} <= set(killed_at), killed_at


def test_a_compaction_killed_inside_its_task_or_commit_at_random_instants_recovers(tmp_path):
    campaign = Campaign(tmp_path)
    rng = random.Random(38)
    campaign.add_late_events()
    assert campaign.run() == 0
    for phase in ("tasks", "commit.datasets", "tasks", "commit.compaction_swap"):
        old = campaign.expected
        campaign.add_late_events()
        delay = rng.uniform(0, 0.05)
        assert campaign.run({"GPY_TEST_KILL_IN_PHASE": f"{phase}:1:{delay:.3f}"}) == -signal.SIGKILL
        campaign.check_old_or_new(old)
        assert campaign.run() == 0
        campaign.check_finished()
