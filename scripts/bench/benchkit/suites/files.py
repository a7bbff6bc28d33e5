"""CSV files → Parquet on local disk, at 1 M, 5 M and 20 M rows (8 files of the orders table, 6 columns).

Contenders: the limit is ``csv_to_parquet.py``'s pyarrow script (``read_csv`` → ``write_table`` per file);
gpy ``--engine local``; dlt fed Arrow batches of ``pyarrow.csv.open_csv`` (its fastest path for CSV: no
per-row normalising); at 5 M, gpy ``--engine spark`` and a plain PySpark script reading the CSV with an
explicit schema (no inference pass). The Spark contenders run at 5 M only (at 1 M a run is mostly the JVM's
start-up) and 20 M is pyarrow against gpy local, to keep ``make bench`` within its time.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import csv_to_parquet
from benchkit.context import Context
from benchkit.model import GPY_LOCAL, GPY_SPARK, Benchmark, Case, Contender, Step, Target, peers_slower
from benchkit.peers import BARE, DLT, PYSPARK, parquet_rows

FILES = 8
SIZES = {"1M": 1_000_000, "5M": 5_000_000, "20M": 20_000_000}
LIMIT_RATIO = {"1M": 1.3, "5M": 1.2, "20M": 1.2}  # gpy local's time at most this × the pyarrow script's
SPARK_AT = ("5M",)
KEYS = tuple(f"files-{label}" for label in SIZES)
DLT_AT = ("1M", "5M")

PYARROW_SCRIPT = csv_to_parquet.CONTENDERS["pyarrow (ceiling)"]
DLT_SCRIPT = csv_to_parquet.CONTENDERS["dlt"]
PYSPARK_SCRIPT = """
import os, sys
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
from pyspark.sql import SparkSession
from pyspark.sql.types import (DoubleType, LongType, StringType, StructField, StructType, TimestampType)
schema = StructType([StructField("order_id", LongType()), StructField("customer_id", LongType()),
                     StructField("amount", DoubleType()), StructField("currency", StringType()),
                     StructField("ordered_at", TimestampType()), StructField("note", StringType())])
spark = SparkSession.builder.master("local[*]").config("spark.ui.enabled", "false").getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
(spark.read.schema(schema).option("header", True).option("mode", "FAILFAST")
 .option("timestampFormat", "yyyy-MM-dd HH:mm:ss.SSSX").csv(sys.argv[1])
 .write.option("compression", "snappy").parquet(sys.argv[2]))
spark.stop()
"""


def csv_data(ctx: Context, rows: int) -> Path:
    """The orders as ``FILES`` CSV files of ``rows`` rows in all, generated once."""
    return ctx.cached(f"csv-{rows}x{FILES}", lambda folder: csv_to_parquet.make_data(folder, rows, FILES))


def _script(name: str, role: str, python: str | None, error: str | None, code: str, data: Path, rows: int,
            case: str, output: str = "") -> Contender:
    """A contender running ``python -c code DATA OUT``; its rows are counted under ``OUT/output``."""

    def trial(work: Path) -> list[Step]:
        out = work / "out"
        return [Step([python or "python", "-c", code, str(data), str(out)], case, rows,
                     lambda: parquet_rows(out / output))]

    return Contender(name, role, trial, error=error)


def benchmarks(ctx: Context) -> Iterator[Benchmark]:
    for label, full in SIZES.items():
        key = f"files-{label}"
        if not ctx.wants(key):
            continue
        rows = ctx.size(full, least=FILES) // FILES * FILES
        data = csv_data(ctx, rows)
        megabytes = sum(f.stat().st_size for f in data.glob("*.csv")) / 1e6
        bare, bare_error = ctx.python(BARE)
        contenders = [_script("pyarrow script", "limit", bare, bare_error, PYARROW_SCRIPT, data, rows, key)]
        contenders.append(_gpy_contender(ctx, data, rows, key, "local"))
        peers = []
        if label in SPARK_AT:
            contenders.append(_gpy_contender(ctx, data, rows, key, "spark"))
            python, error = ctx.python(PYSPARK)
            contenders.append(_script("plain PySpark", "peer", python, error, PYSPARK_SCRIPT, data, rows, key))
            peers.append("plain PySpark")
        if label in DLT_AT:
            python, error = ctx.python(DLT)
            contenders.append(_script("dlt", "peer", python, error, DLT_SCRIPT, data, rows, key,
                                      output="bench/orders"))
            peers.append("dlt")
        targets = [Target(key, GPY_LOCAL, "pyarrow script", "<=", LIMIT_RATIO[label])]
        targets += peers_slower(key, peers)
        if "plain PySpark" in peers:
            targets.append(Target(key, "plain PySpark", GPY_SPARK, ">", 1.0))
        case = Case(key, f"CSV → Parquet, {rows:,} rows ({FILES} files, {megabytes:,.0f} MB)", rows,
                    targets=targets)
        # the 1 M-row files take each contender a fraction of a second: three times the rounds for a steady median
        yield Benchmark(key, [case], contenders, rounds_factor=3 if label == "1M" else 1)


def _gpy_contender(ctx: Context, data: Path, rows: int, case: str, engine: str) -> Contender:
    """gpy on ``csv_to_parquet.py``'s job (the file source, Parquet, a thread per core), fresh state each trial."""

    def trial(work: Path) -> list[Step]:
        job = csv_to_parquet.gpy_job(work, data)
        return [Step(ctx.gpy("run", str(job), "--engine", engine), case, rows,
                     lambda: parquet_rows(work / "published"))]

    return Contender(f"gpy --engine {engine}", "gpy", trial)
