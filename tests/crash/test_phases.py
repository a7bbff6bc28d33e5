"""Proof by crashing, aimed: kills inside every phase of a run, and while a run finishes an earlier run's commit.

After each campaign every source row is published exactly once, the state matches the published data, no
commit is left unfinished and nothing but data, published files and state is left (tests/crash/harness.py).
"""

from tests.crash.harness import CrashJob
from tests.crash.phases import BATCH_PHASES, COMMIT_STEPS, phase_campaign, recovery_campaign
from tests.crash.sizes import size

# one kill inside each phase (the campaign goes on until every phase has had one, whatever its size); `make soak`
# gives each phase three or more, at other entries and instants
PHASE_KILLS = size("GPY_CRASH_PHASE_KILLS", len(BATCH_PHASES), 36)
# each round: a commit left unfinished, then one to three kills while runs finish it (`make soak`: 4)
RECOVERY_ROUNDS = size("GPY_CRASH_RECOVERY_ROUNDS", 2, 4)


def test_kills_inside_every_phase(tmp_path):
    # the campaign checks every row, the state and the folders after it
    kills = phase_campaign(CrashJob(tmp_path), kills=PHASE_KILLS, seed=20261123, phases=BATCH_PHASES)
    assert set(BATCH_PHASES) <= {phase for phase, count in kills.landed.items() if count}, kills.describe()


def test_kills_inside_every_commit_phase_with_the_mysql_state_store(tmp_path, mysql_db):
    # the datasets' states in MariaDB: a kill inside each phase of a commit and of the recovery of one, a kill in
    # the state step cutting the transaction that writes a run's row and its current row
    phases = ("recovery", "commit.log", *COMMIT_STEPS, "commit.unlog")
    kills = phase_campaign(CrashJob(tmp_path, job_keys=mysql_db.state_store_keys()), kills=len(phases),
                           seed=20261129, phases=phases)
    assert set(phases) <= {phase for phase, count in kills.landed.items() if count}, kills.describe()


def test_kills_while_a_run_finishes_an_earlier_runs_commit(tmp_path):
    # each round checks every row, the state and the folders, and that its first recovery kill landed
    recovery_campaign(CrashJob(tmp_path), rounds=RECOVERY_ROUNDS, seed=20261124)
