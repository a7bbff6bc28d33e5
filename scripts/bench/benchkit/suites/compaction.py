"""Compaction: a day of 24 hourly Parquet folders, 20 M rows of which 5 % are duplicates → one deduplicated day.

The input is laid out as gpy's Kafka job writes a topic and the hourly → daily compaction reads it:
``<lake>/tracking/PageViewEvent/hourly/2024/05/01/HH/part-N.parquet``, ``FILES_PER_HOUR`` files an hour. Each
distinct event (a unique ``event_id``, its time within its hour, a user, a session, a page, a country, an
event type, an amount, a quantity) is written once; 5 % of the rows repeat an event exactly (a redelivery), half
of them in the event's own hour, half in another hour of the day. Deduplicating on every field leaves exactly
the distinct events, and each contender's output is counted against that number.

Contenders, each deduplicating on all fields (Gobblin's dedup for input with no primary key named):

- gpy ``--engine local`` and ``--engine spark`` running ``jobs/compaction/hourly_to_daily.pull`` (Gobblin's own
  test job) with only its paths changed: one dataset, the day, whose hours are read recursively;
- plain PySpark: ``spark.read.parquet`` of the day's hours (``recursiveFileLookup``) → ``dropDuplicates()`` →
  ``write.parquet``, Spark's defaults otherwise;
- Polars: ``scan_parquet`` → ``unique(maintain_order=False)`` → ``sink_parquet``;
- DuckDB: ``COPY (SELECT DISTINCT * FROM read_parquet(...)) TO`` one Parquet file.

Two benchmarks on the same data, as ``files`` splits its 20 M rows: ``compaction-20M`` (gpy local, Polars,
DuckDB; the harness's rounds, 3 by default: 10 to 45 s a run) with its target, gpy local at most 1.1 × the
faster of DuckDB and Polars; and ``compaction-20M-spark`` (gpy on Spark and plain PySpark, ``SPARK_ROUNDS``
round: one to four minutes a run) with its target, gpy on Spark at most plain PySpark's time. Peak memory (each
process tree's, a JVM included) is in the table.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from benchkit.context import Context
from benchkit.model import GPY_LOCAL, GPY_SPARK, Benchmark, Case, Contender, Step, Target
from benchkit.peers import DUCKDB, POLARS, PYSPARK, parquet_rows
from benchkit.venvs import VenvSpec

ROWS = 20_000_000
DUPLICATE_SHARE = 0.05
HOURS = 24
FILES_PER_HOUR = 4
KEYS = ("compaction-20M", "compaction-20M-spark")
SPARK_ROUNDS = 1  # a Spark run of the day takes one to four minutes: one round keeps make bench in time
LOCAL_RATIO = 1.1  # gpy local's time at most this × the faster of DuckDB and Polars
TOPIC = "tracking/PageViewEvent"
DAY = "2024/05/01"
DAY_START_MS = 1714521600000  # 2024-05-01 00:00 UTC
GOBBLIN_JOB = Path(__file__).resolve().parents[4] / "jobs" / "compaction" / "hourly_to_daily.pull"

SCHEMA = pa.schema([("event_id", pa.int64()), ("event_time", pa.timestamp("ms", "UTC")), ("user_id", pa.int64()),
                    ("session_id", pa.string()), ("event_type", pa.string()), ("page", pa.string()),
                    ("country", pa.string()), ("amount", pa.float64()), ("quantity", pa.int32())])
EVENT_TYPES = pa.array(["page_view", "click", "add_to_cart", "remove_from_cart", "checkout", "purchase", "search",
                        "login"])
COUNTRIES = pa.array(["US", "GB", "DE", "FR", "NL", "IN", "BR", "JP", "CA", "AU", "ES", "IT", "SE", "PL", "MX",
                      "KR", "SG", "ZA", "IE", "CH"])
PAGES = pa.array([f"/{section}/{n}" for section in ("products", "search", "cart", "help", "blog")
                  for n in range(2000)])

POLARS_SCRIPT = """
import sys, pathlib, polars as pl
day, out = sys.argv[1], pathlib.Path(sys.argv[2]); out.mkdir(parents=True)
pl.scan_parquet(f"{day}/*/*.parquet").unique(maintain_order=False).sink_parquet(out / "daily.parquet",
                                                                                  compression="snappy")
"""

DUCKDB_SCRIPT = """
import sys, pathlib, duckdb
day, out = sys.argv[1], pathlib.Path(sys.argv[2]); out.mkdir(parents=True)
duckdb.connect().execute(f"COPY (SELECT DISTINCT * FROM read_parquet('{day}/*/*.parquet')) TO '{out}/daily.parquet' "
                         "(FORMAT parquet, COMPRESSION snappy)")
"""

PYSPARK_SCRIPT = """
import os, sys
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
from pyspark.sql import SparkSession
spark = SparkSession.builder.master("local[*]").config("spark.ui.enabled", "false").getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
(spark.read.option("recursiveFileLookup", "true").parquet(sys.argv[1]).dropDuplicates()
 .write.option("compression", "snappy").parquet(sys.argv[2]))
spark.stop()
"""


def _mix(values: np.ndarray, salt: int) -> np.ndarray:
    """A 64-bit hash of each value (splitmix64's finaliser): the columns are functions of the event's number."""
    z = values.astype(np.uint64) + np.uint64((0x9E3779B97F4A7C15 * (salt + 1)) & 0xFFFFFFFFFFFFFFFF)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def events(numbers: np.ndarray, distinct: int) -> pa.Table:
    """The events numbered ``numbers`` (of ``distinct``, spread over the day in order): the same number, the same
    row, byte for byte."""
    hour = numbers.astype(np.int64) * HOURS // distinct
    ms = DAY_START_MS + hour * 3_600_000 + (_mix(numbers, 1) % np.uint64(3_600_000)).astype(np.int64)
    session = pc.binary_join_element_wise("s-", pa.array(_mix(numbers // 8, 2) >> np.uint64(24)).cast(pa.string()),
                                          "")
    return pa.table([
        pa.array(1_000_000_000 + numbers.astype(np.int64)),
        pa.array(ms, pa.timestamp("ms", "UTC")),
        pa.array((_mix(numbers, 3) % np.uint64(2_000_000)).astype(np.int64)),
        session,
        EVENT_TYPES.take(pa.array(_mix(numbers, 4) % np.uint64(len(EVENT_TYPES)))),
        PAGES.take(pa.array(_mix(numbers, 5) % np.uint64(len(PAGES)))),
        COUNTRIES.take(pa.array(_mix(numbers, 6) % np.uint64(len(COUNTRIES)))),
        pa.array((_mix(numbers, 7) % np.uint64(50_000)).astype(np.float64) / 100),
        pa.array((_mix(numbers, 8) % np.uint64(5) + np.uint64(1)).astype(np.int32)),
    ], schema=SCHEMA)


def split(rows: int) -> tuple[int, int]:
    """``(distinct, duplicates)`` of ``rows`` rows."""
    duplicates = round(rows * DUPLICATE_SHARE)
    return rows - duplicates, duplicates


def make_lake(root: Path, rows: int, seed: int = 38) -> None:
    """The day's hourly folders under ``root`` (see the module), hour by hour."""
    distinct, duplicates = split(rows)
    rng = np.random.default_rng(seed)
    repeated = rng.choice(distinct, duplicates, replace=False)
    own_hour = repeated.astype(np.int64) * HOURS // distinct
    other = rng.random(duplicates) < 0.5
    repeat_hour = np.where(other, rng.integers(0, HOURS, duplicates), own_hour)
    for hour in range(HOURS):
        first, end = -(-hour * distinct // HOURS), -(-(hour + 1) * distinct // HOURS)
        numbers = np.concatenate([np.arange(first, end), repeated[repeat_hour == hour]])
        rng.shuffle(numbers)  # a redelivery lands anywhere in the hour's files
        folder = root / TOPIC / "hourly" / DAY / f"{hour:02d}"
        folder.mkdir(parents=True)
        for part, chunk in enumerate(np.array_split(numbers, FILES_PER_HOUR)):
            pq.write_table(events(chunk, distinct), folder / f"part-{part}.parquet", compression="snappy")


def lake(ctx: Context, rows: int) -> Path:
    return ctx.cached(f"hourly-lake-{rows}", lambda folder: make_lake(folder, rows))


def gpy_job(work: Path, data: Path) -> Path:
    """Gobblin's hourly → daily test job with its paths moved: input ``data``, output and work under ``work``."""
    paths = {"gobblin.dataset.pattern": f"{data}/*/*/hourly/*/*/*", "compaction.input.dir": str(data),
             "compaction.dest.dir": str(work / "lake"), "compaction.tmp.dest.dir": str(work / "tmp")}
    lines = []
    for line in GOBBLIN_JOB.read_text().splitlines():
        key = line.partition("=")[0].strip()
        lines.append(f"{key}={paths[key]}" if key in paths else line)
    work.mkdir(parents=True, exist_ok=True)
    job = work / "hourly_to_daily.pull"
    job.write_text("\n".join(lines) + "\n")
    return job


def _gpy(ctx: Context, data: Path, distinct: int, key: str, engine: str) -> Contender:
    def trial(work: Path) -> list[Step]:
        job = gpy_job(work, data)
        return [Step(ctx.gpy("run", str(job), "--engine", engine), key, distinct,
                     lambda: parquet_rows(work / "lake"))]

    return Contender(f"gpy --engine {engine}", "gpy", trial)


def _script(ctx: Context, name: str, spec: VenvSpec, code: str, day: Path, distinct: int, key: str) -> Contender:
    python, error = ctx.python(spec)

    def trial(work: Path) -> list[Step]:
        out = work / "out"
        return [Step([python or "python", "-c", code, str(day), str(out)], key, distinct, lambda: parquet_rows(out))]

    return Contender(name, "peer", trial, error=error)


def benchmarks(ctx: Context) -> Iterator[Benchmark]:
    local, spark = KEYS
    if not ctx.wants(local, spark):
        return
    rows = ctx.size(ROWS, least=HOURS * FILES_PER_HOUR * 10)
    distinct, duplicates = split(rows)
    data = lake(ctx, rows)
    day = data / TOPIC / "hourly" / DAY
    megabytes = sum(f.stat().st_size for f in day.rglob("*.parquet")) / 1e6
    what = (f"{rows:,} rows ({HOURS} hours × {FILES_PER_HOUR} files, {megabytes:,.0f} MB, {duplicates:,} duplicates) "
            f"→ {distinct:,}")
    if ctx.wants(local):
        contenders = [_gpy(ctx, data, distinct, local, "local"),
                      _script(ctx, "Polars", POLARS, POLARS_SCRIPT, day, distinct, local),
                      _script(ctx, "DuckDB", DUCKDB, DUCKDB_SCRIPT, day, distinct, local)]
        targets = [Target(local, GPY_LOCAL, ("DuckDB", "Polars"), "<=", LOCAL_RATIO)]
        yield Benchmark(local, [Case(local, f"Compaction hourly → daily, {what}", rows, targets=targets)],
                        contenders)
    if ctx.wants(spark):
        contenders = [_gpy(ctx, data, distinct, spark, "spark"),
                      _script(ctx, "plain PySpark", PYSPARK, PYSPARK_SCRIPT, day, distinct, spark)]
        targets = [Target(spark, GPY_SPARK, "plain PySpark", "<=", 1.0)]
        case = Case(spark, f"Compaction hourly → daily, {what}, on Spark (local[*])", rows, reference=GPY_SPARK,
                    targets=targets)
        yield Benchmark(spark, [case], contenders, max_rounds=SPARK_ROUNDS)
