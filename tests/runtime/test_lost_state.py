"""A run that finds no state of its job while its final folder holds what the job published is refused (exit 2):
a relative state.store.dir run from another working folder, a deleted state store. A first run into an empty or
another job's folder is not, and --republish runs anyway."""

from __future__ import annotations

import json
import shutil

import pytest

from gobblin_py.cli.base import load_job_properties
from gobblin_py.runtime.commit.published_marks import StateLostError
from gobblin_py.runtime.launcher import JobLauncher
from tests.support.cli import run_gpy_here
from tests.support.jobs import Job, write_csv


def relative_state_job(tmp_path):
    """A job whose state.store.dir is relative; everything else absolute."""
    job = Job(tmp_path / "job", extra="state.store.dir=state\n")
    write_csv(job.data / "a.csv", 1)
    return job


def test_a_relative_state_store_run_from_another_folder_is_refused_naming_both(tmp_path):
    job = relative_state_job(tmp_path)
    (tmp_path / "here").mkdir()
    (tmp_path / "there").mkdir()
    first = run_gpy_here("run", str(job.file), "--engine", "local", cwd=tmp_path / "here")
    assert first.returncode == 0, first.stderr
    assert job.published_ids() == list(range(1, 41))
    marker = json.loads((job.final / "_gpy_published.Orders.marker").read_text())
    assert marker == {"job": "Orders", "job_file": str(job.file), "state_store": str(tmp_path / "here" / "state")}

    elsewhere = run_gpy_here("run", str(job.file), "--engine", "local", cwd=tmp_path / "there")
    assert elsewhere.returncode == 2, elsewhere.stdout + elsewhere.stderr
    error = elsewhere.stderr
    assert f"the state store {tmp_path / 'there' / 'state'} holds no state of job 'Orders'" in error
    assert f"it resolves from the working folder {tmp_path / 'there'}" in error
    assert f"its final folder {job.final} (data.publisher.final.dir)" in error
    assert f"with its state in {tmp_path / 'here' / 'state'}" in error and "--republish" in error
    assert job.published_ids() == list(range(1, 41))  # nothing published twice

    again = run_gpy_here("run", str(job.file), "--engine", "local", cwd=tmp_path / "here")  # where its state is
    assert again.returncode == 0, again.stderr

    # on purpose: everything again, and from then on the marker names the new store
    republished = run_gpy_here("run", str(job.file), "--engine", "local", "--republish", cwd=tmp_path / "there")
    assert republished.returncode == 0, republished.stderr
    assert job.published_ids() == sorted(list(range(1, 41)) * 2)
    marker = json.loads((job.final / "_gpy_published.Orders.marker").read_text())
    assert marker["state_store"] == str(tmp_path / "there" / "state")


def launch(job: Job, republish: bool = False):
    return JobLauncher(load_job_properties(str(job.file), None, None), engine="local", republish=republish).run()


def test_a_deleted_state_store_is_refused_and_a_reset_dataset_is_not(tmp_path):
    job = Job(tmp_path)
    write_csv(job.data / "a.csv", 1)
    assert launch(job).exit_code == 0
    reset = run_gpy_here("state", "reset", str(job.file), "--dataset", "", "--yes")
    assert reset.returncode == 0, reset.stderr
    assert launch(job).exit_code == 0  # a deliberate reset: its dataset starts afresh
    assert job.published_ids() == sorted(list(range(1, 41)) * 2)
    shutil.rmtree(job.state)
    with pytest.raises(StateLostError, match="that state store held this job's state when it last published"):
        launch(job)
    assert job.published_ids() == sorted(list(range(1, 41)) * 2)
    # a job renamed (same job file) has no state under its new name either
    job.file.write_text(job.file.read_text().replace("job.name=Orders", "job.name=OrdersRenamed"))
    with pytest.raises(StateLostError, match="as job 'Orders', from the same job file"):
        launch(job)


def test_a_first_run_into_an_empty_or_another_jobs_folder_runs(tmp_path):
    other = Job(tmp_path / "other")
    write_csv(other.data / "a.csv", 1)
    assert launch(other).exit_code == 0
    assert (other.final / "_gpy_published.Orders.marker").is_file()
    (other.final / "hand-made.csv").write_text("x\n1\n")

    mine = Job(tmp_path / "mine", extra=f"job.name=Mine\ndata.publisher.final.dir={other.final}\n"
                                        "data.publisher.final.dir.shared=true\n")
    write_csv(mine.data / "b.csv", 101)
    assert launch(mine).exit_code == 0  # a folder another job publishes to: not this job's data
    assert sorted(p.name for p in other.final.glob("_gpy_published.*")) == ["_gpy_published.Mine.marker",
                                                                             "_gpy_published.Orders.marker"]
    # a run killed while writing its marker left a temporary copy: the next run of the job removes it
    (other.final / "_tmp__gpy_published.Orders.marker.0123abcd").write_text("{")
    write_csv(other.data / "b.csv", 301)
    assert launch(other).exit_code == 0
    assert not list(other.final.glob("_tmp_*"))

    empty = Job(tmp_path / "empty")
    write_csv(empty.data / "c.csv", 201)
    empty.final.mkdir(parents=True)
    assert launch(empty).exit_code == 0 and empty.published_ids() == list(range(201, 241))


def test_a_final_folder_each_run_replaces_is_not_marked(tmp_path):
    """A run without state replaces the folder with everything: nothing is published twice, nothing to refuse."""
    job = Job(tmp_path, extra="data.publisher.replace.final.dir=true\n"
                              "gobblin.runtime.delivery.semantics=AT_LEAST_ONCE\n")
    write_csv(job.data / "a.csv", 1)
    assert launch(job).exit_code == 0
    assert not list(job.final.glob("_gpy_published.*"))
    shutil.rmtree(job.state)
    assert launch(job).exit_code == 0 and job.published_ids() == list(range(1, 41))
