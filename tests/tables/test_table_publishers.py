"""What every table publisher does alike: a run whose new files hold no rows commits nothing to the table and
keeps going; bad table configuration is refused before any work, naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import run_gpy_here
from tests.tables.delta_reads import duckdb_rows as delta_rows
from tests.tables.iceberg_reads import catalog

PUBLISHERS = ["IcebergPublisher", "DeltaPublisher"]


def table_job(root: Path, publisher: str, *extra: str) -> Path:
    lines = ["job.name=Orders", "source.class=FileBasedSource", f"source.filebased.data.directory={root}/data",
             "source.filebased.file.pattern=*.csv", "extract.namespace=shop", "extract.table.name=orders",
             "writer.output.format=PARQUET", f"data.publisher.type={publisher}",
             f"data.publisher.final.dir={root}/warehouse", f"state.store.dir={root}/state",
             f"task.data.root.dir={root}/work", *extra]
    (root / "data").mkdir(parents=True, exist_ok=True)
    path = root / "orders.pull"
    path.write_text("\n".join(lines) + "\n")
    return path


def table_ids(root: Path, publisher: str) -> list[int]:
    if publisher == "IcebergPublisher":
        rows = catalog(root / "state", root / "warehouse").load_table("shop.orders").scan().to_arrow()
    else:
        rows = delta_rows(root / "warehouse" / "shop" / "orders", "id")
    return sorted(rows.column("id").to_pylist())


@pytest.mark.parametrize("publisher", PUBLISHERS)
def test_a_run_whose_new_files_hold_no_rows_commits_and_the_next_one_adds_its_rows(tmp_path, publisher):
    job = table_job(tmp_path, publisher)
    (tmp_path / "data" / "a.csv").write_text("id,v\n1,x\n")
    assert run_gpy_here("run", str(job), "--engine", "local").returncode == 0
    (tmp_path / "data" / "b.csv").write_text("id,v\n")  # a header only
    empty = run_gpy_here("run", str(job), "--engine", "local")
    assert empty.returncode == 0, empty.stdout + empty.stderr
    assert "records extracted 0" in empty.stdout
    (tmp_path / "data" / "c.csv").write_text("id,v\n2,y\n")
    assert run_gpy_here("run", str(job), "--engine", "local").returncode == 0
    assert table_ids(tmp_path, publisher) == [1, 2]


def test_a_catalog_password_is_masked_in_the_summary_the_history_and_the_state(tmp_path):
    job = table_job(tmp_path, "IcebergPublisher", "iceberg.catalog.type=sql", "iceberg.catalog.uri=${env:GPY_TEST_PGURI}")
    (tmp_path / "data" / "a.csv").write_text("id,v\n1,x\n")
    failed = run_gpy_here("run", str(job), "--engine", "local",
                          env={"GPY_TEST_PGURI": "postgresql+psycopg://admin:S3cretPW@127.0.0.1:1/db"})
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "catalog sql at postgresql+psycopg://admin:******@127.0.0.1:1/db" in failed.stdout
    history = run_gpy_here("history", str(job))
    kept = [p.read_bytes() for p in (tmp_path / "state").rglob("*") if p.is_file()]
    assert not any("S3cretPW" in text for text in (failed.stdout, failed.stderr, history.stdout))
    assert not any(b"S3cretPW" in data for data in kept)


@pytest.mark.parametrize("publisher, line, key, says", [
    ("IcebergPublisher", "iceberg.catalog.type=nosuch", "iceberg.catalog.type", "not a catalog type pyiceberg knows"),
    ("IcebergPublisher", "iceberg.catalog.uri=ftp://catalog:21", "iceberg.catalog.uri",
     "the catalog's type cannot be told from it"),
    ("DeltaPublisher", "delta.table.uri={root}/a_file", "delta.table.uri", "is a file: a Delta table is a folder"),
])
def test_a_table_setting_no_run_could_use_is_refused_before_any_work(tmp_path, publisher, line, key, says):
    (tmp_path / "a_file").write_text("not a table")
    job = table_job(tmp_path, publisher, line.format(root=tmp_path))
    (tmp_path / "data" / "a.csv").write_text("id,v\n1,x\n")
    for command in (("validate", str(job)), ("run", str(job), "--engine", "local")):
        refused = run_gpy_here(*command)
        assert refused.returncode == 2, refused.stdout + refused.stderr
        said = refused.stdout + refused.stderr  # validate reports on stdout, run on stderr
        assert key in said and says in said, said
    assert not (tmp_path / "work").exists()  # no task ran


def test_a_table_publisher_refuses_another_output_format_in_plain_words():
    from gobblin_py.connectors.iceberg.publisher import IcebergPublisher

    props = {"writer.output.format": "ORC", "data.publisher.final.dir": "/lake", "state.store.dir": "/state"}
    problems = " ".join(str(p) for p in IcebergPublisher.validate(props))
    assert "ORC: Iceberg tables take Parquet files" in problems and "a Iceberg" not in problems
