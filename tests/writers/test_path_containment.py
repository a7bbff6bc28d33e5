"""Names from the job file never lead a writer or the publisher out of their folders: ``extract.table.name``,
``extract.namespace`` (its dots become folders), ``fork.branch.name.N``, ``writer.file.path[.N]`` and
``writer.file.name[.N]`` that could leave the staging, output or final folder are refused by ``gpy validate`` and
at the start of ``gpy run`` (exit 2, naming the key), before anything is written; the writer and publisher
refuse them as well, for names that come from data."""

from __future__ import annotations

from pathlib import Path

import pytest

from gobblin_py.io.branch_paths import BranchScope
from gobblin_py.io.contained_paths import PathEscapeError
from gobblin_py.sdk.states import State
from tests.support.cli import run_gpy_here
from tests.support.jobs import Job, write_csv


def nested_job(tmp_path: Path, extra: str) -> Job:
    """A job three folders below ``tmp_path``: a path that climbs out of it still lands inside ``tmp_path``."""
    job = Job(tmp_path / "a" / "b" / "c", extra=extra)
    write_csv(job.data / "day1.csv", 1)
    return job


def files_outside(tmp_path: Path, job: Job) -> list[Path]:
    """Every file under ``tmp_path`` but the job's input, job file and the folders it may write."""
    allowed = [job.data, job.final, job.state, job.root / "staging", job.root / "output"]
    return [p for p in tmp_path.rglob("*") if p.is_file() and p != job.file
            and not any(p.is_relative_to(folder) for folder in allowed)]


def absolute_namespace(folder: Path) -> str:
    """A namespace whose dots, made folders, name ``folder`` as an absolute path (as ``../../E`` names ``/E``)."""
    assert "." not in str(folder)
    return "." + str(folder).lstrip("/").replace("/", ".")


BAD = [
    ("extract.table.name", "../../../ESC", "'..' component"),
    ("extract.table.name", "{tmp}/x", "absolute path"),
    ("extract.namespace", "../../E", "'..'"),
    ("writer.file.name", "../x.parquet", "single name"),
    ("writer.file.name", "sub/x.parquet", "single name"),
    ("writer.file.path", "../out", "'..' component"),
    ("writer.file.path", "a/../../out", "'..' component"),
]


@pytest.mark.parametrize("key,value,says", BAD, ids=[f"{k}={v}" for k, v, _ in BAD])
def test_validate_and_run_refuse_a_value_that_leaves_its_folder(tmp_path, key, value, says):
    job = nested_job(tmp_path, f"{key}={value.format(tmp=tmp_path)}\n")
    for command in (["validate", str(job.file)], ["run", str(job.file), "--engine", "local"]):
        done = run_gpy_here(*command)
        output = done.stdout + done.stderr
        assert done.returncode == 2, output
        assert f"key '{key}'" in output and says in output, output
        assert "Traceback" not in output
    assert files_outside(tmp_path, job) == []
    assert not job.final.exists() and not job.state.exists()


def test_a_namespace_whose_dots_make_an_absolute_path_is_refused(tmp_path):
    target = tmp_path / "E"
    job = nested_job(tmp_path, f"extract.namespace={absolute_namespace(target)}\n")
    done = run_gpy_here("run", str(job.file), "--engine", "local")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "key 'extract.namespace'" in done.stderr and "absolute path" in done.stderr
    assert not target.exists() and files_outside(tmp_path, job) == []


def test_branch_names_and_per_branch_keys_are_named(tmp_path):
    job = nested_job(tmp_path, "fork.branches=2\nfork.branch.name.1=../../odd\nwriter.file.name.0=../a.parquet\n"
                               "data.publisher.final.dir.0=" + str(tmp_path / "f0") + "\n"
                               "data.publisher.final.dir.1=" + str(tmp_path / "f1") + "\n")
    done = run_gpy_here("validate", str(job.file))
    assert done.returncode == 2
    assert "key 'fork.branch.name.1'" in done.stdout + done.stderr
    assert "key 'writer.file.name.0'" in done.stdout + done.stderr


def test_a_nul_byte_is_refused(tmp_path):
    job = nested_job(tmp_path, "extract.table.name=or\\u0000ders\n")
    done = run_gpy_here("validate", str(job.file))
    assert done.returncode == 2 and "NUL" in done.stdout + done.stderr, done.stdout + done.stderr


def test_good_names_still_publish_where_they_did(tmp_path):
    job = nested_job(tmp_path, "writer.file.path=/events/daily/\nwriter.file.name=orders.parquet\n")
    done = run_gpy_here("run", str(job.file), "--engine", "local")
    assert done.returncode == 0, done.stderr
    assert (job.final / "events" / "daily" / "orders.parquet").is_file()  # a leading '/' is dropped, as by Gobblin
    assert files_outside(tmp_path, job) == []


# ------------------------------------------------------------------ the writer's and publisher's own check


def scope(tmp_path: Path, branches: int = 1, branch: int = 0, **props: str) -> BranchScope:
    base = {"writer.staging.dir": f"{tmp_path}/staging", "writer.output.dir": f"{tmp_path}/output",
            "data.publisher.final.dir": f"{tmp_path}/final", "extract.namespace": "shop",
            "extract.table.name": "orders", "extract.extract.id": "20240101000000"}
    return BranchScope(State({**base, **props}), branches, branch)


@pytest.mark.parametrize("props,key", [
    ({"extract.table.name": "/tmp/x"}, "extract.table.name"),
    ({"extract.table.name": "../../../ESC"}, "extract.table.name"),
    ({"extract.namespace": "..E"}, "extract.namespace"),
    ({"writer.file.path": "a/../.."}, "writer.file.path"),
    ({"writer.file.pathType": "TABLENAME", "extract.table.name": "x/../../y"}, "extract.table.name"),
])
def test_the_final_folder_of_a_bad_name_is_refused(tmp_path, props, key):
    with pytest.raises(PathEscapeError, match=key):
        scope(tmp_path, **props).final_dir()


def test_an_explicit_file_name_must_be_one_name(tmp_path):
    with pytest.raises(PathEscapeError, match="writer.file.name"):
        scope(tmp_path, **{"writer.file.name": "../x.parquet"}).explicit_file_name()
    assert scope(tmp_path, **{"writer.file.name": "x.parquet"}).explicit_file_name() == "x.parquet"


def test_a_branch_folder_is_one_name(tmp_path):
    branch = scope(tmp_path, 2, 1, **{"fork.branch.name.1": "a/b"})
    with pytest.raises(PathEscapeError, match="fork.branch.name.1"):
        branch.final_dir()


def test_a_final_folder_reached_through_a_link_outside_it_is_refused(tmp_path):
    job = nested_job(tmp_path, "writer.file.pathType=TABLENAME\n")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    job.final.mkdir()
    (job.final / "orders").symlink_to(outside)
    done = run_gpy_here("run", str(job.file), "--engine", "local")
    assert done.returncode == 2, done.stdout + done.stderr  # the dataset fails at publishing, naming the link
    assert "symbolic link" in done.stdout and str(outside) in done.stdout
    assert list(outside.iterdir()) == []
    (job.final / "orders").unlink()
    assert run_gpy_here("run", str(job.file), "--engine", "local").returncode == 0
    assert job.published_ids() == list(range(1, 41))  # its watermark had not moved
