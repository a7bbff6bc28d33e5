"""Proof by crashing, aimed: kills inside every phase of a run, and while a run finishes an earlier run's commit.

After each campaign every source row is published exactly once, the state matches the published data, no
commit is left unfinished and nothing but data, published files and state is left (tests/crash/harness.py).
"""

import os

from tests.crash.harness import CrashJob
from tests.crash.phases import PHASES, phase_campaign, recovery_campaign

PHASE_KILLS = int(os.environ.get("GPY_CRASH_PHASE_KILLS", "36"))
RECOVERY_ROUNDS = int(os.environ.get("GPY_CRASH_RECOVERY_ROUNDS", "4"))


def test_kills_inside_every_phase(tmp_path):
    kills = phase_campaign(CrashJob(tmp_path), kills=PHASE_KILLS, seed=20261123)
    assert set(kills.landed) == set(PHASES), kills.describe()
    assert sum(kills.landed.values()) >= PHASE_KILLS


def test_kills_while_a_run_finishes_an_earlier_runs_commit(tmp_path):
    kills = recovery_campaign(CrashJob(tmp_path), rounds=RECOVERY_ROUNDS, seed=20261124)
    assert kills.landed["recovery"] >= RECOVERY_ROUNDS, kills.describe()
    assert set(kills.landed) <= {"recovery", "commit.fs_rename", "commit.dataset_state"}, kills.describe()
