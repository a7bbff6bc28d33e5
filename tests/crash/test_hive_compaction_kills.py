"""A snapshot + deltas merge (Gobblin's Hive compactor) SIGKILLed at each of its commit boundaries leaves the old
output or the new one — never a mix, never a key twice — and the next run finishes the job: the output then holds
each key once, its last delta's record, and the run after that finds nothing to do.

Each round pulls one more delta (ten new members, five updated) and merges the snapshot with every delta so far,
so every commit replaces an output that exists.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.compaction.hive_tables import Members, member, read_rows, write_table


class Campaign:
    """A snapshot merged again with each new delta, by runs that may be killed."""

    def __init__(self, root: Path) -> None:
        self.members = Members(root, "parquet")
        write_table(self.members.base / "snapshot", [member(i, "s") for i in range(20)], "parquet")
        self.deltas = 0
        self.expected: dict[int, str] = {i: "s" for i in range(20)}
        self.log = root / "boundaries.log"
        self.job = self.members.job()

    def add_delta(self) -> None:
        self.deltas += 1
        n, pulled = self.deltas, f"d{self.deltas}"
        top = max(self.expected) + 1
        rows = [member(i, pulled) for i in [*range(top - 5, top), *range(top, top + 10)]]
        write_table(self.members.base / "delta" / str(n), rows, "parquet")
        self.expected = {**self.expected, **{r["member_id"]: pulled for r in rows}}
        deltas = {k: None for i in (1, 2) for k in (f"delta.{i}.name", f"delta.{i}.pkey", f"delta.{i}.datalocation")}
        for i in range(1, n + 1):
            deltas.update({f"delta.{i}.pkey": "member_id",
                           f"delta.{i}.datalocation": str(self.members.base / "delta" / str(i))})
        self.job = self.members.job(**deltas)

    def killed_run(self, env: dict[str, str]) -> int:
        """A run in a process of its own (which the kill ends); 0 when it finished first."""
        proc = subprocess.run([sys.executable, "-m", "gobblin_py.cli", "--log-format", "json", "run", str(self.job),
                               "--engine", "local"], env={**os.environ, **env}, capture_output=True,
                              timeout=120)
        assert proc.returncode in (0, -signal.SIGKILL), proc.stderr.decode(errors="replace")[-3000:]
        return proc.returncode

    def found(self) -> dict[int, str]:
        rows = read_rows(self.members.output)
        assert len({r["member_id"] for r in rows}) == len(rows), "a key twice"
        return {r["member_id"]: r["pulled"] for r in rows}

    def check_old_or_new(self, old: dict[int, str]) -> None:
        output = self.members.output
        if not output.exists():  # between the swap's two renames: the old output waits beside it
            assert (output.parent / f".{output.name}.gpy-old").exists()
            return
        assert self.found() in (old, self.expected), "a mix of old and new output"

    def check_finished(self) -> None:
        assert self.found() == self.expected
        assert not list(self.members.base.glob(".*.gpy-*")), "a new or old output left beside the output"
        assert not list((self.members.root / "tmp").rglob("_commit_sequences/**/*.json"))
        assert "nothing new to pull" in self.members.run(self.job)  # in this process: no kill here


def test_a_merge_killed_at_every_commit_boundary_leaves_old_or_new_output(tmp_path):
    campaign = Campaign(tmp_path)
    campaign.add_delta()
    campaign.members.run(campaign.job)
    campaign.check_finished()
    killed_at = []
    for n in range(1, 30):
        old = campaign.expected
        campaign.add_delta()
        code = campaign.killed_run({"GPY_TEST_CRASH_AT_BOUNDARY": str(n), "GPY_TEST_BOUNDARY_LOG": str(campaign.log)})
        if code == 0:
            break  # fewer than n boundaries: every one was covered
        campaign.check_old_or_new(old)
        campaign.members.run(campaign.job)  # the next run, in this process: it finishes the commit first
        campaign.check_finished()
        killed_at.append(campaign.log.read_text().splitlines()[-1].split(":")[-1])
    assert {"before_log", "logged", "compaction_swap", "dataset_state", "done"} <= set(killed_at), killed_at

