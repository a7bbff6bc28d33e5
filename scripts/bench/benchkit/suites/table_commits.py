"""200 incremental runs into one table, Iceberg and Delta: does each run's commit stay as quick as the table grows?

One process runs ``scripts/bench/table_commits.py`` (``RUNS`` gpy runs in a row, in that process, each bringing one
new CSV file of ``ROWS`` rows into the same table; see that script): its time is the case ``<variant>-commits``.
The script times each run's table commit step itself (the phase log): the median of runs 6 to 15 is the case
``<variant>-commits-10th``, the median of the last ten ``<variant>-commits-200th``. Target: the 200th at most 1.5 ×
the 10th. The table must hold every run's rows afterwards. One round (a round is 200 runs). The variants: an
Iceberg table keeping every snapshot (the default), one whose commits expire all but the newest 10
(``iceberg.snapshots.keep=10``), a Delta table.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

from table_commits import EARLY, at

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


def _contender(fmt: str, keep: int | None, runs: int, keys: tuple[str, str, str]) -> Contender:
    whole, early, last = keys

    def trial(work: Path) -> list[Step]:
        result = work / "times.json"

        def rows() -> int:
            return json.loads(result.read_text())["table_rows"] if result.exists() else 0

        def reports() -> dict[str, float]:
            steps = json.loads(result.read_text())["seconds"]["step"]
            return {early: at(steps, EARLY)[1], last: at(steps, len(steps))[1]}

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
        cases = [Case(whole, f"{runs} incremental runs of {ROWS:,} rows into one {what}, in one process", runs,
                      unit="runs"),
                 Case(early, f"{what}: the table commit step at run {EARLY} (median of runs 6–15)", 0),
                 Case(last, f"{what}: the table commit step at run {runs} (median of the last 10)", 0,
                      targets=[Target(last, GPY_LOCAL, GPY_LOCAL, "<=", GROWTH, baseline_case=early)])]
        yield Benchmark(whole, cases, [_contender(fmt, keep, runs, keys)], max_rounds=1)
