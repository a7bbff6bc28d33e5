"""CSV files → an Apache Iceberg table in a SQL catalog on SQLite: 5 M rows (the 8 files of the orders table of ``files``).

Contenders: the limit is the faster of two bare pyiceberg scripts, ``pyiceberg append`` (``pyarrow.csv.open_csv``
of each file, streamed into one ``Table.append``: pyiceberg writes the Parquet) and ``pyiceberg add_files`` (each
file read with ``read_csv`` and written with ``pyarrow.parquet.write_table`` into the table's data folder, then one
``Table.add_files``: what gpy does, without gpy); gpy ``--engine local`` with ``data.publisher.type=IcebergPublisher``
(its tasks write Parquet, the commit moves the files into the table and adds them in one snapshot, the embedded
SQL catalog); Polars ``scan_csv(...).collect().write_iceberg`` (pyiceberg underneath) into a table made in the same
kind of catalog. One snapshot each. Iceberg's timestamps are microseconds while pyarrow reads the files' times as
nanoseconds: the scripts read that column as microseconds, gpy's job casts it (``TypeCastConverter``), Polars reads
microseconds. Targets: gpy at most 1.1 × the faster script's time, and ahead of Polars. Each contender's table
must hold every row.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import csv_to_parquet
from table_commits import MICROSECONDS

from benchkit.context import Context
from benchkit.model import GPY_LOCAL, Benchmark, Case, Contender, Step, Target, peers_slower
from benchkit.peers import POLARS_VERSION
from benchkit.suites.files import FILES, csv_data
from benchkit.venvs import VenvSpec, pinned

SIZES = {"5M": 5_000_000}
KEYS = tuple(f"iceberg-{label}" for label in SIZES)
LIMIT_RATIO = 1.1  # gpy local's time at most this × the faster bare pyiceberg script's

PYICEBERG = VenvSpec("pyiceberg", (pinned("pyiceberg", "[sql-sqlite]"), pinned("sqlalchemy"), pinned("pyarrow"),
                                   pinned("numpy")))
POLARS_ICEBERG = VenvSpec("polars-iceberg", (f"polars=={POLARS_VERSION}", pinned("pyiceberg", "[sql-sqlite]"),
                                             pinned("sqlalchemy"), pinned("pyarrow")))

ADD_FILES_SCRIPT = """
import sys, pathlib, pyarrow as pa, pyarrow.csv as c, pyarrow.parquet as pq
from pyiceberg.catalog.sql import SqlCatalog
data, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]); out.mkdir(parents=True)
catalog = SqlCatalog("bench", uri=f"sqlite:///{out}/catalog.db", warehouse=f"file://{out}/warehouse")
catalog.create_namespace("bench")
convert = c.ConvertOptions(column_types={"ordered_at": pa.timestamp("us", "UTC")})
table, paths = None, []
for f in sorted(data.glob("*.csv")):
    rows = c.read_csv(f, convert_options=convert)
    if table is None:
        table = catalog.create_table("bench.orders", schema=rows.schema)
        folder = pathlib.Path(table.location().removeprefix("file://")) / "data"
        folder.mkdir(parents=True)
    pq.write_table(rows, folder / (f.stem + ".parquet"), compression="snappy")
    paths.append(f"file://{folder / (f.stem + '.parquet')}")
table.add_files(paths)
"""

PYICEBERG_SCRIPT = """
import sys, pathlib, pyarrow as pa, pyarrow.csv as c
from pyiceberg.catalog.sql import SqlCatalog
data, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]); out.mkdir(parents=True)
catalog = SqlCatalog("bench", uri=f"sqlite:///{out}/catalog.db", warehouse=f"file://{out}/warehouse")
files = sorted(data.glob("*.csv"))
first = c.open_csv(files[0], convert_options=c.ConvertOptions(column_types={"ordered_at": pa.timestamp("us", "UTC")}))
def batches():
    yield from first
    for f in files[1:]:
        yield from c.open_csv(f, convert_options=c.ConvertOptions(column_types=first.schema))
catalog.create_namespace("bench")
table = catalog.create_table("bench.orders", schema=first.schema)
table.append(pa.RecordBatchReader.from_batches(first.schema, batches()))
"""

POLARS_SCRIPT = """
import sys, pathlib, polars as pl
from pyiceberg.catalog.sql import SqlCatalog
data, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]); out.mkdir(parents=True)
frame = pl.scan_csv(str(data / "*.csv"), try_parse_dates=True).collect()
catalog = SqlCatalog("bench", uri=f"sqlite:///{out}/catalog.db", warehouse=f"file://{out}/warehouse")
catalog.create_namespace("bench")
table = catalog.create_table("bench.orders", schema=frame.to_arrow().schema)
frame.write_iceberg(table, mode="append")
"""


def table_rows(database: Path, warehouse: Path, name: str = "bench") -> int:
    """Rows of the table ``bench.orders`` in the SQL catalog ``name`` on the SQLite file ``database`` (0 when there
    is none), from its data files' record counts."""
    from pyiceberg.catalog.sql import SqlCatalog

    if not database.exists():
        return 0
    catalog = SqlCatalog(name, uri=f"sqlite:///{database}", warehouse=f"file://{warehouse}")
    if not catalog.table_exists(("bench", "orders")):
        return 0
    return sum(task.file.record_count for task in catalog.load_table(("bench", "orders")).scan().plan_files())


def _script(name: str, role: str, python: str | None, error: str | None, code: str, data: Path, rows: int,
            case: str) -> Contender:
    def trial(work: Path) -> list[Step]:
        out = work / "out"
        return [Step([python or "python", "-c", code, str(data), str(out)], case, rows,
                     lambda: table_rows(out / "catalog.db", out / "warehouse"))]

    return Contender(name, role, trial, error=error)


def _gpy(ctx: Context, data: Path, rows: int, case: str) -> Contender:
    def trial(work: Path) -> list[Step]:
        job = csv_to_parquet.gpy_job(work, data)
        job.write_text(job.read_text() + f"data.publisher.type=IcebergPublisher\n{MICROSECONDS}")
        return [Step(ctx.gpy("run", str(job), "--engine", "local"), case, rows,
                     lambda: table_rows(work / "state" / "iceberg_catalog.db", work / "published", "gpy"))]

    return Contender(GPY_LOCAL, "gpy", trial)


def benchmarks(ctx: Context) -> Iterator[Benchmark]:
    for label, full in SIZES.items():
        key = f"iceberg-{label}"
        if not ctx.wants(key):
            continue
        rows = ctx.size(full, least=FILES) // FILES * FILES
        data = csv_data(ctx, rows)
        megabytes = sum(f.stat().st_size for f in data.glob("*.csv")) / 1e6
        bare, bare_error = ctx.python(PYICEBERG)
        polars, polars_error = ctx.python(POLARS_ICEBERG)
        contenders = [_script("pyiceberg append", "limit", bare, bare_error, PYICEBERG_SCRIPT, data, rows, key),
                      _script("pyiceberg add_files", "limit", bare, bare_error, ADD_FILES_SCRIPT, data, rows, key),
                      _gpy(ctx, data, rows, key),
                      _script("Polars write_iceberg", "peer", polars, polars_error, POLARS_SCRIPT, data, rows, key)]
        targets = [Target(key, GPY_LOCAL, ("pyiceberg append", "pyiceberg add_files"), "<=", LIMIT_RATIO),
                   *peers_slower(key, ["Polars write_iceberg"])]
        case = Case(key, f"CSV → Iceberg table (SQL catalog), {rows:,} rows ({FILES} files, {megabytes:,.0f} MB)",
                    rows, targets=targets)
        yield Benchmark(key, [case], contenders)
