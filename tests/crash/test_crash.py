"""Proof by crashing: a job killed anywhere loses nothing and publishes nothing twice.

Kills at every commit boundary in turn, and at uniformly random instants (which mostly land while tasks run:
tests/crash/test_phases.py aims kills at every phase, commits and their recovery included).
"""

import os


from tests.crash.harness import CrashJob, boundary_campaign, random_campaign

CI_RANDOM_KILLS = int(os.environ.get("GPY_CRASH_KILLS", "20"))


def test_kill_at_every_commit_boundary(tmp_path):
    # a commit thread per dataset: each dataset's commit logged on its own (batches: test_commit_batches.py)
    job = CrashJob(tmp_path, job_keys="job.commit.parallelCommits=3\n")
    covered = boundary_campaign(job)
    # three datasets, each: before logging, logged, one step per file and the state step, done
    assert covered >= 3 * 4, covered
    assert job.kills >= covered


def test_random_sigkills(tmp_path):
    job = CrashJob(tmp_path)
    random_campaign(job, kills=CI_RANDOM_KILLS, seed=20261120)
    assert job.kills >= CI_RANDOM_KILLS
