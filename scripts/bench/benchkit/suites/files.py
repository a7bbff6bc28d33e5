"""Files → Parquet on local disk: CSV at 1 M, 5 M and 20 M rows, JSON lines at 5 M (8 files of the orders table).

Contenders: the limit is ``csv_to_parquet.py``'s pyarrow script (``read_csv``/``read_json`` → ``write_table``
per file); gpy ``--engine local``; the single-machine peers of :mod:`benchkit.fast_peers` (Polars, DuckDB,
pyarrow ``write_dataset``) at every size; dlt fed Arrow batches of ``pyarrow.csv.open_csv`` (its fastest path
for CSV: no per-row normalising) at 1 M and 5 M; at 5 M, gpy ``--engine spark`` and a plain PySpark script
reading the CSV with an explicit schema (no inference pass). At 20 M the two Spark contenders are a benchmark of
their own (``files-20M-spark``, one round: each run takes a minute or more). No Spark at 1 M (a run is mostly the
JVM's start-up), to keep ``make bench`` within its time.

Targets at 5 M and 20 M (and the JSON lines): gpy local at or below the fastest single-machine peer's time;
on every row, gpy's peak memory within 1.5 × the pyarrow script's, and at 20 M within 10 % of its own at 5 M
(it streams: memory must not grow with the input).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import csv_to_parquet
from benchkit.context import Context
from benchkit import fast_peers
from benchkit.model import GPY_LOCAL, GPY_SPARK, Benchmark, Case, Contender, Step, Target, memory_within, peers_slower
from benchkit.peers import BARE, DLT, DUCKDB, POLARS, PYSPARK, parquet_rows

FILES = 8
SIZES = {"1M": 1_000_000, "5M": 5_000_000, "20M": 20_000_000}
LIMIT_RATIO = {"1M": 1.3, "5M": 1.2, "20M": 1.2}  # gpy local's time at most this × the pyarrow script's
SPARK_AT = ("5M",)
JSON_ROWS = {"5M": 5_000_000}
SPARK_ALONE_AT = ("20M",)  # a benchmark of their own (one round): a Spark run of 20 M rows takes minutes
SPARK_ROUNDS = 1
KEYS = (*(f"files-{label}" for label in SIZES), *(f"files-{label}-spark" for label in SPARK_ALONE_AT),
        *(f"jsonl-{label}" for label in JSON_ROWS))
DLT_AT = ("1M", "5M")
PEERS_AT_MOST = ("5M", "20M")  # where gpy local must be at least as fast as the fastest single-machine peer
MEMORY_GROWTH = 1.1  # gpy's peak memory at 20 M at most this × its own at 5 M
NOTES = [
    "Files (profiled with py-spy, CPU time under load): a gpy run spends its time in pyarrow's CSV parse and "
    "Parquet write, as the pyarrow script does, plus a fixed ~0.3 s of CPU for start-up, planning, staging, "
    "commit and state; Polars and DuckDB parse and encode with their own, faster native code and keep no state "
    "(docs/performance.md: what the peers skip).",
    "Files, memory: each task holds up to one Parquet row group (parquet.block.size, 32 MB of Arrow data, about "
    "700,000 of these rows) before writing it, and reads its file through a paced stream, at most 3 blocks of "
    "1 MB ahead of the batches taken (Arrow's streaming reader alone reads 32 ahead, held while the task "
    "encodes; the stream holds a read only while the task is busy or waits on Arrow's parse, never when it "
    "waits on that read, so opening a file whose first row spans more blocks cannot hang). A 625,000-row file "
    "(5 M rows, 28 MB) is one row group, a 2,500,000-row one (20 M) four, so peak "
    "memory grows from 5 M to 20 M by the two tasks' 4 MB larger row groups and their read-ahead. Encoding a row "
    "group takes about 30 MB more, whatever its size: Arrow's dictionary tried on the unique id and time "
    "columns before it falls back to plain. With the 64 MB default (1,048,576 rows here) and Arrow's read-ahead, "
    "20 M rows peaked at 1.3 to 1.4 x 5 M rows' memory; the paced stream alone left it at 1.2 to 1.25 x. 24 MB "
    "row groups were flatter (1.0 to 1.1 x) but cut each 5 M-row file in two and took 11 % more CPU there. "
    "Under load 3.5 to 5: 284 and 298 MB (1.05 x); in turns with Arrow's read-ahead and 64 MB groups, same load "
    "(2 to 3.5), the 20 M run took the same median time (8.4 s) in 270 to 296 MB instead of 358 to 388 MB.",
]
JSON_NOTES = [
    "JSON lines (perf, CPU time): pyarrow's JSON parser is about 60 % of a gpy run's CPU, as of the pyarrow "
    "script's, the Parquet write about 10 %; Polars' and DuckDB's whole runs take less CPU than that parse alone "
    "(about 3.8 s against 6.2 s for gpy), so gpy, on the same parser as the pyarrow script, stays behind them. "
    "Parsing one of the 8 files (625,000 rows, 79 MB) into memory, one thread: DuckDB 0.32 s of CPU, Polars "
    "0.65 s, pyarrow 0.78 to 0.90 s; so Polars' parser would not close the gap and DuckDB's would mean DuckDB "
    "as a dependency, with its own type inference (it reads the ISO times as timestamps, pyarrow as text). "
    "Tried: pyarrow's JSON reader without its thread pool, one thread a task (no less CPU: 5.3 s against 5.1 s).",
]

PYARROW_SCRIPT = csv_to_parquet.CONTENDERS["pyarrow (ceiling)"]
PYARROW_JSON_SCRIPT = """
import sys, pathlib, pyarrow.json as j, pyarrow.parquet as pq
data, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]); out.mkdir(parents=True)
for f in sorted(data.glob("*.jsonl")):
    pq.write_table(j.read_json(f), out / (f.stem + ".parquet"), compression="snappy")
"""
FAST_PEERS = {"Polars": (POLARS, fast_peers.POLARS_FILES), "DuckDB": (DUCKDB, fast_peers.DUCKDB_FILES),
              "pyarrow write_dataset": (BARE, fast_peers.WRITE_DATASET)}
DLT_SCRIPT = csv_to_parquet.CONTENDERS["dlt"]
PYSPARK_SCRIPT = csv_to_parquet.CONTENDERS["pyspark"]  # an explicit schema: no inference pass


def csv_data(ctx: Context, rows: int) -> Path:
    """The orders as ``FILES`` CSV files of ``rows`` rows in all, generated once."""
    return ctx.cached(f"csv-{rows}x{FILES}", lambda folder: csv_to_parquet.make_data(folder, rows, FILES))


def jsonl_data(ctx: Context, rows: int) -> Path:
    """The same orders as ``FILES`` JSON-lines files, generated once."""
    return ctx.cached(f"jsonl-{rows}x{FILES}", lambda folder: csv_to_parquet.make_jsonl(folder, rows, FILES))


def _script(name: str, role: str, python: str | None, error: str | None, code: str, data: Path, rows: int,
            case: str, output: str = "", args: tuple[str, ...] = ()) -> Contender:
    """A contender running ``python -c code DATA OUT *args``; its rows are counted under ``OUT/output``."""

    def trial(work: Path) -> list[Step]:
        out = work / "out"
        return [Step([python or "python", "-c", code, str(data), str(out), *args], case, rows,
                     lambda: parquet_rows(out / output))]

    return Contender(name, role, trial, error=error)


def _fast_peers(ctx: Context, data: Path, rows: int, key: str, ext: str) -> list[Contender]:
    contenders = []
    for name, (spec, code) in FAST_PEERS.items():
        python, error = ctx.python(spec)
        contenders.append(_script(name, "peer", python, error, code, data, rows, key, args=(ext,)))
    return contenders


def _peer_targets(key: str, label: str, peers: list[str]) -> list[Target]:
    """gpy at most the fastest single-machine peer's time (at 5 M and 20 M), and every other peer slower."""
    if label not in PEERS_AT_MOST:
        return peers_slower(key, [p for p in peers if p not in FAST_PEERS])
    single = tuple(p for p in peers if p != "plain PySpark")
    return [Target(key, GPY_LOCAL, single, "<=", 1.0), *peers_slower(key, [p for p in peers if p not in single])]


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
        contenders += _fast_peers(ctx, data, rows, key, "csv")
        peers = list(FAST_PEERS)
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
        targets += _peer_targets(key, label, peers)
        if "plain PySpark" in peers:
            targets.append(Target(key, "plain PySpark", GPY_SPARK, ">", 1.0))
        targets.append(memory_within(key, "pyarrow script"))
        if label == "20M":
            targets.append(Target(key, GPY_LOCAL, GPY_LOCAL, "<=", MEMORY_GROWTH, "memory", baseline_case="files-5M"))
        case = Case(key, f"CSV → Parquet, {rows:,} rows ({FILES} files, {megabytes:,.0f} MB)", rows,
                    targets=targets)
        # the 1 M-row files take each contender a fraction of a second: three times the rounds for a steady median
        yield Benchmark(key, [case], contenders, rounds_factor=3 if label == "1M" else 1,
                        notes=NOTES if label == "20M" else [])
    yield from _spark_benchmarks(ctx)
    yield from _json_benchmarks(ctx)


def _spark_benchmarks(ctx: Context) -> Iterator[Benchmark]:
    """gpy ``--engine spark`` against the plain PySpark script alone, on the sizes too slow for three rounds."""
    for label in SPARK_ALONE_AT:
        key = f"files-{label}-spark"
        if not ctx.wants(key):
            continue
        rows = ctx.size(SIZES[label], least=FILES) // FILES * FILES
        data = csv_data(ctx, rows)
        python, error = ctx.python(PYSPARK)
        contenders = [_gpy_contender(ctx, data, rows, key, "spark"),
                      _script("plain PySpark", "peer", python, error, PYSPARK_SCRIPT, data, rows, key)]
        case = Case(key, f"CSV → Parquet, {rows:,} rows, on Spark (local[*])", rows, reference=GPY_SPARK,
                    targets=[Target(key, "plain PySpark", GPY_SPARK, ">", 1.0)])
        yield Benchmark(key, [case], contenders, max_rounds=SPARK_ROUNDS)


def _json_benchmarks(ctx: Context) -> Iterator[Benchmark]:
    for label, full in JSON_ROWS.items():
        key = f"jsonl-{label}"
        if not ctx.wants(key):
            continue
        rows = ctx.size(full, least=FILES) // FILES * FILES
        data = jsonl_data(ctx, rows)
        megabytes = sum(f.stat().st_size for f in data.glob("*.jsonl")) / 1e6
        bare, bare_error = ctx.python(BARE)
        contenders = [_script("pyarrow script", "limit", bare, bare_error, PYARROW_JSON_SCRIPT, data, rows, key),
                      _gpy_contender(ctx, data, rows, key, "local"), *_fast_peers(ctx, data, rows, key, "jsonl")]
        targets = [Target(key, GPY_LOCAL, "pyarrow script", "<=", LIMIT_RATIO[label]),
                   *_peer_targets(key, label, list(FAST_PEERS)), memory_within(key, "pyarrow script")]
        case = Case(key, f"JSON lines → Parquet, {rows:,} rows ({FILES} files, {megabytes:,.0f} MB)", rows,
                    targets=targets)
        yield Benchmark(key, [case], contenders, notes=JSON_NOTES)


def _gpy_contender(ctx: Context, data: Path, rows: int, case: str, engine: str) -> Contender:
    """gpy on ``csv_to_parquet.py``'s job (the file source, Parquet, a thread per core), fresh state each trial."""

    def trial(work: Path) -> list[Step]:
        job = csv_to_parquet.gpy_job(work, data)
        return [Step(ctx.gpy("run", str(job), "--engine", engine), case, rows,
                     lambda: parquet_rows(work / "published"))]

    return Contender(f"gpy --engine {engine}", "gpy", trial)
