"""Published Delta and Iceberg tables and their rows, for the table maintenance tests."""

from __future__ import annotations

from pathlib import Path

from tests.support.table_jobs import delta_job as job
from tests.support.table_jobs import run, write_csv
from tests.support.table_jobs import iceberg_job
from tests.tables.delta_reads import duckdb_rows
from tests.tables.iceberg_reads import catalog


def published_table(root: Path, runs: int = 3) -> Path:
    """A Delta table gpy published over ``runs`` runs: one small file each."""
    path = job(root)
    for n in range(runs):
        write_csv(root / "data" / f"{n}.csv", "id,name", [f"{n * 10 + i},r{n}-{i}" for i in range(5)])
        run(path)
    return root / "lake" / "shop" / "orders"


def rows(table: Path) -> list[tuple]:
    return sorted((r["id"], r["name"]) for r in duckdb_rows(table, "id, name").to_pylist())


def iceberg_table(root: Path, runs: int = 3):
    path = iceberg_job(root)
    for n in range(runs):
        write_csv(root / "data" / f"{n}.csv", "id,name", [f"{n * 10 + i},r{n}-{i}" for i in range(5)])
        run(path)
    return path, lambda: catalog(root / "state", root / "warehouse").load_table(("shop", "orders"))


def iceberg_maintenance_job(root: Path, **extra: str) -> Path:
    props = {"job.name": "Maintain", "job.class": "IcebergMaintenanceJob", "iceberg.table": "shop.orders",
             "data.publisher.final.dir": f"{root}/warehouse", "state.store.dir": f"{root}/state", **extra}
    path = root / "maintain.pull"
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return path


def iceberg_rows(table) -> list[tuple]:
    return sorted((r["id"], r["name"]) for r in table.scan(selected_fields=("id", "name")).to_arrow().to_pylist())
