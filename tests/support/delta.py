"""Delta publisher jobs as the table tests write and run them."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli import run_gpy_here


def write_csv(path: Path, header: str, rows: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(header + "\n" + "".join(r + "\n" for r in rows))


def job(root: Path, **extra: str) -> Path:
    props = {"job.name": "Orders", "source.class": "FileBasedSource",
             "source.filebased.data.directory": f"{root}/data", "source.filebased.file.pattern": "*.csv",
             "source.filebased.schema.change": "allow", "extract.namespace": "shop", "extract.table.name": "orders",
             "writer.output.format": "PARQUET", "data.publisher.type": "DeltaPublisher",
             "data.publisher.final.dir": f"{root}/lake", "state.store.dir": f"{root}/state",
             "task.data.root.dir": f"{root}/work", **extra}
    path = root / "orders.pull"
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items() if v is not None))
    return path


def run(path: Path, expect: int = 0):
    result = run_gpy_here("run", str(path), "--engine", "local")
    assert result.returncode == expect, result.stdout + result.stderr
    return result
