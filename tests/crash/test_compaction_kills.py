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

    def __init__(self, root: Path, recompact: bool = True) -> None:
        self.lake = Lake(root, "PARQUET")
        keys = {"compaction__recompact__from__input__for__late__data": "true",
                "compaction__job__overwrite__output__dir": "true"} if recompact else {}
        self.job = self.lake.gobblin_job("minutely_to_hourly.pull", **keys)
        self.log = root / "boundaries.log"
        self.next_id = 0
        self.expected: list[tuple[int, int]] = []
        self.dest = self.lake.dataset / "hourly" / HOUR

    def add_late_events(self, minute: int | None = None) -> None:
        """Ten new events and five repeats of earlier ones, in the hour (all in one ``minute``: one file)."""
        repeats = [event(i, i % 60 if minute is None else minute) for i in range(max(0, self.next_id - 5), self.next_id)]
        fresh = [event(i, i % 60 if minute is None else minute) for i in range(self.next_id, self.next_id + 10)]
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
    for phase in ("tasks", "commit.compaction_swap"):
        old = campaign.expected
        campaign.add_late_events()
        delay = rng.uniform(0, 0.05)
        assert campaign.run({"GPY_TEST_KILL_IN_PHASE": f"{phase}:1:{delay:.3f}"}) == -signal.SIGKILL
        campaign.check_old_or_new(old)
        assert campaign.run() == 0
        campaign.check_finished()


def test_late_files_set_aside_by_a_run_killed_at_every_commit_boundary_are_copied_once(tmp_path):
    """Without recompaction, each round's late file is copied into hourly_late by the commit: a kill after the copy
    or after the marker leaves it copied or not, and the next run copies it exactly once; the output never
    changes."""
    campaign = Campaign(tmp_path, recompact=False)
    campaign.add_late_events(minute=7)
    assert campaign.run() == 0
    output = ids(campaign.lake.records(f"hourly/{HOUR}"))
    late_files = 0
    for n in (3, 4):  # the copy's boundary and the marker's (the first campaign covers the log's own)
        campaign.add_late_events(minute=7)
        late_files += 1
        code = campaign.run({"GPY_TEST_CRASH_AT_BOUNDARY": str(n), "GPY_TEST_BOUNDARY_LOG": str(campaign.log)})
        copied = campaign.lake.data_files(f"hourly_late/{HOUR}")
        assert len(copied) in (late_files - 1, late_files) and len(set(copied)) == len(copied)
        assert campaign.run() == 0
        assert len(campaign.lake.data_files(f"hourly_late/{HOUR}")) == late_files  # each late file once
        assert ids(campaign.lake.records(f"hourly/{HOUR}")) == output
        assert not list((campaign.lake.root / "tmp").rglob("_commit_sequences/**/*.json"))
        assert code == -signal.SIGKILL
    killed = [line.split(":")[-1] for line in campaign.log.read_text().splitlines()]
    assert killed == ["compaction_late_copy", "compaction_marker"], killed
