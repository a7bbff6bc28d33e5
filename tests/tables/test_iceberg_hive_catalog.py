"""IcebergPublisher with ``iceberg.catalog.type=hive``: the table lives in a real Hive Metastore (the session's,
tests/tables/metastore.py), each run is one snapshot that the metastore's table points at, a new column arrives
with its data, and a run killed after its snapshot and before its state is finished without a second append."""

from __future__ import annotations

import json
from pathlib import Path

from gobblin_py.connectors.hive.client import connect
from tests.support.cli import run_gpy, run_gpy_here
from tests.tables.iceberg_reads import duckdb_rows, referenced_files
from tests.tables.metastore import HiveMetastore


def write_csv(path: Path, header: str, rows: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(header + "\n" + "".join(r + "\n" for r in rows))


def hive_job(root: Path, metastore: HiveMetastore) -> Path:
    props = {"job.name": "HiveOrders", "source.class": "FileBasedSource",
             "source.filebased.data.directory": f"{root}/data", "source.filebased.file.pattern": "*.csv",
             "source.filebased.schema.change": "allow", "extract.namespace": "hive_shop",
             "extract.table.name": "orders", "writer.output.format": "PARQUET",
             "data.publisher.type": "IcebergPublisher", "data.publisher.final.dir": f"{root}/published",
             "iceberg.catalog.type": "hive", "iceberg.catalog.uri": metastore.uri,
             "iceberg.catalog.warehouse": f"file://{root}/warehouse",
             "state.store.dir": f"{root}/state", "task.data.root.dir": f"{root}/work"}
    path = root / "orders.pull"
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return path


def hive_catalog(metastore: HiveMetastore, root: Path):
    from pyiceberg.catalog import load_catalog

    return load_catalog("elsewhere", type="hive", uri=metastore.uri, warehouse=f"file://{root}/warehouse")


def test_runs_commit_into_a_table_of_the_hive_metastore(hive_metastore, tmp_path):
    path = hive_job(tmp_path, hive_metastore)
    write_csv(tmp_path / "data" / "a.csv", "id,amount", ["1,1.5", "2,2.5"])
    first = run_gpy_here("run", str(path), "--engine", "local")
    assert first.returncode == 0, first.stdout + first.stderr
    assert "committed iceberg://" in first.stdout and "hive_shop.orders snapshot" in first.stdout, first.stdout
    write_csv(tmp_path / "data" / "b.csv", "id,amount,country", ["3,3.5,FR"])
    second = run_gpy_here("run", str(path), "--engine", "local")
    assert second.returncode == 0, second.stdout + second.stderr

    # the metastore's own record of the table: an Iceberg table whose metadata is the current one
    with connect([hive_metastore.uri], 10) as metastore:
        params = metastore.table("hive_shop", "orders").parameters
    assert params["table_type"].upper() == "ICEBERG"

    table = hive_catalog(hive_metastore, tmp_path).load_table("hive_shop.orders")  # a reader of its own
    assert params["metadata_location"] == table.metadata_location
    assert [f.name for f in table.schema().fields] == ["id", "amount", "country"]
    assert [s.summary["gpy.job"] for s in table.snapshots()] == ["HiveOrders", "HiveOrders"]
    assert [json.loads(s.summary["gpy.watermark"]) is not None for s in table.snapshots()] == [True, True]
    rows = sorted(table.scan().to_arrow().to_pylist(), key=lambda r: r["id"])
    assert rows == [{"id": 1, "amount": 1.5, "country": None}, {"id": 2, "amount": 2.5, "country": None},
                    {"id": 3, "amount": 3.5, "country": "FR"}]
    assert duckdb_rows(table.metadata_location, "id").sort_by("id").column("id").to_pylist() == [1, 2, 3]


def test_a_run_killed_after_its_snapshot_is_finished_without_a_second_append(hive_metastore, tmp_path):
    path = hive_job(tmp_path, hive_metastore)
    text = path.read_text().replace("extract.table.name=orders", "extract.table.name=killed")
    path.write_text(text)
    write_csv(tmp_path / "data" / "a.csv", "id,amount", [f"{i},{i}.5" for i in range(1, 6)])
    log = tmp_path / "boundary.log"
    # the boundaries: before the log (1), logged (2), moved (3), counted (4), the table's snapshot (5)
    killed = run_gpy("run", str(path), "--engine", "local",
                     env={"GPY_TEST_CRASH_AT_BOUNDARY": "5", "GPY_TEST_BOUNDARY_LOG": str(log)})
    assert killed.returncode == -9, killed.stdout + killed.stderr
    assert log.read_text().split()[-1].endswith(":iceberg_append"), log.read_text()
    table = hive_catalog(hive_metastore, tmp_path).load_table("hive_shop.killed")
    assert len(table.snapshots()) == 1  # committed, and the state not saved

    finished = run_gpy_here("run", str(path), "--engine", "local")
    assert finished.returncode == 0, finished.stdout + finished.stderr
    table = hive_catalog(hive_metastore, tmp_path).load_table("hive_shop.killed")
    assert len(table.snapshots()) == 1
    assert sorted(r["id"] for r in table.scan().to_arrow().to_pylist()) == [1, 2, 3, 4, 5]
    assert "nothing new to pull" in run_gpy_here("run", str(path), "--engine", "local").stdout
    # the table's files are where the metastore keeps its database (a database gpy made: the metastore's warehouse)
    folder = Path(table.location().removeprefix("file:").removeprefix("//"))
    assert folder.is_relative_to(hive_metastore.warehouse), table.location()
    on_disk = {str(p) for p in folder.rglob("*.parquet")}
    assert on_disk == referenced_files(table) and len(on_disk) == 1
