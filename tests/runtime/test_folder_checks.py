"""Checks across a job's folder and naming keys, reported by ``gpy validate`` before any work."""

from __future__ import annotations

from gobblin_py.runtime.plan.validation import check_job

BASE = {
    "job.name": "B",
    "source.class": "gobblin_py.connectors.files.filebased.FileBasedSource",
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


def test_final_dir_sharing_a_task_folder_is_reported() -> None:
    for final, other in (("out/output", "writer.output.dir"), ("out/staging/x", "writer.staging.dir"),
                         ("out", "writer.output.dir"), ("./out//output/", "writer.output.dir")):
        errors = _errors(data__publisher__final__dir=final)
        assert any("data.publisher.final.dir" in e and other in e for e in errors), (final, errors)
    errors = _errors(data__publisher__final__dir=f"{__import__('os').getcwd()}/out/output")
    assert any("writer.output.dir" in e for e in errors), errors
    assert _errors(data__publisher__final__dir="s3://bucket/out/output") == []
    errors = _errors(**{"data.publisher.final.dir.1": "out/staging", "fork.branches": "2"})
    assert any("data.publisher.final.dir.1" in e and "writer.staging.dir" in e for e in errors), errors


def test_replaced_final_dir_holding_the_state_store_is_reported() -> None:
    at_least_once = {"gobblin.runtime.delivery.semantics": "AT_LEAST_ONCE"}
    errors = _errors(**at_least_once, state__store__dir="out/final/state", data__publisher__replace__final__dir="true")
    assert any("data.publisher.replace.final.dir" in e and "state.store.dir" in e for e in errors), errors
    assert _errors(**at_least_once, state__store__dir="out/final/state") == []


def test_replaced_final_dir_shared_by_several_tables_is_reported() -> None:
    sql = {"source.class": "gobblin_py.connectors.sql.QueryBasedSource", "source.conn.driver": "sqlite",
           "source.conn.database": "db.sqlite", "source.entities": "orders,customers",
           "extract.table.type": "append_only", "extract.delta.fields": "id", "extract.table.name": None,
           "source.querybased.watermark.type": "simple", "gobblin.runtime.delivery.semantics": "AT_LEAST_ONCE",
           "data.publisher.replace.final.dir": "true", "source.filebased.data.directory": None}
    errors = _errors(**sql, data__publisher__appendExtractToFinalDir="false")
    assert any("data.publisher.replace.final.dir" in e and "orders, customers" in e for e in errors), errors
    assert _errors(**sql) == []


def test_duplicate_branch_names_are_reported() -> None:
    errors = _errors(**{"fork.branches": "2", "fork.branch.name.0": "a", "fork.branch.name.1": "a"})
    assert any("fork.branch.name.1" in e and "'a'" in e for e in errors), errors
    errors = _errors(**{"fork.branches": "2", "fork.branch.name.0": "fork_1"})
    assert any("fork.branch.name.0" in e and "'fork_1'" in e for e in errors), errors
    assert _errors(**{"fork.branches": "2", "fork.branch.name.0": "a"}) == []


def test_table_names_that_name_no_folder_or_leave_it_are_reported() -> None:
    assert any("extract.table.name" in e and "names no folder" in e for e in _errors(extract__table__name="."))
    sequential = {"source.class": "gobblin_py.connectors.testdata.test_sources.SequentialTestSource",
                  "source.filebased.data.directory": None, "extract.table.name": None, "extract.namespace": None}
    assert _errors(**sequential) == []
    errors = _errors(**sequential, source__table="../../x", source__namespace="a/../..")
    assert any("source.table" in e and ".." in e for e in errors), errors
    assert any("source.namespace" in e for e in errors), errors
    assert any("source.table" in e for e in _errors(**sequential, source__table="."))
