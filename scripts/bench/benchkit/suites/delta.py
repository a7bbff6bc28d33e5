"""CSV files → a Delta Lake table on local disk: 5 M rows (the 8 files of the orders table of ``files``).

Contenders: the limit is a bare deltalake script (``pyarrow.csv.open_csv`` of each file, streamed into one
``write_deltalake``: one version); gpy ``--engine local`` with ``data.publisher.type=DeltaPublisher`` (its tasks
write Parquet, the commit moves the files into the table and adds them in one version with their footers'
statistics); Polars ``scan_csv(...).collect().write_delta`` (delta-rs underneath). Targets: gpy at most 1.1 × the
deltalake script's time, and ahead of Polars.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import csv_to_parquet

from benchkit.context import Context
from benchkit.model import GPY_LOCAL, Benchmark, Case, Contender, Step, Target, peers_slower
from benchkit.peers import POLARS_VERSION
from benchkit.suites.files import FILES, csv_data
from benchkit.venvs import VenvSpec, pinned

SIZES = {"5M": 5_000_000}
KEYS = tuple(f"delta-{label}" for label in SIZES)
LIMIT_RATIO = 1.1  # gpy local's time at most this × the bare deltalake script's

DELTALAKE = VenvSpec("deltalake", (pinned("deltalake"), pinned("pyarrow"), pinned("numpy")))
POLARS_DELTA = VenvSpec("polars-delta", (f"polars=={POLARS_VERSION}", pinned("deltalake"), pinned("pyarrow")))

DELTALAKE_SCRIPT = """
import sys, pathlib, pyarrow as pa, pyarrow.csv as c
from deltalake import write_deltalake
data, out = pathlib.Path(sys.argv[1]), sys.argv[2]
files = sorted(data.glob("*.csv"))
first = c.open_csv(files[0])
def batches():
    yield from first
    for f in files[1:]:
        yield from c.open_csv(f, convert_options=c.ConvertOptions(column_types=first.schema))
write_deltalake(out, pa.RecordBatchReader.from_batches(first.schema, batches()))
"""

POLARS_SCRIPT = """
import sys, pathlib, polars as pl
data, out = pathlib.Path(sys.argv[1]), sys.argv[2]
pl.scan_csv(str(data / "*.csv"), try_parse_dates=True).collect().write_delta(out)
"""


def table_rows(path: Path) -> int:
    """Rows of the Delta table at ``path`` (0 when there is none), from its log's statistics."""
    from deltalake import DeltaTable

    return DeltaTable(str(path)).count() if (path / "_delta_log").is_dir() else 0


def _script(name: str, role: str, python: str | None, error: str | None, code: str, data: Path, rows: int,
            case: str) -> Contender:
    def trial(work: Path) -> list[Step]:
        out = work / "table"
        return [Step([python or "python", "-c", code, str(data), str(out)], case, rows, lambda: table_rows(out))]

    return Contender(name, role, trial, error=error)


def _gpy(ctx: Context, data: Path, rows: int, case: str) -> Contender:
    def trial(work: Path) -> list[Step]:
        job = csv_to_parquet.gpy_job(work, data)
        job.write_text(job.read_text() + "data.publisher.type=DeltaPublisher\n")
        return [Step(ctx.gpy("run", str(job), "--engine", "local"), case, rows,
                     lambda: table_rows(work / "published" / "bench" / "orders"))]

    return Contender(GPY_LOCAL, "gpy", trial)


def benchmarks(ctx: Context) -> Iterator[Benchmark]:
    for label, full in SIZES.items():
        key = f"delta-{label}"
        if not ctx.wants(key):
            continue
        rows = ctx.size(full, least=FILES) // FILES * FILES
        data = csv_data(ctx, rows)
        megabytes = sum(f.stat().st_size for f in data.glob("*.csv")) / 1e6
        bare, bare_error = ctx.python(DELTALAKE)
        polars, polars_error = ctx.python(POLARS_DELTA)
        contenders = [_script("deltalake script", "limit", bare, bare_error, DELTALAKE_SCRIPT, data, rows, key),
                      _gpy(ctx, data, rows, key),
                      _script("Polars write_delta", "peer", polars, polars_error, POLARS_SCRIPT, data, rows, key)]
        targets = [Target(key, GPY_LOCAL, "deltalake script", "<=", LIMIT_RATIO),
                   *peers_slower(key, ["Polars write_delta"])]
        case = Case(key, f"CSV → Delta table, {rows:,} rows ({FILES} files, {megabytes:,.0f} MB)", rows,
                    targets=targets)
        yield Benchmark(key, [case], contenders)
