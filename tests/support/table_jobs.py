"""Delta and Iceberg publisher jobs as the table tests write and run them: one small CSV-to-Parquet job, its
publisher and final folder the only difference."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli import run_gpy_here


def write_csv(path: Path, header: str, rows: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(header + "\n" + "".join(r + "\n" for r in rows))


def _job(root: Path, publisher: str, final_dir: str, extra: dict[str, str]) -> Path:
    props = {"job.name": "Orders", "source.class": "FileBasedSource",
             "source.filebased.data.directory": f"{root}/data", "source.filebased.file.pattern": "*.csv",
             "source.filebased.schema.change": "allow", "extract.namespace": "shop", "extract.table.name": "orders",
             "writer.output.format": "PARQUET", "data.publisher.type": publisher,
             "data.publisher.final.dir": f"{root}/{final_dir}", "state.store.dir": f"{root}/state",
             "task.data.root.dir": f"{root}/work", **extra}
    path = root / "orders.pull"
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items() if v is not None))
    return path


def delta_job(root: Path, **extra: str) -> Path:
    """The job publishing into a Delta table under ``root/lake``."""
    return _job(root, "DeltaPublisher", "lake", extra)


def iceberg_job(root: Path, **extra: str) -> Path:
    """The job publishing into an Iceberg table of the warehouse ``root/warehouse``."""
    return _job(root, "IcebergPublisher", "warehouse", extra)


def run(path: Path, expect: int = 0):
    result = run_gpy_here("run", str(path), "--engine", "local")
    assert result.returncode == expect, result.stdout + result.stderr
    return result
