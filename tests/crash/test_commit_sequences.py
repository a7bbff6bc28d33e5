"""Commit sequences: idempotent steps, replay on the next run, datasets skipped when replay keeps failing."""

import json
import os
import re

import pytest

from gobblin_py.runtime.commit.commit_sequence import (
    CommitSequence,
    CommitSequenceStore,
    DatasetStateStep,
    FsRenameStep,
)
from gobblin_py.sdk.commit import PublishConflictError
from gobblin_py.sdk.errors import CorruptFileError, GobblinPyError
from gobblin_py.sdk.run_states import DatasetState
from gobblin_py.store import FsDatasetStateStore
from tests.support.jobs import Job, run_local_process, write_csv


def test_rename_step_is_idempotent_and_finishes_an_interrupted_copy(tmp_path):
    src, dst = tmp_path / "out" / "a.parquet", tmp_path / "final" / "x" / "a.parquet"
    src.parent.mkdir()
    src.write_bytes(b"data")
    step = FsRenameStep(str(src), str(dst))
    assert not step.is_completed()
    step.execute()
    assert step.is_completed() and dst.read_bytes() == b"data" and not src.exists()
    step.execute()  # again: nothing happens
    assert dst.read_bytes() == b"data"
    # a move interrupted after the link, before the unlink: both names are the one file
    os.link(dst, src)
    assert not step.is_completed()
    step.execute()
    assert step.is_completed() and not src.exists() and dst.read_bytes() == b"data"
    # another file of the same size at the destination is not this move's: a conflict, both kept
    src.write_bytes(b"DATA")
    with pytest.raises(PublishConflictError, match="already exists"):
        step.execute()
    assert src.read_bytes() == b"DATA" and dst.read_bytes() == b"data"


def test_rename_step_with_neither_side_fails_loudly(tmp_path):
    step = FsRenameStep(str(tmp_path / "gone"), str(tmp_path / "never"))
    with pytest.raises(GobblinPyError, match="it is gone"):
        step.execute()
    with pytest.raises(GobblinPyError, match="it is gone"):
        step.execute(fresh=True)


def test_fresh_rename_moves_the_file_into_a_new_folder(tmp_path):
    src, dst = tmp_path / "out" / "a.parquet", tmp_path / "final" / "x" / "a.parquet"
    src.parent.mkdir()
    src.write_bytes(b"data")
    FsRenameStep(str(src), str(dst)).execute(fresh=True)
    assert dst.read_bytes() == b"data" and not src.exists()


def test_sequence_round_trips_through_the_store(tmp_path):
    store = FsDatasetStateStore(str(tmp_path / "state"))
    sequences = CommitSequenceStore.for_job({}, store)
    state = DatasetState("J", "job_J_1", dataset_urn="db:t 1/x")
    sequence = CommitSequence("J", "db:t 1/x", "job_J_1", [FsRenameStep("/a", "/b"), DatasetStateStep(store, "db:t 1/x", state)])
    sequences.put(sequence)
    [path] = list((tmp_path / "state" / "_commit_sequences" / "J").iterdir())
    assert path.name == "db%3At%201%2Fx.json"  # one flat file per dataset, whatever its URN
    [back] = list(sequences.pending("J"))
    assert back.to_json() == sequence.to_json()
    assert isinstance(back.steps[1], DatasetStateStep) and back.steps[1].state == state
    sequences.delete(back)
    assert list(sequences.pending("J")) == []


@pytest.mark.parametrize("urn", ["_orders", ".orders", "..", "+batch-x"])
def test_a_dataset_whose_name_starts_like_a_hidden_file_or_a_batch_has_its_commit_finished(tmp_path, urn):
    # a leading dot or underscore marks a temporary file or a sidecar in the log's folder, which a listing of
    # pending commits passes over: a dataset so named must not get such a name, or its commit is never finished
    store = FsDatasetStateStore(str(tmp_path / "state"))
    sequences = CommitSequenceStore.for_job({}, store)
    sequence = CommitSequence("J", urn, "job_J_1", [FsRenameStep("/a", "/b")])
    sequences.put(sequence)
    [back] = list(CommitSequenceStore.for_job({}, store).pending("J"))
    assert back.urn == urn and back.batch is None


def test_at_least_once_writes_no_sequences(tmp_path):
    job = Job(tmp_path, extra="gobblin.runtime.delivery.semantics=AT_LEAST_ONCE\n")
    write_csv(job.data / "a.csv", 1)
    assert run_local_process(job).returncode == 0
    assert job.published_ids() == list(range(1, 41))
    assert not (job.state / "_commit_sequences").exists()


def test_unknown_delivery_semantics_is_a_usage_error(tmp_path):
    job = Job(tmp_path, extra="gobblin.runtime.delivery.semantics=AT_MOST_ONCE\n")
    write_csv(job.data / "a.csv", 1)
    result = run_local_process(job)
    assert result.returncode == 2 and "key 'gobblin.runtime.delivery.semantics': 'AT_MOST_ONCE'" in result.stderr


def test_an_unfinishable_pending_commit_skips_its_dataset_loudly_while_others_proceed(tmp_path):
    # its tries wait 0.2, 0.4, 0.6 s... (at most 2 s): the run's retry budget ends them long before 100 tries
    job = Job(tmp_path, extra="source.filebased.dataset.urn.level=subdirectory\n"
                              "gobblin.runtime.commit.sequence.max.retries=100\ngpy.retry.budget.seconds=1\n")
    write_csv(job.data / "eu" / "a.csv", 1)
    write_csv(job.data / "us" / "a.csv", 101)
    # a commit logged by an earlier run whose file has since vanished from both sides
    store = FsDatasetStateStore(str(job.state))
    sequences = CommitSequenceStore.for_job({}, store)
    state = DatasetState("Orders", "job_Orders_1", dataset_urn="us")
    sequences.put(CommitSequence("Orders", "us", "job_Orders_1", [
        FsRenameStep(str(tmp_path / "lost.parquet"), str(tmp_path / "nowhere.parquet")),
        DatasetStateStep(store, "us", state),
    ]))
    result = run_local_process(job)
    assert result.returncode == 1
    assert "dataset us: FAILED" in result.stdout and "could not be finished after 4 tries" in result.stdout
    assert "not tried again: the run's retry budget is spent (gpy.retry.budget.seconds=1)" in result.stdout
    assert "pending_commit_failed" in result.stderr
    assert job.published_ids() == list(range(1, 41))  # eu went ahead
    assert [s.urn for s in sequences.pending("Orders")] == ["us"]  # kept for the next run (or a person)
    assert store.get_latest_dataset_state("Orders", "us") is None


def test_a_commit_cut_short_is_finished_by_the_next_run(tmp_path):
    job = Job(tmp_path)
    write_csv(job.data / "a.csv", 1)
    write_csv(job.data / "b.csv", 101)
    # boundary 1: before logging; 2: logged; 3, 4: after each file moved; 5: after the state; 6: done
    from tests.support.cli import run_gpy

    result = run_gpy("run", str(job.file), "--engine", "local", env={"GPY_TEST_CRASH_AT_BOUNDARY": "3"})
    assert result.returncode == -9
    assert len(list(job.final.rglob("*.parquet"))) == 1  # half published
    assert FsDatasetStateStore(str(job.state)).get_latest_dataset_state("Orders", "") is None  # state not yet
    [pending] = list((job.state / "_commit_sequences" / "Orders").iterdir())
    assert json.loads(pending.read_text())["urn"] == ""
    again = run_local_process(job)
    assert again.returncode == 0, again.stderr
    assert "pending_commit_finished" in again.stderr and "nothing new to pull" in again.stdout
    assert job.published_ids() == list(range(1, 41)) + list(range(101, 141))
    assert not list((job.state / "_commit_sequences").rglob("*.json"))


def test_a_commit_failing_without_a_crash_keeps_its_files_for_the_next_run(tmp_path):
    marker = tmp_path / "marker"
    marker.mkdir()
    job = Job(tmp_path / "job", extra=f"data.publisher.type=tests.runtime.sample_plugins.FlakyPublisher\ntest.flaky.marker.dir={marker}\n")
    for k in range(3):
        write_csv(job.data / f"f{k}.csv", 1 + 100 * k)
    first = run_local_process(job)
    assert first.returncode == 1 and "commit interrupted" in first.stdout
    assert len(job.published_ids()) == 40  # one file made it before the injected error
    second = run_local_process(job)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "pending_commit_finished" in second.stderr
    assert job.published_ids() == sorted(i for k in range(3) for i in range(1 + 100 * k, 41 + 100 * k))


def test_two_files_planned_onto_one_name_are_refused_before_anything_moves(tmp_path):
    job = Job(tmp_path, extra="writer.file.pathType=TABLENAME\nwriter.file.name=orders.parquet\n")
    write_csv(job.data / "a.csv", 1)
    write_csv(job.data / "b.csv", 101)
    result = run_local_process(job)
    assert result.returncode == 1 and "is published to the same" in result.stdout
    assert job.published_ids() == []
    assert not list((job.state / "_commit_sequences").rglob("*.json"))


def test_fresh_rename_never_replaces_an_existing_file(tmp_path):
    src, dst = tmp_path / "a", tmp_path / "b"
    src.write_bytes(b"new")
    dst.write_bytes(b"old")
    with pytest.raises(PublishConflictError, match="already exists"):
        FsRenameStep(str(src), str(dst)).execute(fresh=True)
    assert dst.read_bytes() == b"old" and src.read_bytes() == b"new"
    dst.write_bytes(b"xyz")  # same size, but another file on the same disk: never taken for this move's
    with pytest.raises(PublishConflictError, match="already exists"):
        FsRenameStep(str(src), str(dst)).execute()
    assert dst.read_bytes() == b"xyz" and src.read_bytes() == b"new"


def test_skipped_work_units_do_not_fail_a_dataset_under_full(tmp_path):
    from gobblin_py.runtime.commit.datasets import commit_dataset
    from gobblin_py.runtime.commit.job_run import JobRun
    from gobblin_py.sdk.states import TaskState, WorkingState, WorkUnit

    done = TaskState("job_J_1", "task_J_1_0", WorkUnit())
    done.working_state = WorkingState.SUCCESSFUL
    skipped = TaskState("job_J_1", "task_J_1_1", WorkUnit({"workunit.skip": "true"}))
    skipped.working_state = WorkingState.SKIPPED
    store = FsDatasetStateStore(str(tmp_path / "state"))
    props = {"job.commit.policy": "full", "data.publisher.type": "gobblin_py.connectors.files.noop_publisher.NoopPublisher"}
    run = JobRun(props, "J", "job_J_1", 0, store, CommitSequenceStore.for_job({}, store))
    result = commit_dataset(run, "", [done, skipped], 1)
    assert result.state.value == "COMMITTED" and result.failed_tasks == 0
    saved = store.get_latest_dataset_state("J", "")
    assert [t.working_state.value for t in saved.all_task_states()] == ["COMMITTED", "SKIPPED"]


def test_a_plugin_step_kind_is_rebuilt_from_its_class_with_the_job_properties(tmp_path):
    from tests.crash.plugin_steps import MarkerStep

    store = FsDatasetStateStore(str(tmp_path / "state"))
    props = {"marker.dir": str(tmp_path / "markers")}
    sequences = CommitSequenceStore.for_job(props, store)
    sequences.put(CommitSequence("Job", "urn", "job_Job_1", [MarkerStep("one")]))
    (pending,) = list(CommitSequenceStore.for_job(props, store).pending("Job"))
    (step,) = pending.steps
    assert isinstance(step, MarkerStep) and step.name == "one" and step.directory == str(tmp_path / "markers")
    assert not step.is_completed()
    pending.execute()
    assert step.is_completed() and (tmp_path / "markers" / "one").exists()


def test_an_unloadable_step_class_is_a_corrupt_commit_file(tmp_path):
    store = FsDatasetStateStore(str(tmp_path / "state"))
    bad = {"version": 1, "job_name": "Job", "urn": "u", "job_id": "j",
           "steps": [{"kind": "mystery", "class": "no.such.module:Step"}]}
    (tmp_path / "seq" / "Job").mkdir(parents=True)
    (tmp_path / "seq" / "Job" / "u.json").write_text(json.dumps(bad))
    sequences = CommitSequenceStore(str(tmp_path / "seq"), None, store)
    with pytest.raises(CorruptFileError) as info:
        list(sequences.pending("Job"))
    assert "no.such.module:Step" in str(info.value) and info.value.exit_code == 2


def test_a_commit_log_nested_too_deeply_is_a_corrupt_commit_file(tmp_path):
    # found by fuzzing: JSON nested deeper than Python's recursion limit escaped as a RecursionError traceback
    store = FsDatasetStateStore(str(tmp_path / "state"))
    (tmp_path / "seq" / "Job").mkdir(parents=True)
    sequences = CommitSequenceStore(str(tmp_path / "seq"), None, store)
    for name in ("u.json", "+batch-job_Job_1-0.json"):
        (tmp_path / "seq" / "Job" / name).write_text('{"steps": ' + "[" * 100_000)
        with pytest.raises(CorruptFileError, match=re.escape(f"{name}: corrupt commit sequence (nested too deeply)")):
            list(sequences.pending("Job"))
        (tmp_path / "seq" / "Job" / name).unlink()


@pytest.mark.parametrize("change,said", [
    (lambda s: s["steps"][0].update(src=7), "src is 7, not text"),
    (lambda s: s["steps"][0].update(dst_fs_uri=["file"]), "dst_fs_uri is a list, not text"),
    (lambda s: s["steps"].append("rename"), "step 'rename' is not an object"),
    (lambda s: s.update(urn=None), "urn is null, not text"),
    (lambda s: s.update(steps={"kind": "fs_rename"}), "steps is a dict, not a list"),
])
def test_a_commit_log_with_values_of_the_wrong_kind_is_a_corrupt_commit_file(tmp_path, change, said):
    # found by fuzzing: a step's paths or the dataset's URN of the wrong JSON type were taken as they were, and the
    # replay failed later, half done, with a TypeError from deep inside the move
    store = FsDatasetStateStore(str(tmp_path / "state"))
    logged = {"version": 1, "job_name": "Job", "urn": "u", "job_id": "job_Job_1",
              "steps": [{"kind": "fs_rename", "src": "/a/part.avro", "dst": "/b/part.avro"}]}
    change(logged)
    (tmp_path / "seq" / "Job").mkdir(parents=True)
    (tmp_path / "seq" / "Job" / "u.json").write_text(json.dumps(logged))
    with pytest.raises(CorruptFileError, match=re.escape(f"u.json: not a readable commit sequence ({said})")):
        list(CommitSequenceStore(str(tmp_path / "seq"), None, store).pending("Job"))
