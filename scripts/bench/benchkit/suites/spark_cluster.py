"""CSV → Parquet (the files suite's 5 M orders) on a Spark cluster: a 2-worker standalone cluster, and a Spark
Connect server, both on loopback (:mod:`benchkit.spark_servers`), each started once for its benchmark.

Standalone: ``gpy run --master spark://…`` (its executors' Python is a bare virtual environment, so gpy ships
its environment archive, built beforehand by ``gpy pack``, untimed) against the plain PySpark script (explicit
schema) on the same master. Connect: ``gpy run --remote sc://…`` — each trial's first run opens a new session
on the server (and ships the archive into it), a second run of the same job name (fresh output and state)
reuses the session the first left open — against the plain PySpark script through ``SparkSession.builder.remote``.
The clusters' start-up is not in any time: it is reported in a note. Targets: gpy at least as fast as the
plain script on the standalone cluster, and through Connect both on its first run (which ships gpy's
environment into the new session) and on a kept session's run.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import csv_to_parquet

from benchkit import spark_servers
from benchkit.context import Context
from benchkit.model import Benchmark, Case, Contender, Step, Target
from benchkit.peers import PYSPARK, PYSPARK_CONNECT, parquet_rows
from benchkit.suites.files import FILES, PYSPARK_SCRIPT, csv_data

ROWS = 5_000_000
MAX_ROUNDS = 2  # a run on the cluster takes tens of seconds on 2 shared cores
STANDALONE, CONNECT_FIRST, CONNECT_KEPT = "spark-standalone-5M", "connect-5M-first", "connect-5M-kept"
KEYS = (STANDALONE, CONNECT_FIRST, CONNECT_KEPT)
GPY_CLUSTER, GPY_REMOTE, PLAIN = "gpy --master spark://", "gpy --remote sc://", "plain PySpark"

PLAIN_ON_MASTER = PYSPARK_SCRIPT.replace('.master("local[*]")', ".master(sys.argv[3])")
PLAIN_CONNECT = """
import sys
from pyspark.sql import SparkSession
from pyspark.sql.types import (DoubleType, LongType, StringType, StructField, StructType, TimestampType)
schema = StructType([StructField("order_id", LongType()), StructField("customer_id", LongType()),
                     StructField("amount", DoubleType()), StructField("currency", StringType()),
                     StructField("ordered_at", TimestampType()), StructField("note", StringType())])
spark = SparkSession.builder.remote(sys.argv[3]).getOrCreate()
(spark.read.schema(schema).option("header", True).option("mode", "FAILFAST")
 .option("timestampFormat", "yyyy-MM-dd HH:mm:ss.SSSX").csv(sys.argv[1])
 .write.option("compression", "snappy").parquet(sys.argv[2]))
spark.stop()
"""
assert PLAIN_ON_MASTER != PYSPARK_SCRIPT, "the plain PySpark script no longer names its master as expected"


def _plain(python: str | None, error: str | None, code: str, data: Path, rows: int, case: str,
           where: str) -> Contender:
    def trial(work: Path) -> list[Step]:
        out = work / "out"
        return [Step([python or "python", "-c", code, str(data), str(out), where], case, rows,
                     lambda: parquet_rows(out))]

    return Contender(PLAIN, "peer", trial, cases=(case,), error=error)


def _job(work: Path, data: Path, name: str) -> Path:
    job = csv_to_parquet.gpy_job(work, data)
    job.write_text(job.read_text().replace("job.name=Bench\n", f"job.name={name}\n"))
    return job


def benchmarks(ctx: Context) -> Iterator[Benchmark]:
    if not ctx.wants(*KEYS):
        return
    rows = ctx.size(ROWS, least=FILES) // FILES * FILES
    data = csv_data(ctx, rows)
    python, error = ctx.python(PYSPARK)
    bare = spark_servers.bare_python(ctx.cache / "bare-python")
    # the archive gpy ships, built once here (it is cached by content), so no timed run builds it
    subprocess.run(ctx.gpy("pack", str(_job(ctx.work / "pack", data, "Pack"))), check=True, capture_output=True)
    with ExitStack() as stack:
        if ctx.wants(STANDALONE):
            cluster = stack.enter_context(spark_servers.standalone(ctx.work / "standalone", bare))
            yield _standalone(ctx, cluster, data, rows, python, error)
            stack.close()
        if ctx.wants(CONNECT_FIRST, CONNECT_KEPT):
            server = stack.enter_context(spark_servers.connect(ctx.work / "connect", bare))
            yield _connect(ctx, server, data, rows, *ctx.python(PYSPARK_CONNECT))


def _standalone(ctx: Context, cluster: spark_servers.Server, data: Path, rows: int, python: str | None,
                error: str | None) -> Benchmark:
    env = {"PYSPARK_PYTHON": str(cluster.python)}

    def trial(work: Path) -> list[Step]:
        job = _job(work, data, "Bench")
        return [Step(ctx.gpy("run", str(job), "--master", cluster.url), STANDALONE, rows,
                     lambda: parquet_rows(work / "published"), env=env)]

    case = Case(STANDALONE, f"CSV → Parquet, {rows:,} rows, on a standalone cluster (2 workers × 1 core)", rows,
                reference=GPY_CLUSTER, targets=[Target(STANDALONE, PLAIN, GPY_CLUSTER, ">=", 1.0)])
    contenders = [Contender(GPY_CLUSTER, "gpy", trial),
                  _plain(python, error, PLAIN_ON_MASTER, data, rows, STANDALONE, cluster.url)]
    note = (f"Standalone cluster: master and 2 one-core, 1 GB workers on loopback, started once in "
            f"{cluster.start_seconds:.1f} s (not counted); executors run a bare Python, gpy's from the archive "
            "`gpy pack` built beforehand.")
    return Benchmark("spark-standalone", [case], contenders, max_rounds=MAX_ROUNDS, notes=[note])


def _connect(ctx: Context, server: spark_servers.Server, data: Path, rows: int, python: str | None,
             error: str | None) -> Benchmark:
    trials = iter(range(1_000_000))

    def trial(work: Path) -> list[Step]:
        name = f"BenchConnect{next(trials)}"  # a new job name: a new session on the server
        first, kept = _job(work / "first", data, name), _job(work / "kept", data, name)
        return [Step(ctx.gpy("run", str(first), "--remote", server.url), CONNECT_FIRST, rows,
                     lambda: parquet_rows(work / "first" / "published")),
                Step(ctx.gpy("run", str(kept), "--remote", server.url), CONNECT_KEPT, rows,
                     lambda: parquet_rows(work / "kept" / "published"))]

    cases = [Case(CONNECT_FIRST, f"CSV → Parquet, {rows:,} rows, through Spark Connect (local[2]): a new session",
                  rows, reference=GPY_REMOTE, targets=[Target(CONNECT_FIRST, PLAIN, GPY_REMOTE, ">=", 1.0)]),
             # the plain script has no session to keep (it opens one a run): its run against gpy's steady state
             Case(CONNECT_KEPT, "the same through Spark Connect, the job's session kept from its last run", rows,
                  reference=GPY_REMOTE,
                  targets=[Target(CONNECT_FIRST, PLAIN, GPY_REMOTE, ">=", 1.0, baseline_case=CONNECT_KEPT)])]
    contenders = [Contender(GPY_REMOTE, "gpy", trial),
                  _plain(python, error, PLAIN_CONNECT, data, rows, CONNECT_FIRST, server.url)]
    note = (f"Spark Connect: one server (local[2]) on loopback, started once in {server.start_seconds:.1f} s (not "
            "counted); a gpy trial's first run opens the job's session and ships the environment archive into it, "
            "its second run (same job name, fresh state) finds the session kept.")
    return Benchmark("spark-connect", cases, contenders, max_rounds=MAX_ROUNDS, notes=[note])
