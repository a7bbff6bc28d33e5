"""200 incremental runs into one table, Iceberg and Delta: does each run's commit stay as quick as the table grows?

One process runs ``scripts/bench/table_commits.py`` (``RUNS`` gpy runs in a row, in that process, each bringing one
new CSV file of ``ROWS`` rows into the same table, then the 10th and the 200th again, ten times each in turns, each on
a copy of the job's folders as they were before it; see that script): its time is the case ``<variant>-commits``.
The script times each run's table commit step itself, its CPU time (which another program's load on the machine
changes less than its wall time; both are in the results' notes): the median of the 10th runs is the case
``<variant>-commits-10th``, that of the 200th ``<variant>-commits-200th``. Target: the 200th at most 1.5 × the 10th. The table must hold every run's rows afterwards. One round (a round is 200 runs). The variants: an
Iceberg table keeping every snapshot (the default), one whose commits expire all but the newest 10
(``iceberg.snapshots.keep=10``), a Delta table.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

from table_commits import EARLY, REPEATS, medians

from benchkit.context import Context
from benchkit.model import GPY_LOCAL, Benchmark, Case, Contender, Step, Target

RUNS = 200
ROWS = 1000
GROWTH = 1.5  # the last run's commit step at most this × the 10th's
# name: (format, iceberg.snapshots.keep, what the table is)
VARIANTS = {"iceberg": ("iceberg", None, "Iceberg table (SQL catalog), every snapshot kept"),
            "iceberg-keep10": ("iceberg", 10, "Iceberg table (SQL catalog), iceberg.snapshots.keep=10"),
            "delta": ("delta", None, "Delta table")}
KEYS = tuple(f"{name}-commits{part}" for name in VARIANTS for part in ("", "-10th", "-200th"))
SCRIPT = Path(__file__).resolve().parents[2] / "table_commits.py"


def _note(case: str, found: dict) -> str:
    """One line of what the script measured: each time at run 10 and at the last, medians of the turns."""
    runs, turns = found["runs"], len(found["measured"][str(found["runs"])]["run"])
    parts = []
    for key, what in (("step_cpu", "the commit step's CPU time"), ("step", "its wall time"),
                      ("commit", "the dataset's whole commit"), ("run", "the whole run")):
        early, late = medians(found, key)
        parts.append(f"{what} {early * 1000:.1f} → {late * 1000:.1f} ms (× {late / early:.2f})")
    return f"{case}, run {EARLY} → run {runs} (medians of {turns} turns): " + "; ".join(parts) + "."


def _contender(fmt: str, keep: int | None, runs: int, keys: tuple[str, str, str], notes: list[str]) -> Contender:
    """gpy in ``table_commits.py``; each trial's step times go into its cases, and a line of ``notes``."""
    whole, early, last = keys

    def trial(work: Path) -> list[Step]:
        result = work / "times.json"

        def rows() -> int:
            return json.loads(result.read_text())["table_rows"] if result.exists() else 0

        def reports() -> dict[str, float]:
            found = json.loads(result.read_text())
            notes.append(_note(whole, found))
            first, final = medians(found, "step_cpu")
            return {early: first, last: final}

        argv = [sys.executable, str(SCRIPT), "--format", fmt, "--runs", str(runs), "--rows", str(ROWS),
                "--dir", str(work), "--json", str(result), *(["--keep", str(keep)] if keep else [])]
        return [Step(argv, whole, runs * ROWS, rows, reports=reports)]

    return Contender(GPY_LOCAL, "gpy", trial)


def benchmarks(ctx: Context) -> Iterator[Benchmark]:
    runs = ctx.size(RUNS, least=20)
    for name, (fmt, keep, what) in VARIANTS.items():
        keys = (f"{name}-commits", f"{name}-commits-10th", f"{name}-commits-200th")
        if not ctx.wants(*keys):
            continue
        whole, early, last = keys
        cases = [Case(whole, f"{runs} incremental runs of {ROWS:,} rows into one {what}, then the {EARLY}th and the "
                             f"{runs}th {REPEATS} times each, in one process", runs + 2 * REPEATS - 1, unit="runs"),
                 Case(early, f"{what}: the table commit step's CPU time at run {EARLY}", 0),
                 Case(last, f"{what}: the table commit step's CPU time at run {runs}", 0,
                      targets=[Target(last, GPY_LOCAL, GPY_LOCAL, "<=", GROWTH, baseline_case=early)])]
        notes: list[str] = []
        yield Benchmark(whole, cases, [_contender(fmt, keep, runs, keys, notes)], max_rounds=1, notes=notes)
