"""Proof by crashing, on S3: a job whose data, staging, output, published files, state store, commit log and
lock all live in a bucket, killed anywhere, loses nothing and publishes nothing twice."""

import pytest

from tests.crash.harness import CrashJob, boundary_campaign, check_boundaries
from tests.crash.phases import COMMIT_STEPS, PHASES, phase_campaign
from tests.crash.random_kills import random_campaign
from tests.crash.sizes import size, soak

# nine: four drawn over the tasks, four over the commits, one over the window, so one kill of each stratum landing
# outside it still leaves the spread check met
S3_RANDOM_KILLS = size("GPY_S3_CRASH_KILLS", 9, 9)
# one kill inside each of the ten phases (the campaign goes on until each has had one); `make soak` two each
S3_PHASE_KILLS = size("GPY_S3_CRASH_PHASE_KILLS", len(PHASES), 20)
# the datasets whose every boundary a run is killed at while the other commits beside it: the two commit alike,
# so `make test` walks the first's boundaries with the second in flight, and `make soak` walks each in turn
BOUNDARY_SCOPES = ("eu", "us") if soak() else ("eu",)


def _job(tmp_path, s3_server, bucket) -> CrashJob:
    # two datasets (each run commits them in parallel), every kind of commit boundary of each
    return CrashJob(tmp_path, store_url=f"s3://{bucket}/crash", job_keys=s3_server.job_keys(), datasets=("eu", "us"))


def test_kill_at_every_commit_boundary_on_s3(tmp_path, s3_server, bucket):
    job = _job(tmp_path, s3_server, bucket)
    # each dataset's boundaries counted on their own: with both committing at once, the n-th boundary of a run
    # is whichever dataset's comes first, and a kind of step could be missed
    covered = boundary_campaign(job, full_checks=False, each_dataset=True, scopes=BOUNDARY_SCOPES)
    # each dataset walked: before logging, logged, its file's copy-and-delete step, the state step, done
    assert covered >= len(BOUNDARY_SCOPES) * 5, covered
    check_boundaries(job, covered, {"published_records", "dataset_state"}, datasets=BOUNDARY_SCOPES)
    assert not list(tmp_path.rglob("*.jst")) and not (tmp_path / "published").exists()  # all of it was on S3


# `make soak` runs it, `make test` leaves it out: there the runs on S3 are killed at a random instant inside each of
# the ten phases and at each commit boundary (the other tests here), which reach every phase and step a random
# instant lands in, and the random campaign itself runs on local disk and on Kafka (tests/crash/sizes.py)
@pytest.mark.soak
def test_random_sigkills_on_s3(tmp_path, s3_server, bucket):
    job = _job(tmp_path, s3_server, bucket)
    # twelve files a run: on S3 the lock, the look for unfinished commits and the listing take a good part of the
    # window before the tasks; the instants drawn over the tasks and over the commits reach both
    random_campaign(job, kills=S3_RANDOM_KILLS, seed=20261123, files_per_run=12).check_spread()


def test_kills_inside_every_phase_on_s3(tmp_path, s3_server, bucket):
    job = _job(tmp_path, s3_server, bucket)
    kills = phase_campaign(job, kills=S3_PHASE_KILLS, seed=20261125)  # every check after
    assert set(PHASES) <= {phase for phase, count in kills.landed.items() if count}, kills.describe()


def test_kills_inside_every_phase_with_local_staging_on_s3(tmp_path, s3_server, bucket):
    # staged on local disk, published and stated on S3: each file is uploaded by a conditional put that no
    # lookup precedes; one commit thread, so the datasets' commits are logged in one batch file. The kills aim at
    # the commit's phases and at the recovery of what they left (the other phases are as in the test above)
    keys = (f"{s3_server.job_keys()}\nwriter.staging.dir={tmp_path}/staging\nwriter.output.dir={tmp_path}/output\n"
            "job.commit.parallelCommits=1\n")
    job = CrashJob(tmp_path / "job", store_url=f"s3://{bucket}/crash", job_keys=keys, datasets=("eu", "us"))
    phase_campaign(job, kills=6, seed=20261127, phases=("commit.log", *COMMIT_STEPS, "commit.unlog", "recovery"))

