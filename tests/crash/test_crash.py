"""Proof by crashing: a job killed anywhere loses nothing and publishes nothing twice.

Kills at every commit boundary in turn, and at random instants drawn over the measured window from taking the lock
to the run's end and over its tasks and its commits (tests/crash/random_kills.py), each kill's landing read from
the run's phase log (tests/crash/test_phases.py aims kills at every phase, commits and their recovery included).
"""

from tests.crash.harness import DATASETS, CrashJob, boundary_campaign, killed_boundaries
from tests.crash.random_kills import random_campaign
from tests.crash.sizes import size, soak

# nine (`make soak`: 30): four drawn over the tasks, four over the commits, one over the window; the spread check
# fails the test unless a third land in each of the tasks and the commits, which one kill of each stratum landing
# outside it still leaves met (tests/crash/sizes.py)
RANDOM_KILLS = size("GPY_CRASH_KILLS", 9, 30)
# the datasets whose every boundary a run is killed at, the others committing beside it: the three commit alike,
# so `make test` walks the first's boundaries and `make soak` each one's in turn
BOUNDARY_SCOPES = DATASETS if soak() else DATASETS[:1]


def test_kill_at_every_commit_boundary(tmp_path):
    # a commit thread per dataset, each dataset's commit logged on its own (batches: test_commit_batches.py);
    # the boundaries counted per dataset, so a dataset's run is killed at each of its own boundaries in turn
    # while the other two commit beside it (the first dataset's; each one's in a soak)
    job = CrashJob(tmp_path, job_keys="job.commit.parallelCommits=3\n")
    covered = boundary_campaign(job, each_dataset=True, scopes=BOUNDARY_SCOPES)
    killed = killed_boundaries(job)
    assert sorted(killed) == sorted(BOUNDARY_SCOPES) and sum(map(len, killed.values())) == covered, killed
    for kinds in killed.values():  # each dataset its one file: before its log, logged, each step, done
        assert kinds == ["before_log", "logged", "fs_rename", "published_records", "dataset_state", "done"], killed


def test_random_sigkills(tmp_path):
    # 24 datasets of two new files a run, committed one after another, each logged on its own: tasks and commits
    # fill most of the window from the lock to the end, so the kills drawn over the whole window land in each too
    job = CrashJob(tmp_path, datasets=tuple(f"region{i:02d}" for i in range(24)),
                   job_keys="job.commit.parallelCommits=1\ngobblin.runtime.commit.sequence.batch.size=1\n")
    landings = random_campaign(job, kills=RANDOM_KILLS, seed=20261120, files_per_run=2 * len(job.datasets))
    landings.check_spread()
