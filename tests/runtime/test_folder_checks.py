"""Checks across a job's folder and naming keys, reported by ``gpy validate`` before any work."""

from __future__ import annotations

from gobblin_py.runtime.validation import check_job

BASE = {
    "job.name": "B",
    "source.class": "gobblin_py.sources.filebased.FileBasedSource",
    "source.filebased.data.directory": "data",
    "extract.namespace": "ns",
    "extract.table.name": "t",
    "writer.output.format": "CSV",
    "writer.staging.dir": "out/staging",
    "writer.output.dir": "out/output",
    "data.publisher.final.dir": "out/final",
    "state.store.dir": "out/state",
}


def _errors(**extra: str) -> list[str]:
    props = {**BASE, **{k.replace("__", "."): v for k, v in extra.items()}}
    props = {k: v for k, v in props.items() if v is not None}
    return [str(e) for e in check_job(props).errors]


def test_job_without_shared_folders_is_accepted() -> None:
    assert _errors() == []


def test_fixed_job_id_under_exactly_once_is_reported_by_validate() -> None:
    errors = _errors(job__id="myrun")
    assert any("job.id" in e and "exactly-once" in e for e in errors), errors
    assert _errors(job__id="myrun", gobblin__runtime__delivery__semantics="AT_LEAST_ONCE") == []


def test_job_id_and_job_name_must_be_single_names() -> None:
    for value in ("/tmp/victim", "../..", "a/b", ".."):
        errors = _errors(job__id=value, gobblin__runtime__delivery__semantics="AT_LEAST_ONCE")
        assert any("job.id" in e for e in errors), (value, errors)
    assert any("job.name" in e for e in _errors(job__name="../x"))
