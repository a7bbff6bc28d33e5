"""Benchmark: the file job (CSV → Parquet) under ``--engine local`` against the bare pyarrow script, by size.

    python scripts/bench/csv_small_jobs.py [--rows 1000000,5000000,20000000] [--files 8] [--repeat 3]
                                           [--baseline DIR] [--dir DIR] [--json FILE]

For each row count, the same CSV files (scripts/bench/csv_to_parquet.py's orders, 6 columns) are turned into
Parquet by each contender, as whole processes started from here (interpreter start-up included), interleaved
round by round so a busy machine slows all of them alike:

- ``pyarrow``: ``read_csv`` → ``write_table`` per file, the ceiling;
- ``gpy``: ``gpy run --engine local`` from this checkout;
- ``baseline`` (with ``--baseline DIR``): the same job run from another checkout (an older commit, say), so a
  change is measured against what it replaces in the same run.

Prints, per size, each contender's median time, rows/s, ratio to the pyarrow script's time, and the row groups
and bytes of its Parquet output. Every output is counted against the input.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from csv_to_parquet import CONTENDERS, gpy_job, make_data  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(cmd: list[str], env: dict[str, str] | None = None, cwd: str | Path = REPO) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one process."""
    cpu = children_cpu()
    started = time.perf_counter()
    # bytecode caching on, as an installed package has it (PYTHONDONTWRITEBYTECODE would compile every run)
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run(cmd, capture_output=True, text=True, env={**base, **(env or {})}, cwd=cwd)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{cmd[:4]} failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    return elapsed, children_cpu() - cpu


def output_shape(folder: Path) -> tuple[int, int, int]:
    """(rows, row groups, bytes) of every Parquet file under ``folder``."""
    rows = groups = size = 0
    for path in folder.rglob("*.parquet"):
        meta = pq.ParquetFile(path).metadata
        rows, groups, size = rows + meta.num_rows, groups + meta.num_row_groups, size + path.stat().st_size
    return rows, groups, size


def run_once(name: str, data: Path, work: Path, baseline: str | None) -> tuple[tuple[float, float], Path]:
    shutil.rmtree(work, ignore_errors=True)
    if name == "pyarrow":
        out = work / "out"
        work.mkdir(parents=True)
        return timed([sys.executable, "-c", CONTENDERS["pyarrow (ceiling)"], str(data), str(out)]), out
    job = gpy_job(work, data)
    # ``python -m`` puts the working folder first on sys.path: the baseline runs in its own checkout
    env, cwd = ({"PYTHONPATH": baseline}, baseline) if name == "baseline" and baseline else (None, REPO)
    return timed([sys.executable, "-m", "gobblin_py.cli", "run", str(job), "--engine", "local"], env, cwd), \
        work / "published"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", default="1000000,5000000,20000000")
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline", help="also run gpy from this checkout (its gobblin_py on PYTHONPATH)")
    parser.add_argument("--dir", help="work folder (default: a temporary one, removed afterwards)")
    parser.add_argument("--json", help="also write the medians to this file")
    args = parser.parse_args()
    contenders = ["pyarrow", "gpy"] + (["baseline"] if args.baseline else [])
    baseline = str(Path(args.baseline).resolve()) if args.baseline else None
    for checkout in [REPO] + ([Path(baseline)] if baseline else []):  # bytecode ready before the first timed run
        compileall.compile_dir(str(checkout / "gobblin_py"), quiet=1)
    root = Path(args.dir or tempfile.mkdtemp(prefix="gpy-bench-small-"))
    report: dict[str, dict[str, float]] = {}
    lines = ["| rows | contender | time | rows/s | × pyarrow's time | CPU time | × pyarrow's CPU | row groups | MB |",
             "|---|---|---|---|---|---|---|---|---|"]
    try:
        for rows in (int(r) for r in args.rows.split(",")):
            data = root / f"data-{rows}"
            if not data.exists():
                make_data(data, rows, args.files)
            total = rows // args.files * args.files
            times: dict[str, list[float]] = {name: [] for name in contenders}
            cpus: dict[str, list[float]] = {name: [] for name in contenders}
            shapes: dict[str, tuple[int, int, int]] = {}
            for attempt in range(args.repeat):
                for name in contenders:
                    (seconds, cpu), out = run_once(name, data, root / f"{name}-{rows}", baseline)
                    shapes[name] = output_shape(out)
                    if shapes[name][0] != total:
                        raise SystemExit(f"{name} at {rows}: {shapes[name][0]} rows written, {total} expected")
                    times[name].append(seconds)
                    cpus[name].append(cpu)
                print(f"  {rows:,} rows, round {attempt + 1}: " +
                      ", ".join(f"{n} {times[n][-1]:.2f} s" for n in contenders), flush=True)
            medians = {name: statistics.median(values) for name, values in times.items()}
            cpu_medians = {name: statistics.median(values) for name, values in cpus.items()}
            report[str(rows)] = {**medians, **{f"{name} cpu": value for name, value in cpu_medians.items()}}
            for name in contenders:
                _, groups, size = shapes[name]
                lines.append(f"| {total:,} | {name} | {medians[name]:.2f} s | {total / medians[name] / 1e6:.2f} M | "
                             f"{medians[name] / medians['pyarrow']:.2f} | {cpu_medians[name]:.2f} s | "
                             f"{cpu_medians[name] / cpu_medians['pyarrow']:.2f} | {groups} | {size / 1e6:.1f} |")
            shutil.rmtree(data, ignore_errors=True) if not args.dir else None
    finally:
        if not args.dir:
            shutil.rmtree(root, ignore_errors=True)
    print(f"\nmedian of {args.repeat}, {args.files} CSV files, each contender a whole process, {os.cpu_count()} cores\n")
    print("\n".join(lines))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
