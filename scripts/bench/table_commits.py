"""Benchmark: many incremental runs into one table — does each run's commit stay as quick as the table grows?

    python scripts/bench/table_commits.py --format iceberg|delta [--runs 200] [--rows 1000] [--dir DIR] [--json F]

A file job (the orders of ``csv_to_parquet.py``, one CSV file of ``--rows`` rows new before each run) publishes
into one Iceberg table (``IcebergPublisher``, the embedded SQL catalog on SQLite) or one Delta table
(``DeltaPublisher``) on local disk, ``--runs`` times. The runs are ``gpy run --engine local`` in this process, one
after the other (a new interpreter for each would add a second of start-up to each run and nothing to what is
measured): each is timed whole, and the phase log (``GPY_TEST_PHASE_LOG``, the marks the crash tests kill at)
times its dataset's commit (``commit.datasets``: planning the commit, which opens the table, the moves, the check,
the table's commit, the state) and the table commit step alone (``commit.iceberg_append`` or
``commit.delta_append``); the step's CPU time is taken too (:func:`cpu_times`), which a busy machine changes less.

The 10th run and the last are what is compared: the job's folders (its data, state, table and catalog) are copied
as they are before each, and each is then run ``--repeats`` times, in turns, each time on a fresh copy of its
folders, so that both are measured under the same load, however the machine's load drifts over the runs in
between. Prints the medians and their ratio. Afterwards the table (the last run's) must hold every row. ``--json``
writes every run's times.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import pyarrow.csv as pa_csv  # noqa: E402
from csv_to_parquet import gpy_job, orders  # noqa: E402

# format: (publisher, the phase of its table commit step, the step's class)
FORMATS = {"iceberg": ("IcebergPublisher", "commit.iceberg_append", "gobblin_py.connectors.iceberg.step:IcebergCommitStep"),
           "delta": ("DeltaPublisher", "commit.delta_append", "gobblin_py.connectors.delta.step:DeltaAppendStep")}
WHOLE_COMMIT = "commit.datasets"
# Iceberg's (format 2) timestamps are microseconds, and pyarrow reads the CSV's times as nanoseconds: the job casts
# them (Delta's timestamps are microseconds too, and delta-rs reads a nanosecond file's whole microseconds as them)
MICROSECONDS = "converter.classes=TypeCastConverter\nconverter.cast.fields=ordered_at:timestamp[us, UTC]\n"
EARLY = 10  # the run compared with the last
REPEATS = 10  # times each of the two is measured


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


@contextlib.contextmanager
def cpu_times(step_class: str) -> Iterator[list[float]]:
    """The CPU time (of the whole process: the library's own threads too) each ``execute`` of the step class took,
    appended to the list yielded while the block runs. Unlike the phase's wall time it hardly moves with what
    else the machine runs; at the commit the run's tasks are done, so the process does little else."""
    module, _, name = step_class.partition(":")
    cls = getattr(importlib.import_module(module), name)
    real, found = cls.execute, []

    def execute(self: object, fresh: bool = False) -> None:
        started = time.process_time()
        try:
            real(self, fresh)
        finally:
            found.append(time.process_time() - started)

    cls.execute = execute
    try:
        yield found
    finally:
        cls.execute = real


def bench(fmt: str, root: Path, runs: int, rows: int, keep: int | None = None, repeats: int = REPEATS,
          log: Callable[[str], None] = print) -> dict:
    """``runs`` runs of ``rows`` new rows each into one table under ``root`` (an Iceberg table expiring its
    snapshots beyond the newest ``keep``, when given), the 10th and the last ``repeats`` times each, in turns, each
    time on a copy of the job's folders as they were before it; every run's times."""
    publisher, step_phase, step_class = FORMATS[fmt]
    shutil.rmtree(root, ignore_errors=True)
    saved = {EARLY: root.parent / f"{root.name}-before-{EARLY}", runs: root.parent / f"{root.name}-before-{runs}"}
    for folder in saved.values():
        shutil.rmtree(folder, ignore_errors=True)
    data = root / "data"
    data.mkdir(parents=True)
    job = gpy_job(root, data)
    expiry = f"iceberg.snapshots.keep={keep}\n" if keep else ""
    job.write_text(job.read_text() + f"data.publisher.type={publisher}\n{MICROSECONDS}{expiry}")
    runner = _Runner(job, root.parent / f"{root.name}-phases.log", step_phase, rows, log)
    try:
        with cpu_times(step_class) as runner.cpu:
            for number in range(1, runs):
                if number in saved:
                    shutil.copytree(root, saved[number], symlinks=True)
                runner.run(number, runner.sequence)
            shutil.copytree(root, saved[runs], symlinks=True)
            for turn in range(repeats):  # in turns, the last one ending with the last run
                for number, folder in (saved.items() if (repeats - turn) % 2 else reversed(saved.items())):
                    shutil.rmtree(root)
                    shutil.copytree(folder, root, symlinks=True)
                    _forget_catalogs()  # its SQLite file was just replaced
                    runner.run(number, runner.measured.setdefault(str(number), _times()))
    finally:
        os.environ.pop("GPY_TEST_PHASE_LOG", None)
        for folder in saved.values():
            shutil.rmtree(folder, ignore_errors=True)
    found, commits = table_rows(fmt, root)
    return {"format": fmt, "runs": runs, "rows_per_run": rows, "keep": keep, "table_rows": found,
            "table_commits": commits, "seconds": runner.sequence, "measured": runner.measured}


def _forget_catalogs() -> None:
    """Close the Iceberg catalogs this process opened (gpy keeps them for the process's life)."""
    from gobblin_py.connectors.iceberg import catalog

    for opened in catalog._catalogs.values():
        opened.engine.dispose()
    catalog._catalogs.clear()


def _times() -> dict[str, list[float]]:
    return {"run": [], "commit": [], "step": [], "step_cpu": []}


class _Runner:
    """Runs the job in this process, the ``number``-th run's new file first, and notes its times."""

    def __init__(self, job: Path, phase_log: Path, step_phase: str, rows: int, log: Callable[[str], None]) -> None:
        self.job, self.phase_log, self.step_phase, self.rows, self.log = job, phase_log, step_phase, rows, log
        phase_log.write_text("")
        os.environ["GPY_TEST_PHASE_LOG"] = str(phase_log)
        self.offset = 0
        self.cpu: list[float] = []
        self.sequence = _times()
        self.measured: dict[str, dict[str, list[float]]] = {}

    def run(self, number: int, times: dict[str, list[float]]) -> None:
        data = self.job.parent / "data"
        pa_csv.write_csv(orders((number - 1) * self.rows, self.rows), data / f"orders-{number:05d}.csv")
        steps = len(self.cpu)
        started = time.perf_counter()
        code, output = run_gpy(["run", str(self.job), "--engine", "local"])
        times["run"].append(time.perf_counter() - started)
        if code != 0:
            raise RuntimeError(f"run {number} exited with {code} (job {self.job}):\n{output[-3000:]}")
        took, self.offset = _phases(self.phase_log, self.offset)
        for key, name in (("commit", WHOLE_COMMIT), ("step", self.step_phase)):
            if len(took.get(name, [])) != 1:
                raise RuntimeError(f"run {number}: phase {name} ran {len(took.get(name, []))} times, not once")
            times[key].append(took[name][0])
        if len(self.cpu) != steps + 1:
            raise RuntimeError(f"run {number}: the table commit step ran {len(self.cpu) - steps} times, not once")
        times["step_cpu"].append(self.cpu[-1])
        if number % 50 == 0 and times is self.sequence:
            self.log(f"  {number} runs, the last commit step {times['step'][-1] * 1000:.1f} ms "
                     f"({self.cpu[-1] * 1000:.1f} ms of CPU)")


def medians(result: dict, key: str) -> tuple[float, float]:
    """The median ``key`` time (step_cpu, step, commit, run) of the measured 10th runs, and of the last ones."""
    measured = result["measured"]
    return statistics.median(measured[str(EARLY)][key]), statistics.median(measured[str(result["runs"])][key])


def summary(result: dict) -> list[str]:
    runs = result["runs"]
    kept = f" (iceberg.snapshots.keep={result['keep']})" if result.get("keep") else ""
    what = "snapshots" if result["format"] == "iceberg" else "versions"
    lines = [f"{result['format']}{kept}: {runs} runs of {result['rows_per_run']:,} rows, the table holds "
             f"{result['table_rows']:,} rows, {result['table_commits']} {what}; medians of "
             f"{len(result['measured'][str(runs)]['run'])} runs each:"]
    for key, what in (("step_cpu", "commit step, CPU"), ("step", "table commit step"), ("commit", "dataset's commit"),
                      ("run", "whole run")):
        early, late = medians(result, key)
        lines.append(f"  {what:<18} run {EARLY}: {early * 1000:7.1f} ms  run {runs}: {late * 1000:7.1f} ms  "
                     f"ratio {late / early:.2f}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--format", choices=sorted(FORMATS), required=True)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--repeats", type=int, default=REPEATS, help="times the 10th and the last run are measured")
    parser.add_argument("--keep", type=int, default=None,
                        help="Iceberg: iceberg.snapshots.keep (expire snapshots beyond the newest N)")
    parser.add_argument("--json", type=Path, default=None, help="write every run's times here")
    args = parser.parse_args()
    if args.runs <= EARLY:
        parser.error(f"--runs must be more than {EARLY}")
    root = args.dir or Path(tempfile.mkdtemp(prefix=f"gpy-bench-{args.format}-commits-"))
    result = bench(args.format, root / "job", args.runs, args.rows, args.keep, args.repeats)
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
