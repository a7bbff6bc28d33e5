"""A run of a file source that plans nothing says why, in its summary and its history: a pattern that matches no
file (naming those that differ only in case), an empty file list; finding nothing at all is a warning on the
job's first run and, under job.fail.on.empty, an error with exit code 4. A run after everything was pulled says
"nothing new" without a warning."""

from __future__ import annotations

import json

from gobblin_py.sdk.contracts import Source
from tests.support.cli import run_gpy_here
from tests.support.jobs import Job, run_local, write_csv

FIRST_RUN_WARNING = "warning: the job's first run found nothing at all to pull"


class SilentSource(Source):
    """Plans nothing and does not say why."""

    def get_workunits(self, state):
        return []

    def get_extractor(self, state):
        raise AssertionError("no work unit was planned")


class BrokenExplanationSource(SilentSource):
    """Plans nothing, and fails to say why."""

    def explain_empty_plan(self):
        raise RuntimeError("cannot tell")


def runs(job_file) -> list[dict]:
    """Every recorded run of the job in full, newest first."""
    listed = run_gpy_here("history", str(job_file), "--json")
    assert listed.returncode == 0, listed.stderr
    full = []
    for row in json.loads(listed.stdout)["runs"]:
        shown = run_gpy_here("history", str(job_file), row["run_id"], "--json")
        assert shown.returncode == 0, shown.stderr
        full.append(json.loads(shown.stdout))
    return full


def test_a_pattern_missing_a_file_by_case_names_it_and_warns_on_the_first_run(tmp_path):
    job = Job(tmp_path, extra="source.filebased.file.pattern=orders-*.csv\n")
    write_csv(job.data / "Orders-1.csv", 1)
    result = run_local(job)
    reason = f"pattern orders-*.csv matched 0 of 1 files in {job.data}; Orders-1.csv differs only in case"
    assert result.returncode == 0, result.stderr
    assert f"nothing new to pull: {reason}" in result.stdout
    assert FIRST_RUN_WARNING in result.stdout
    assert '"event": "job_found_nothing"' in result.stderr and '"level": "warning"' in result.stderr
    [record] = runs(job.file)
    assert record["status"] == "NOTHING_NEW" and record["exit_code"] == 0
    assert reason in record["message"] and record["warnings"]
    shown = run_gpy_here("history", str(job.file), record["run_id"])
    assert "Orders-1.csv differs only in case" in shown.stdout and "warning" in shown.stdout


def test_an_empty_files_to_pull_is_named(tmp_path):
    job = tmp_path / "simple.pull"
    job.write_text("job.name=Simple\nsource.class=org.apache.gobblin.example.simplejson.SimpleJsonSource\n"
                   "source.filebased.files.to.pull=\nwriter.output.format=AVRO\n"
                   f"task.data.root.dir={tmp_path / 'work'}\ndata.publisher.final.dir={tmp_path / 'out'}\n"
                   f"state.store.dir={tmp_path / 'state'}\n")
    result = run_gpy_here("run", str(job), "--engine", "local")
    assert result.returncode == 0, result.stderr
    assert "nothing new to pull: source.filebased.files.to.pull is empty" in result.stdout
    assert FIRST_RUN_WARNING in result.stdout
    [record] = runs(job)
    assert record["message"] == "nothing new to pull: source.filebased.files.to.pull is empty" and record["warnings"]


def test_a_source_files_list_without_a_file_is_named(tmp_path):
    job = tmp_path / "test.pull"
    job.write_text("job.name=Listed\nsource.class=org.apache.gobblin.test.TestSource\nsource.files=,\n"
                   f"writer.output.format=AVRO\ntask.data.root.dir={tmp_path / 'work'}\n"
                   f"data.publisher.final.dir={tmp_path / 'out'}\nstate.store.dir={tmp_path / 'state'}\n")
    result = run_gpy_here("run", str(job), "--engine", "local")
    assert result.returncode == 0, result.stderr
    assert "nothing new to pull: source.files lists no file" in result.stdout and FIRST_RUN_WARNING in result.stdout


def test_fail_on_empty_exits_4_and_records_the_run_failed_with_the_reason(tmp_path):
    job = Job(tmp_path, extra="source.filebased.file.pattern=orders-*.csv\njob.fail.on.empty=true\n")
    write_csv(job.data / "Orders-1.csv", 1)
    result = run_local(job)
    assert result.returncode == 4, (result.stdout, result.stderr)
    assert "gpy: error: found nothing to pull: pattern orders-*.csv matched 0 of 1 files" in result.stderr
    assert "Orders-1.csv differs only in case" in result.stderr
    [record] = runs(job.file)
    assert record["status"] == "FAILED" and record["exit_code"] == 4
    assert "Orders-1.csv differs only in case" in record["error"]


def test_an_empty_folder_is_named(tmp_path):
    job = Job(tmp_path)
    result = run_local(job)
    assert result.returncode == 0, result.stderr
    assert f"nothing new to pull: no file in {job.data}" in result.stdout and FIRST_RUN_WARNING in result.stdout


def test_a_second_run_after_everything_was_pulled_says_nothing_new_without_a_warning(tmp_path):
    job = Job(tmp_path, extra="job.fail.on.empty=true\n")
    write_csv(job.data / "a.csv", 1)
    write_csv(job.data / "b.csv", 101)
    assert run_local(job).returncode == 0
    again = run_local(job)
    assert again.returncode == 0, again.stderr
    assert "nothing new to pull: every file was pulled before (2 files, last watermark 20" in again.stdout
    assert "warning" not in again.stdout and "job_found_nothing" not in again.stderr
    newest = runs(job.file)[0]
    assert newest["status"] == "NOTHING_NEW" and not newest["warnings"]
    assert newest["message"].startswith("nothing new to pull: every file was pulled before (2 files")


def test_a_later_run_finding_nothing_says_why_without_a_warning(tmp_path):
    """Files removed upstream once pulled: the reason is shown, but only a first run warns."""
    job = Job(tmp_path)
    write_csv(job.data / "a.csv", 1)
    assert run_local(job).returncode == 0
    (job.data / "a.csv").unlink()
    again = run_local(job)
    assert again.returncode == 0, again.stderr
    assert f"nothing new to pull: no file in {job.data}" in again.stdout and "warning" not in again.stdout


def test_a_dry_run_says_why_the_next_run_would_plan_nothing(tmp_path):
    job = Job(tmp_path, extra="source.filebased.file.pattern=orders-*.csv\n")
    write_csv(job.data / "Orders-1.csv", 1)
    shown = run_local(job, "--dry-run")
    assert shown.returncode == 0, shown.stderr
    assert ("plan no work unit: nothing new to pull: pattern orders-*.csv matched 0 of 1 files in "
            f"{job.data}; Orders-1.csv differs only in case") in shown.stdout


def test_a_source_that_does_not_say_why_is_named_on_a_first_run_and_a_failing_explanation_fails_nothing(tmp_path):
    for name in ("SilentSource", "BrokenExplanationSource"):
        job = tmp_path / f"{name}.pull"
        job.write_text(f"job.name={name}\nsource.class=tests.sources.test_empty_plans.{name}\n"
                       f"task.data.root.dir={tmp_path / 'work'}\nstate.store.dir={tmp_path / 'state'}\n"
                       f"data.publisher.final.dir={tmp_path / 'out'}\n")
        result = run_gpy_here("run", str(job), "--engine", "local")
        assert result.returncode == 0, result.stderr
        assert f"{name} planned no work unit (it does not say why)" in result.stdout
        assert FIRST_RUN_WARNING in result.stdout
        assert ("empty_plan_not_explained" in result.stderr) == (name == "BrokenExplanationSource")
