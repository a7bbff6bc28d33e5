"""A file-based orders job as the runtime and CLI tests build it (CSV files into Parquet), and the ways to run it."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
from click.testing import CliRunner

from gobblin_py.cli import main
from tests.support.cli import run_gpy, run_gpy_here

ROWS_PER_FILE = 40


def write_csv(path: Path, first_id: int, rows: int = ROWS_PER_FILE, note: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["order_id,customer_id,amount,currency,note"]
    lines += [f"{first_id + i},{(first_id + i) % 17},{(first_id + i) * 1.25:.2f},EUR,{note}" for i in range(rows)]
    path.write_text("\n".join(lines) + "\n")


class Job:
    """A job directory: data under data/, the job file, and where it publishes and keeps state."""

    def __init__(self, root: Path, extra: str = "") -> None:
        """``extra`` lines override the defaults (a repeated key would accumulate, as in Gobblin)."""
        self.root = root
        self.data = root / "data"
        self.final = root / "published"
        self.state = root / "state"
        self.file = root / "orders.pull"
        self.data.mkdir(parents=True, exist_ok=True)
        props = {
            "job.name": "Orders",
            "source.class": "gobblin_py.connectors.files.filebased.FileBasedSource",
            "source.filebased.data.directory": str(self.data),
            "source.filebased.file.pattern": "*.csv",
            "extract.namespace": "shop",
            "extract.table.name": "orders",
            "converter.classes": "gobblin_py.transforms.converters.cast.TypeCastConverter",
            "converter.cast.fields": "order_id:int64",
            "writer.output.format": "PARQUET",
            "writer.staging.dir": f"{root}/staging",
            "writer.output.dir": f"{root}/output",
            "data.publisher.final.dir": str(self.final),
            "state.store.dir": str(self.state),
            "task.maxretries": "0",
        }
        for line in extra.splitlines():
            if line.strip():
                key, _, value = line.partition("=")
                props[key.strip()] = value.strip()
        self.file.write_text("".join(f"{k}={v}\n" for k, v in props.items()))

    def published_ids(self) -> list[int]:
        files = sorted(self.final.rglob("*.parquet"))
        return sorted(i for f in files for i in pq.read_table(f).column("order_id").to_pylist())

    def state_json(self) -> dict:
        result = run_gpy("state", "show", str(self.file), "--json")
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)


def run_local(job: Job, *args: str):
    """``gpy run --engine local`` in this process (see :func:`tests.support.cli.run_gpy_here`)."""
    return run_gpy_here("run", str(job.file), "--engine", "local", *args)


def run_local_process(job: Job, *args: str):
    """``gpy run --engine local`` in a process of its own: for what only a process shows (its exit when killed or
    crashed, locks held by another process, its worker processes)."""
    return run_gpy("run", str(job.file), "--engine", "local", *args)


def run_spark(job: Job, *args: str):
    result = CliRunner().invoke(main, ["run", str(job.file), "--engine", "spark", "--master", "local[2]", *args])

    class Outcome:
        returncode = result.exit_code
        stdout = result.output
        stderr = result.output

    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Outcome
