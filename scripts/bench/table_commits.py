"""Benchmark: many incremental runs into one table — does each run's commit stay as quick as the table grows?

    python scripts/bench/table_commits.py --format iceberg|delta [--runs 200] [--rows 1000] [--dir DIR] [--json F]

A file job (the orders of ``csv_to_parquet.py``, one CSV file of ``--rows`` rows new before each run) publishes
into one Iceberg table (``IcebergPublisher``, the embedded SQL catalog on SQLite) or one Delta table
(``DeltaPublisher``) on local disk, ``--runs`` times. The runs are ``gpy run --engine local`` in this process, one
after the other (a new interpreter for each would add a second of start-up to each run and nothing to what is
measured): each is timed whole, and the phase log (``GPY_TEST_PHASE_LOG``, the marks the crash tests kill at)
times its dataset's commit (``commit.datasets``: planning the commit, which opens the table, the moves, the check,
the table's commit, the state) and the table commit step alone (``commit.iceberg_append`` or
``commit.delta_append``). Afterwards the table must hold every row, in one snapshot or version per run.

Prints those times at run 10 and at the last run, and the ratio; each is also given as the median of the ten runs
around it (runs 6 to 15, the last ten), since one commit of a few milliseconds on a shared machine is noisy, and a
Delta table's every tenth commit also writes a checkpoint (all the table's files).
``--json`` writes every run's times.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import pyarrow.csv as pa_csv  # noqa: E402
from csv_to_parquet import gpy_job, orders  # noqa: E402

FORMATS = {"iceberg": ("IcebergPublisher", "commit.iceberg_append"),
           "delta": ("DeltaPublisher", "commit.delta_append")}
WHOLE_COMMIT = "commit.datasets"
# Iceberg's (format 2) timestamps are microseconds, and pyarrow reads the CSV's times as nanoseconds: the job casts
# them (Delta's timestamps are microseconds too, and delta-rs reads a nanosecond file's whole microseconds as them)
MICROSECONDS = "converter.classes=TypeCastConverter\nconverter.cast.fields=ordered_at:timestamp[us, UTC]\n"
WINDOW = 10  # runs in each median (a Delta table takes a checkpoint every 10 versions)
EARLY = 10  # the run compared with the last


def table_rows(fmt: str, root: Path) -> tuple[int, int]:
    """The rows in the job's table, and its Iceberg snapshots (those not expired) or Delta versions."""
    if fmt == "iceberg":
        from pyiceberg.catalog import load_catalog

        catalog = load_catalog("gpy", type="sql", uri=f"sqlite:///{root}/state/iceberg_catalog.db",
                               warehouse=f"file://{root}/published")
        table = catalog.load_table(("bench", "orders"))
        return sum(task.file.record_count for task in table.scan().plan_files()), len(table.snapshots())
    from deltalake import DeltaTable

    table = DeltaTable(str(root / "published" / "bench" / "orders"))
    return table.count(), table.version() + 1


def _phases(log: Path, offset: int) -> tuple[dict[str, list[float]], int]:
    """Each phase's durations (seconds) in the lines of the phase log after byte ``offset``, and the new offset."""
    with open(log, "rb") as handle:
        handle.seek(offset)
        text = handle.read()
    entered: dict[tuple[str, str], float] = {}
    took: dict[str, list[float]] = {}
    for line in text.decode().splitlines():
        event, name, count, stamp = line.split()
        if event == "enter":
            entered[(name, count)] = float(stamp)
        elif event == "leave" and (name, count) in entered:
            took.setdefault(name, []).append(float(stamp) - entered.pop((name, count)))
    return took, offset + len(text)


def run_gpy(args: list[str]) -> tuple[int, str]:
    """``gpy <args>`` in this process: the exit code and what it printed."""
    from gobblin_py.cli import main

    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        try:
            code = main.main(args, prog_name="gpy", standalone_mode=False)
        except SystemExit as exc:
            code = exc.code
    return int(code or 0), sink.getvalue()


def bench(fmt: str, root: Path, runs: int, rows: int, keep: int | None = None,
          log: Callable[[str], None] = print) -> dict:
    """``runs`` runs of ``rows`` new rows each into one table under ``root`` (an Iceberg table expiring its
    snapshots beyond the newest ``keep``, when given); every run's times."""
    publisher, step_phase = FORMATS[fmt]
    shutil.rmtree(root, ignore_errors=True)
    data = root / "data"
    data.mkdir(parents=True)
    job = gpy_job(root, data)
    expiry = f"iceberg.snapshots.keep={keep}\n" if keep else ""
    job.write_text(job.read_text() + f"data.publisher.type={publisher}\n{MICROSECONDS}{expiry}")
    phase_log = root / "phases.log"
    phase_log.touch()
    os.environ["GPY_TEST_PHASE_LOG"] = str(phase_log)
    offset = 0
    times: dict[str, list[float]] = {"run": [], "commit": [], "step": []}
    try:
        for number in range(runs):
            pa_csv.write_csv(orders(number * rows, rows), data / f"orders-{number:05d}.csv")
            started = time.perf_counter()
            code, output = run_gpy(["run", str(job), "--engine", "local"])
            times["run"].append(time.perf_counter() - started)
            if code != 0:
                raise RuntimeError(f"run {number + 1} exited with {code} (job {job}):\n{output[-3000:]}")
            took, offset = _phases(phase_log, offset)
            for key, name in (("commit", WHOLE_COMMIT), ("step", step_phase)):
                if len(took.get(name, [])) != 1:
                    raise RuntimeError(f"run {number + 1}: phase {name} ran {len(took.get(name, []))} times, not once")
                times[key].append(took[name][0])
            if (number + 1) % 50 == 0:
                log(f"  {fmt}: {number + 1} runs, the last commit step {times['step'][-1] * 1000:.1f} ms")
    finally:
        os.environ.pop("GPY_TEST_PHASE_LOG", None)
    found, commits = table_rows(fmt, root)
    return {"format": fmt, "runs": runs, "rows_per_run": rows, "keep": keep, "table_rows": found,
            "table_commits": commits, "seconds": times}


def at(values: list[float], run: int) -> tuple[float, float]:
    """The value of run ``run`` (1-based) and the median of the ``WINDOW`` runs around it: runs 6 to 15 for the
    10th, the last ten for the last."""
    start = max(0, min(run - WINDOW // 2, len(values) - WINDOW))
    return values[run - 1], statistics.median(values[start:start + WINDOW])


def summary(result: dict, early: int = EARLY) -> list[str]:
    runs = result["runs"]
    kept = f" (iceberg.snapshots.keep={result['keep']})" if result.get("keep") else ""
    what = "snapshots" if result["format"] == "iceberg" else "versions"
    lines = [f"{result['format']}{kept}: {runs} runs of {result['rows_per_run']:,} rows, the table holds "
             f"{result['table_rows']:,} rows, {result['table_commits']} {what}"]
    for key, what in (("step", "table commit step"), ("commit", "dataset's commit"), ("run", "whole run")):
        first, first_median = at(result["seconds"][key], early)
        last, last_median = at(result["seconds"][key], runs)
        lines.append(f"  {what:<18} run {early}: {first * 1000:7.1f} ms (median {first_median * 1000:7.1f})  run "
                     f"{runs}: {last * 1000:7.1f} ms (median {last_median * 1000:7.1f})  ratio {last / first:.2f} "
                     f"(medians {last_median / first_median:.2f})")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--format", choices=sorted(FORMATS), required=True)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--keep", type=int, default=None,
                        help="Iceberg: iceberg.snapshots.keep (expire snapshots beyond the newest N)")
    parser.add_argument("--json", type=Path, default=None, help="write every run's times here")
    args = parser.parse_args()
    if args.runs < WINDOW + 10:
        parser.error(f"--runs must be at least {WINDOW + 10}")
    root = args.dir or Path(tempfile.mkdtemp(prefix=f"gpy-bench-{args.format}-commits-"))
    result = bench(args.format, root / "job", args.runs, args.rows, args.keep)
    print("\n".join(summary(result)))
    if args.json:
        args.json.write_text(json.dumps(result) + "\n")
    expected = args.runs * args.rows
    if result["table_rows"] != expected:
        print(f"the table holds {result['table_rows']:,} rows, {expected:,} expected", file=sys.stderr)
        return 1
    if args.dir is None:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
