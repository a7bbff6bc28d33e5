"""Every benchmark, each contender a whole process, interleaved and repeated: ``make bench``.

    python scripts/bench/run.py [--quick | --scale F] [--only PATTERNS] [--repeats N] [--list]

Runs the suites of ``benchkit/suites`` (CSV files at 1 M, 5 M and 20 M rows on the local and Spark engines,
JSON lines at 5 M, 5 M CSV rows into a Delta and an Iceberg table, 200 incremental runs into one table, SQLite
and PostgreSQL first, incremental and no-op loads, a Kafka topic, a state store of 10,000 datasets, 24 hourly
Parquet folders of 20 M rows compacted into a deduplicated day), checks every contender's output row count, prints
the table and writes ``bench/results.md``
(and ``results.json``). Peers (Polars, DuckDB, pyarrow write_dataset, dlt, plain PySpark) and the limit scripts
run from their own virtual environments under ``~/.cache/gobblin_py/bench-<name>-<hash>``; generated data is kept under ``.bench/data``. Exit code 1
when any run failed or left the wrong number of rows; missed targets are reported and, with ``--strict``, exit
with 3.

A run with ``--quick``, ``--scale`` or ``--only`` writes its results under ``.bench/results`` unless ``--results``
says otherwise, so ``bench/results.md`` only ever holds a complete run.
"""

from __future__ import annotations

import argparse
import compileall
import os
import platform
import shlex
import shutil
import subprocess
import sys
import time
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchkit import report  # noqa: E402
from benchkit.context import DEFAULT_VENV_ROOT, Context  # noqa: E402
from benchkit.peers import (  # noqa: E402
    CONNECTORX_VERSION,
    DLT_VERSION,
    DUCKDB_SCANNERS_VERSION,
    DUCKDB_VERSION,
    POLARS_VERSION,
)
from benchkit.runner import Row, evaluate, run_benchmark  # noqa: E402
from benchkit.suites import SUITES, load  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
QUICK_SCALE = 0.02


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", "--repeats", dest="repeat", type=int, default=3,
                        help="rounds per benchmark; the median is reported (3)")
    parser.add_argument("--only", default="", help="comma-separated case keys, globs or parts of them "
                                                   "(see --list), e.g. files-5M,sql-*")
    parser.add_argument("--quick", action="store_true", help=f"every size × {QUICK_SCALE} (for development)")
    parser.add_argument("--scale", type=float, default=None, help="every size × this factor")
    parser.add_argument("--cache-dir", type=Path, default=REPO / ".bench",
                        help="generated data, scratch space and --quick results (.bench)")
    parser.add_argument("--venv-dir", type=Path, default=DEFAULT_VENV_ROOT,
                        help=f"where the peers' environments are made and kept ({DEFAULT_VENV_ROOT})")
    parser.add_argument("--results", type=Path, default=None,
                        help="folder for results.md and results.json (bench/ for a complete run)")
    parser.add_argument("--keep-work", action="store_true", help="keep every run's output folder")
    parser.add_argument("--strict", action="store_true", help="exit with 3 when a target is missed")
    parser.add_argument("--list", action="store_true", help="print the case keys and exit")
    args = parser.parse_args(argv)
    if args.scale is None:
        args.scale = QUICK_SCALE if args.quick else 1.0
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    return args


def _git(*args: str) -> str:
    done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else ""


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "?"


def header(argv: list[str], started: float, loads: list[float], scale: float) -> list[str]:
    """Where, when and on what the numbers were taken."""
    commit = _git("rev-parse", "--short", "HEAD") or "?"
    dirty = " (with uncommitted changes)" if _git("status", "--porcelain", "--untracked-files=no") else ""
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    command = "make bench" if not argv else "python scripts/bench/run.py " + shlex.join(argv)
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"`{command}` on {when}: commit {commit}{dirty}; {os.cpu_count()} cores, {memory:.0f} GiB, "
        f"Python {platform.python_version()}, gpy {_version('gobblin_py')}, pyarrow {_version('pyarrow')}, "
        f"PySpark {_version('pyspark')}, dlt {DLT_VERSION} (connectorx {CONNECTORX_VERSION}), Polars {POLARS_VERSION}, "
        f"DuckDB {DUCKDB_VERSION} (its SQL scanners on {DUCKDB_SCANNERS_VERSION}).",
        "",
        f"Load average (1 minute) {loads[0]:.1f} at the start, {max(loads):.1f} at the busiest benchmark start, "
        f"{loads[-1]:.1f} at the end: the machine is shared, so compare ratios rather than seconds. "
        f"The whole run took {(time.perf_counter() - started) / 60:.1f} min.",
    ]
    if scale != 1:
        lines += ["", f"**Sizes scaled by {scale:g}: development numbers, not the benchmark.**"]
    return lines


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    only = [pattern.strip() for pattern in args.only.split(",") if pattern.strip()]
    modules = [load(name) for name in SUITES]
    keys = [key for module in modules for key in module.KEYS]
    if args.list:
        print("\n".join(keys))
        return 0
    unknown = [p for p in only if not Context(REPO, args.cache_dir, args.cache_dir, only=[p]).wants(*keys)]
    if unknown:
        print(f"--only {','.join(unknown)}: no such case; the cases are: {', '.join(keys)}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    work = args.cache_dir / "work" / datetime.now().strftime("%Y%m%d-%H%M%S")
    ctx = Context(REPO, args.cache_dir.resolve(), work.resolve(), scale=args.scale, repeat=args.repeat, only=only,
                  log=lambda text: print(text, flush=True), venv_root=args.venv_dir.expanduser().resolve())
    from gobblin_py.runtime.engines.java import ensure_java

    ensure_java()  # the plain PySpark script runs on the Java runtime gpy finds (JAVA_HOME is inherited)
    # gpy as a wheel installs it: byte-compiled, like every peer's and the limit scripts' libraries (an editable
    # install under PYTHONDONTWRITEBYTECODE would otherwise compile every module in every timed run)
    compileall.compile_dir(str(REPO / "gobblin_py"), quiet=1)
    loads = [os.getloadavg()[0]]
    rows: list[Row] = []
    notes: list[str] = []
    for module in modules:
        benchmarks = module.benchmarks(ctx)
        try:
            for bench in benchmarks:
                loads.append(os.getloadavg()[0])
                ctx.log(f"== {bench.name} (load average {loads[-1]:.1f})")
                rows += run_benchmark(bench, ctx)
                notes += bench.notes
        finally:
            benchmarks.close()  # stops the suite's servers
    loads.append(os.getloadavg()[0])
    targets = evaluate(rows)
    page = report.markdown(rows, targets, header(argv, started, loads, args.scale), notes)
    complete = not only and args.scale == 1
    results = args.results or (REPO / "bench" if complete else args.cache_dir / "results")
    report.write(results, page, report.as_json(rows, targets, {"argv": argv, "scale": args.scale, "loads": loads}))
    print("\n" + page)
    print(f"written to {results / 'results.md'}")
    failed = [row for row in rows if not row.ok]
    if not failed and not args.keep_work:
        shutil.rmtree(work, ignore_errors=True)
    if failed:
        print(f"{len(failed)} row(s) FAILED; their folders and logs are under {work}", file=sys.stderr)
        return 1
    if args.strict and any(t.status != "met" for t in targets):
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
