"""Reproductions of gaps found by adversarial review, each once a way to lose data or write outside the job's folders."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli import run_gpy_here

JOB = """\
job.name=B
source.class=gobblin_py.connectors.files.filebased.FileBasedSource
source.filebased.data.directory=data
source.filebased.file.pattern=*.csv
extract.namespace=ns
extract.table.name=t
writer.output.format=CSV
writer.staging.dir=out/staging
writer.output.dir=out/output
data.publisher.final.dir=out/final
state.store.dir=out/state
task.maxretries=0
"""


def _job(folder: Path, *extra: str) -> None:
    (folder / "data").mkdir(parents=True, exist_ok=True)
    (folder / "data" / "a.csv").write_text("id,name\n1,a\n2,b\n")
    keys = {line.split("=", 1)[0] for line in extra}
    base = [line for line in JOB.splitlines() if line.split("=", 1)[0] not in keys]
    (folder / "job.pull").write_text("".join(line + "\n" for line in [*base, *extra]))


def test_absolute_job_id_is_refused_and_deletes_nothing_outside(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("precious\n")
    job_dir = tmp_path / "job"
    _job(job_dir, f"job.id={victim}", "gobblin.runtime.delivery.semantics=AT_LEAST_ONCE")
    result = run_gpy_here("run", "job.pull", "--engine", "local", cwd=job_dir)
    assert (victim / "keep.txt").exists(), "a folder outside every configured folder was deleted"
    assert result.returncode == 2, result.stdout + result.stderr
    assert "job.id" in result.stderr


def test_job_id_with_dotdot_keeps_published_data(tmp_path: Path) -> None:
    _job(tmp_path)
    first = run_gpy_here("run", "job.pull", "--engine", "local", cwd=tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    published = sorted((tmp_path / "out" / "final").rglob("*.csv"))
    assert published
    (tmp_path / "data" / "b.csv").write_text("id,name\n3,c\n")
    with (tmp_path / "job.pull").open("a") as f:
        f.write("job.id=../..\ngobblin.runtime.delivery.semantics=AT_LEAST_ONCE\n")
    validate = run_gpy_here("validate", "job.pull", cwd=tmp_path)
    second = run_gpy_here("run", "job.pull", "--engine", "local", cwd=tmp_path)
    assert all(p.exists() for p in published), "the first run's published files were deleted"
    assert validate.returncode == 2 and "job.id" in validate.stdout, validate.stdout
    assert second.returncode == 2, second.stdout + second.stderr


def test_duplicate_branch_names_are_refused_up_front(tmp_path: Path) -> None:
    _job(tmp_path, "fork.branches=2", "fork.branch.name.0=a", "fork.branch.name.1=a")
    result = run_gpy_here("validate", "job.pull", cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "fork.branch.name" in result.stdout


def test_replace_final_dir_shared_by_two_tables_loses_nothing(tmp_path: Path) -> None:
    import sqlite3

    db = sqlite3.connect(tmp_path / "db.sqlite")
    for table in ("orders", "customers"):
        db.execute(f"create table {table} (id integer primary key, v text)")
        db.executemany(f"insert into {table} values (?, ?)", [(i, f"{table}{i}") for i in range(5)])
    db.commit()
    db.close()
    (tmp_path / "job.pull").write_text("""\
job.name=S
source.class=gobblin_py.connectors.sql.QueryBasedSource
source.conn.driver=sqlite
source.conn.database=db.sqlite
source.entities=orders,customers
extract.table.type=append_only
extract.delta.fields=id
source.querybased.watermark.type=simple
writer.output.format=CSV
writer.staging.dir=out/staging
writer.output.dir=out/output
data.publisher.final.dir=out/final
data.publisher.appendExtractToFinalDir=false
data.publisher.replace.final.dir=true
gobblin.runtime.delivery.semantics=AT_LEAST_ONCE
state.store.dir=out/state
task.maxretries=0
""")
    result = run_gpy_here("run", "job.pull", "--engine", "local", cwd=tmp_path)
    published = "".join(p.read_text() for p in (tmp_path / "out" / "final").rglob("*.csv"))
    # refused before any work, naming the key: each table's publish would empty the folder of the one before
    assert result.returncode == 2, result.stdout + result.stderr
    assert "key 'data.publisher.replace.final.dir'" in result.stderr and "(orders, customers)" in result.stderr
    assert published == ""


def test_final_dir_shared_with_task_output_is_refused_before_any_work(tmp_path: Path) -> None:
    _job(tmp_path, "data.publisher.final.dir=out/output", "extract.namespace=B", "extract.table.name=job_B_archive",
         "writer.file.pathType=NAMESPACE_TABLE")
    first = run_gpy_here("run", "job.pull", "--engine", "local", cwd=tmp_path)
    # refused before any work (each run clears writer.output.dir, and would delete what was published there)
    assert first.returncode == 2, first.stdout + first.stderr
    assert "key 'data.publisher.final.dir': 'out/output' is writer.output.dir" in first.stderr
    assert not list((tmp_path / "out").rglob("*.csv"))


def test_replace_final_dir_shared_by_two_datasets_found_at_run_time_publishes_nothing(tmp_path: Path) -> None:
    for name, rows in (("eu", "id,name\n1,eu1\n"), ("us", "id,name\n2,us2\n")):
        (tmp_path / "data" / name).mkdir(parents=True)
        (tmp_path / "data" / name / "a.csv").write_text(rows)
    _job(tmp_path, "source.filebased.dataset.urn.level=subdirectory", "data.publisher.appendExtractToFinalDir=false",
         "data.publisher.replace.final.dir=true", "gobblin.runtime.delivery.semantics=AT_LEAST_ONCE")
    (tmp_path / "data" / "a.csv").unlink()
    (tmp_path / "out" / "final").mkdir(parents=True)
    (tmp_path / "out" / "final" / "old.csv").write_text("id,name\n0,old\n")
    assert run_gpy_here("validate", "job.pull", cwd=tmp_path).returncode == 0  # two datasets: known only once listed
    result = run_gpy_here("run", "job.pull", "--engine", "local", cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "data.publisher.replace.final.dir" in result.stderr and "out/final" in result.stderr, result.stderr
    assert "'eu'" in result.stderr or "eu" in result.stderr, result.stderr
    assert sorted(p.name for p in (tmp_path / "out" / "final").iterdir()) == ["old.csv"]
