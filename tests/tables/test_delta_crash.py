"""Proof by crashing, on Delta tables: a run killed at each of its commit boundaries in turn, then at random
instants, each finished by the next run, loses no row and adds none twice; the replay finds its own transaction
in the table."""

from __future__ import annotations

import pytest

from tests.crash.harness import ROWS_PER_FILE, boundary_campaign, killed_boundaries
from tests.crash.random_kills import random_campaign
from tests.tables.delta_crash import DeltaCrashJob
from tests.tables.delta_reads import duckdb_rows


RANDOM_KILLS = 4


@pytest.mark.parametrize("merge", [False, True], ids=["append", "upsert"])
def test_a_delta_publish_killed_at_every_commit_boundary(tmp_path, merge):
    job = DeltaCrashJob(tmp_path, datasets=("eu",), merge=merge)
    covered = boundary_campaign(job, full_checks=False)
    kinds = killed_boundaries(job)["eu"]
    step = "delta_merge" if merge else "delta_append"
    assert kinds == ["before_log", "logged", "fs_rename", "published_records", step, "dataset_state", "done"], kinds
    assert covered == len(kinds)
    if not merge:  # then killed at random instants: in tasks, in commits, between
        landings = random_campaign(job, kills=RANDOM_KILLS, seed=38)
        assert landings.kills == RANDOM_KILLS and landings.commits >= 1, landings.describe()
    ids = duckdb_rows(tmp_path / "published" / "crash" / "eu", "order_id").column("order_id").to_pylist()
    assert sorted(ids) == [k * 1000 + i for k in range(job.files_written) for i in range(ROWS_PER_FILE)]
