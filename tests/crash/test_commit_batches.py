"""Commit sequences logged in batches (one file for many datasets): replay, partial finish, kills at every boundary,
inside every phase and while a run finishes an earlier run's batch."""

from gobblin_py.runtime.commit.commit_sequence import (
    CommitSequence,
    CommitSequenceStore,
    DatasetStateStep,
    FsRenameStep,
)
from gobblin_py.sdk.run_states import DatasetState
from gobblin_py.store import FsDatasetStateStore
from tests.crash.harness import CrashJob, boundary_campaign, killed_boundaries
from tests.crash.phases import BATCH_PHASES, phase_campaign, recovery_campaign
from tests.support.jobs import Job, run_local_process, write_csv

BATCHED = "gobblin.runtime.commit.sequence.batch.size=3\njob.commit.parallelCommits=1\n"


def _sequence(store, urn: str, job_id: str = "job_J_1", steps=()) -> CommitSequence:
    return CommitSequence("J", urn, job_id, [*steps, DatasetStateStep(store, urn, DatasetState("J", job_id, dataset_urn=urn))])


def test_a_batch_round_trips_and_keeps_only_what_is_left(tmp_path):
    store = FsDatasetStateStore(str(tmp_path / "state"))
    sequences = CommitSequenceStore.for_job({}, store)
    batch = [_sequence(store, "+batch-x"), _sequence(store, "db:t 1/x", steps=[FsRenameStep("/a", "/b")])]
    path = sequences.put_batch("J", "job_J_1", 0, batch)
    [name] = [p.name for p in (tmp_path / "state" / "_commit_sequences" / "J").iterdir()]
    assert name == "+batch-job_J_1-0.json"
    back = list(CommitSequenceStore.for_job({}, store).pending("J"))
    assert [b.to_json() for b in back] == [b.to_json() for b in batch] and {b.batch for b in back} == {path}
    back = list(sequences.pending("J"))  # the datasets of a batch count as logged once pending() has read it
    assert sequences.exists("J", "db:t 1/x") and sequences.exists("J", "+batch-x")
    sequences.finish_batch(path, back, [back[1]])
    assert [s.urn for s in sequences.pending("J")] == ["db:t 1/x"]
    assert not sequences.exists("J", "+batch-x")
    sequences.finish_batch(path, back[1:], [])
    assert list(sequences.pending("J")) == [] and not sequences.exists("J", "db:t 1/x")


def test_a_batch_with_an_unfinishable_commit_finishes_the_others_and_keeps_that_one(tmp_path):
    job = Job(tmp_path, extra="source.filebased.dataset.urn.level=subdirectory\ngobblin.runtime.commit.sequence.max.retries=2\n")
    write_csv(job.data / "eu" / "a.csv", 1)
    store = FsDatasetStateStore(str(job.state))
    sequences = CommitSequenceStore.for_job({}, store)
    lost = FsRenameStep(str(tmp_path / "lost.parquet"), str(tmp_path / "nowhere.parquet"))
    sequences.put_batch("Orders", "job_Orders_1", 0, [
        CommitSequence("Orders", "apac", "job_Orders_1", [DatasetStateStep(store, "apac", DatasetState("Orders", "job_Orders_1", dataset_urn="apac"))]),
        CommitSequence("Orders", "us", "job_Orders_1", [lost, DatasetStateStep(store, "us", DatasetState("Orders", "job_Orders_1", dataset_urn="us"))]),
    ])
    result = run_local_process(job)
    assert result.returncode == 1
    assert "dataset us: FAILED" in result.stdout and "could not be finished after 2 tries" in result.stdout
    assert store.get_latest_dataset_state("Orders", "apac").job_id == "job_Orders_1"  # finished from the batch
    assert store.get_latest_dataset_state("Orders", "us") is None
    assert job.published_ids() == list(range(1, 41))  # eu went ahead
    [left] = list(CommitSequenceStore.for_job({}, store).pending("Orders"))
    assert left.urn == "us" and left.batch is not None  # alone in its batch file, for the next run (or a person)


def test_a_batched_run_commits_every_dataset_in_one_log(tmp_path):
    job = CrashJob(tmp_path, job_keys=BATCHED)
    job.add_files(3)
    assert job.run(env={"GPY_TEST_CRASH_AT_BOUNDARY": "2"}) == -9  # killed with the batch logged
    [batch] = list((tmp_path / "state" / "_commit_sequences" / "Crash").iterdir())
    assert batch.name.startswith("+batch-") and batch.read_text().count('"urn"') >= 3
    job.run_until_success()
    job.check()


def test_kill_at_every_boundary_of_a_batched_commit(tmp_path):
    job = CrashJob(tmp_path, job_keys=BATCHED)
    covered = boundary_campaign(job)
    # one batch of three datasets: before logging, logged, each dataset's steps, the group sync, done
    killed = killed_boundaries(job)
    where = [kind for kinds in killed.values() for kind in kinds]
    assert len(where) == covered and set(killed) <= {"batch0", *job.datasets}, killed
    assert killed["batch0"][:2] == ["before_log", "logged"] and killed["batch0"][-1] == "done", killed
    assert {"fs_rename", "published_records", "dataset_state"} <= set(where), killed


def test_kills_inside_every_phase_of_batched_commits(tmp_path):
    phase_campaign(CrashJob(tmp_path, job_keys=BATCHED), kills=12, seed=20261125, phases=BATCH_PHASES)


def test_kills_while_a_run_finishes_an_earlier_runs_batch(tmp_path):
    recovery_campaign(CrashJob(tmp_path, job_keys=BATCHED), rounds=2, seed=20261126)
