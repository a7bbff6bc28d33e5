"""A misspelling of a key the job's own plugins read is an error (exit 2) before any work; other unknown keys warn.

``writer.output.fromat=JSON`` used to warn "did you mean writer.output.format?", write Parquet and exit 0.
"""

from __future__ import annotations

import pytest

from gobblin_py.runtime.plan.key_typos import edit_distance, meant_key, misspelt
from gobblin_py.runtime.plan.validation import check_job
from tests.support.cli import run_gpy_here
from tests.support.jobs import Job, write_csv


def typo_job(tmp_path, extra: str = "writer.output.fromat=JSON\n") -> Job:
    job = Job(tmp_path, extra=extra)
    job.file.write_text(job.file.read_text().replace("writer.output.format=PARQUET\n", ""))
    write_csv(job.data / "orders_1.csv", 1, rows=3)
    return job


def test_run_refuses_a_misspelt_writer_key_before_any_work_and_lenient_runs(tmp_path):
    job = typo_job(tmp_path)
    result = run_gpy_here("run", str(job.file), "--engine", "local")
    assert result.returncode == 2, result.stderr
    line = next(text for text in result.stderr.splitlines() if text.startswith("gpy: error:"))
    assert f"{job.file}:" in line and "key 'writer.output.fromat'" in line  # the file and its line, the key
    assert "writer.output.format" in line and "writer.builder.class" in line  # the key meant and who reads it
    assert not job.final.exists() and not job.state.exists()
    lenient = run_gpy_here("run", str(job.file), "--engine", "local", "--lenient")
    assert lenient.returncode == 0, lenient.stderr
    assert "writer.output.fromat" in lenient.stderr  # a warning
    assert sorted(job.final.rglob("*.parquet"))  # the key is not read: Parquet, as the warning says


def test_validate_exits_2_and_lenient_makes_it_a_warning(tmp_path):
    job = typo_job(tmp_path)
    strictly = run_gpy_here("validate", str(job.file))
    assert strictly.returncode == 2
    assert "error:" in strictly.stdout and "did you mean writer.output.format?" in strictly.stdout
    lenient = run_gpy_here("validate", str(job.file), "--lenient")
    assert lenient.returncode == 0 and "warning:" in lenient.stdout and "writer.output.format" in lenient.stdout
    both = run_gpy_here("validate", str(job.file), "--lenient", "--strict")
    assert both.returncode == 2 and "--strict and --lenient" in both.stderr


def test_a_merely_unknown_key_still_warns(tmp_path):
    # a key of another Gobblin module, and a misspelt key of a plugin this job does not use (the Kafka source)
    job = typo_job(tmp_path, extra="writer.output.format=PARQUET\nwriter.someother.module.setting=1\n"
                                   "kafka.brokres=localhost:9092\n")
    result = run_gpy_here("validate", str(job.file))
    assert result.returncode == 0, result.stdout
    assert "writer.someother.module.setting" in result.stdout and "warning:" in result.stdout


def check(extra: dict[str, str], lenient: bool = False):
    props = {"job.name": "T", "source.class": "gobblin_py.connectors.files.filebased.FileBasedSource",
             "source.filebased.data.directory": "/tmp/in", "extract.namespace": "a", "extract.table.name": "b",
             "task.data.root.dir": "/tmp/w", "data.publisher.final.dir": "/tmp/out", "state.store.dir": "/tmp/s",
             **extra}
    return check_job(props, lenient=lenient)


@pytest.mark.parametrize(("extra", "key"), [
    ({"writer.outptu.format": "AVRO"}, "writer.outptu.format"),  # two letters swapped
    ({"source.filebased.maxFilesPerRn": "3"}, "source.filebased.maxFilesPerRn"),  # the source's key
    ({"source.filebased.max.files.per.run": "3"}, "source.filebased.max.files.per.run"),  # dots for case
    ({"task.maxretires": "3"}, "task.maxretires"),  # a runtime key
    ({"fork.branches": "2", "writer.output.fromat.1": "JSON"}, "writer.output.fromat.1"),  # a branch's key
    ({"Writer.output.format": "JSON"}, "Writer.output.format"),  # case
])
def test_misspellings_of_keys_the_job_reads_are_errors(extra, key):
    result = check(extra)
    assert [e.key for e in result.errors] == [key]
    assert not check(extra, lenient=True).errors


@pytest.mark.parametrize("extra", [
    {"writer.file.path.type": "TABLENAME"},  # an alias of writer.file.pathType
    {"fork.branches": "2", "fork.branch.name.0": "a", "fork.branch.name.1": "b", "writer.output.format.1": "JSON"},
    {"job.group": "g", "job.description": "d"},  # Gobblin keys gpy does not act on
    {"kafka.brokres": "x"},  # close to a key of a plugin the job does not use
    {"writer.min.thing": "1"},  # nothing close
])
def test_keys_that_are_not_typos_of_the_jobs_keys_are_no_errors(extra):
    assert check(extra).errors == []


def test_the_distance_rule():
    assert edit_distance("fromat", "format", 1) == 1 and edit_distance("abc", "xyz", 1) == 2
    assert misspelt("a.key1", "a.key2") is False  # numbered keys
    assert misspelt("x.minLookbackTime", "x.maxLookbackTime") is False  # two edits: a sibling key
    assert misspelt("x.dri", "x.dir") is False and misspelt("x.DIR", "x.dir")  # short segments: case only
    assert meant_key("writer.codec.typ", ["writer.codec.type", "writer.codec.*"]) == "writer.codec.type"


def test_a_retention_job_refuses_a_misspelt_key_of_its_own():
    props = {"job.class": "org.apache.gobblin.data.management.retention.DatasetCleanerJob",
             "gobblin.retention.dataset.finder.class": "TimeBasedDatasetStoreDatasetFinder",
             "selection.timeBased.lookbackTime": "7d", "state.store.dir": "/tmp/s",
             "gobblin.retention.version.datetime.timezon": "UTC"}
    assert [e.key for e in check_job(props).errors] == ["gobblin.retention.version.datetime.timezon"]
