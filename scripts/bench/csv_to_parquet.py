"""Benchmark: CSV files to Parquet — gpy against dlt, plain PySpark (explicit schema) and a bare pyarrow ceiling.

    python scripts/bench/csv_to_parquet.py [--rows 2000000] [--files 8] [--dir DIR]

Every contender turns the same CSV files (orders: 6 columns) into Parquet on local disk, each as a separate
process started from here, timed from start to finish (interpreter and JVM start-up included, as cron would
see it). Prints rows/s per contender and the ratio of gpy's time to each other's, so a noisy machine still
compares fairly. dlt is optional (``pip install "dlt[parquet,filesystem]"``); without it that row is skipped.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute  # noqa: F401 - pa.compute below
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[2]


def orders(start: int, rows: int) -> pa.Table:
    """``rows`` orders from id ``start`` on: ids, a customer, an amount, a currency, a timestamp and a note."""
    ids = pa.array(range(start, start + rows), pa.int64())
    return pa.table({
        "order_id": ids,
        "customer_id": pa.compute.bit_wise_and(ids, 8191),
        "amount": pa.compute.divide(pa.compute.cast(pa.compute.bit_wise_and(ids, 65535), pa.float64()), 100.0),
        "currency": pa.array(["EUR", "USD", "GBP", "JPY"] * (rows // 4) + ["EUR"] * (rows % 4)),
        "ordered_at": pa.compute.cast(pa.compute.add(pa.compute.multiply(ids, 1000), 1_700_000_000_000),
                                      pa.timestamp("ms", tz="UTC")),
        "note": pa.array(["", "gift", "express", "pickup", "return"] * (rows // 5) + [""] * (rows % 5)),
    })


def make_data(directory: Path, rows: int, files: int) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    per_file = rows // files
    for k in range(files):
        pa_csv.write_csv(orders(k * per_file, per_file), directory / f"orders-{k:03d}.csv")


def make_jsonl(directory: Path, rows: int, files: int, chunk: int = 262_144) -> None:
    """The same orders as JSON lines, one object a line (the timestamp as ISO 8601 text, as JSON has no other)."""
    pc = pa.compute
    directory.mkdir(parents=True, exist_ok=True)
    per_file = rows // files
    for k in range(files):
        with open(directory / f"orders-{k:03d}.jsonl", "w") as out:
            for start in range(k * per_file, (k + 1) * per_file, chunk):
                table = orders(start, min(chunk, (k + 1) * per_file - start))
                text = [pc.cast(table[name], pa.string()) for name in ("order_id", "customer_id", "amount")]
                stamp = pc.strftime(table["ordered_at"], format="%Y-%m-%dT%H:%M:%SZ")
                lines = pc.binary_join_element_wise(
                    '{"order_id":', text[0], ',"customer_id":', text[1], ',"amount":', text[2], ',"currency":"',
                    table["currency"], '","ordered_at":"', stamp, '","note":"', table["note"], '"}', "")
                out.write("\n".join(lines.to_pylist()) + "\n")


def gpy_job(root: Path, data: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    job = root / "bench.pull"
    job.write_text(textwrap.dedent(f"""\
        job.name=Bench
        source.class=gobblin_py.connectors.files.filebased.FileBasedSource
        source.filebased.data.directory={data}
        extract.namespace=bench
        extract.table.name=orders
        writer.output.format=PARQUET
        writer.codec.type=snappy
        writer.staging.dir={root}/staging
        writer.output.dir={root}/output
        data.publisher.final.dir={root}/published
        state.store.dir={root}/state
        task.maxretries=0
        taskexecutor.threadpool.size={os.cpu_count() or 2}
        """))
    return job


CONTENDERS = {
    "pyarrow (ceiling)": """
import sys, pathlib, pyarrow.csv as c, pyarrow.parquet as pq
data, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]); out.mkdir(parents=True)
for f in sorted(data.glob("*.csv")):
    pq.write_table(c.read_csv(f), out / (f.stem + ".parquet"), compression="snappy")
""",
    # an explicit schema, as a team would write it: inferSchema would read every file twice
    "pyspark": """
import os, sys
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
try:
    from gobblin_py.runtime.engines.java import ensure_java
    ensure_java()
except ImportError:  # run from an environment of its own, JAVA_HOME inherited
    pass
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
""",
    "dlt": """
import sys, pathlib, dlt, pyarrow.csv as c
data, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
@dlt.resource(name="orders", write_disposition="append")
def orders():
    for f in sorted(data.glob("*.csv")):
        reader = c.open_csv(f)
        for batch in reader:
            yield batch
pipeline = dlt.pipeline(pipeline_name="bench", destination=dlt.destinations.filesystem(str(out)),
                        dataset_name="bench", pipelines_dir=str(out.parent / "dlt-pipelines"))
pipeline.run(orders(), loader_file_format="parquet")
""",
}


def timed(cmd: list[str], env: dict | None = None, cwd: Path | None = None) -> float:
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **(env or {})}, cwd=cwd)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{cmd[:3]} failed:\n{done.stderr[-3000:]}")
    return elapsed


def count_rows(directory: Path) -> int:
    return sum(pq.ParquetFile(f).metadata.num_rows for f in directory.rglob("*.parquet"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--dir", default=None)
    args = parser.parse_args()
    root = Path(args.dir or tempfile.mkdtemp(prefix="gpy-bench-csv-"))
    data = root / "data"
    make_data(data, args.rows, args.files)
    rows = args.rows // args.files * args.files
    size = sum(f.stat().st_size for f in data.glob("*.csv")) / 1e6
    print(f"{rows} rows in {args.files} CSV files ({size:.0f} MB), {os.cpu_count()} cores")
    results: dict[str, float] = {}
    for engine in ("local", "spark"):
        work = root / f"gpy-{engine}"
        job = gpy_job(work, data)
        results[f"gpy --engine {engine}"] = timed([sys.executable, "-m", "gobblin_py.cli", "run", str(job),
                                                   "--engine", engine], cwd=REPO)
        assert count_rows(work / "published") == rows, engine
    for name, code in CONTENDERS.items():
        if name == "dlt":
            try:
                import dlt  # noqa: F401
            except ImportError:
                print("dlt: skipped (pip install 'dlt[parquet,filesystem]')")
                continue
        out = root / name.split()[0] / "out"
        shutil.rmtree(out.parent, ignore_errors=True)
        out.parent.mkdir(parents=True)
        results[name] = timed([sys.executable, "-c", code, str(data), str(out)], env={"PYTHONPATH": str(REPO)})
        assert count_rows(out) == rows, name
    ours = results["gpy --engine local"]
    for name, seconds in results.items():
        ratio = "" if name == "gpy --engine local" else f"   gpy local takes x{ours / seconds:.2f} of its time"
        print(f"{name:<22} {seconds:7.2f} s  {rows / seconds / 1e6:5.2f} M rows/s{ratio}")
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
