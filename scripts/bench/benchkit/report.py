"""The results as Markdown (``bench/results.md``, also printed) and JSON (``bench/results.json``)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from benchkit.runner import Row, TargetResult

EXPLANATION = (
    "Each contender runs as a whole process, started by the harness (interpreter and JVM start-up included, as "
    "cron would see it); contenders take turns within each round; the time is the median of the runs. Peak "
    "memory is the resident memory of the process and all its children summed (a Spark driver's JVM "
    "included). \"× gpy\" is the contender's median time ÷ gpy --engine local's on the same benchmark "
    "(below 1: faster than gpy). Every run's output was counted: a wrong count or a failed process shows as "
    "FAILED. gpy is the project; *peers* are the alternatives a team would pick instead (Polars, DuckDB, "
    "pyarrow's write_dataset, dlt, a plain PySpark script); the *limit* is a bare script calling the same libraries with nothing around them."
)


def _rate(value: float | None, unit: str) -> str:
    if value is None:
        return ""
    if value >= 1e6:
        return f"{value / 1e6:.2f} M {unit}"
    if value >= 1e4:
        return f"{value / 1e3:.0f} k {unit}"
    return f"{value:,.0f} {unit}"


def _seconds(value: float) -> str:
    """A time as the table shows it: milliseconds below a tenth of a second (one commit among many runs)."""
    return f"{value:.2f} s" if value >= 0.1 else f"{value * 1000:.1f} ms"


def _ratio(row: Row, reference: Row | None) -> str:
    if reference is None or not reference.ok or not row.ok:
        return ""
    return f"{row.seconds / reference.seconds:.2f}"


def results_table(rows: Sequence[Row]) -> str:
    """The main table: one line per contender and case, the case's title on its first line."""
    lines = ["| benchmark | contender | runs | time | per second | peak MB | × gpy |",
             "|---|---|---|---|---|---|---|"]
    reference = {(r.case.key, r.contender.name): r for r in rows}
    previous = None
    for row in rows:
        title = row.case.title if row.case.key != previous else ""
        previous = row.case.key
        name = row.contender.name + {"limit": " (limit)", "peer": " (peer)", "gpy": ""}[row.contender.role]
        if row.contender.role == "gpy":
            name = f"**{name}**"
        if not row.ok:
            lines.append(f"| {title} | {name} | {len(row.samples)} | FAILED: {row.failure or 'did not run'} | | | |")
            continue
        ref = reference.get((row.case.key, row.case.reference))
        lines.append(f"| {title} | {name} | {len(row.samples)} | {_seconds(row.seconds)} | "
                     f"{_rate(row.rate, row.case.unit)} | {row.peak_bytes / 2**20:,.0f} | {_ratio(row, ref)} |")
    return "\n".join(lines)


def targets_table(results: Sequence[TargetResult]) -> str:
    lines = ["| case | target | measured | result |", "|---|---|---|---|"]
    for result in results:
        measured = "" if result.ratio is None else f"{result.ratio:.2f}"
        if result.against and measured:
            measured += f" ({result.against})"
        lines.append(f"| {result.target.case} | {result.target.describe()} | {measured} | {result.status} |")
    return "\n".join(lines)


def markdown(rows: Sequence[Row], targets: Sequence[TargetResult], header: Sequence[str],
             notes: Sequence[str]) -> str:
    """The whole results page."""
    parts = ["# gpy benchmarks", "", *header, "", EXPLANATION, "", results_table(rows)]
    if targets:
        parts += ["", "## Targets", "", targets_table(targets)]
    if notes:
        parts += ["", "## Notes", "", *[f"- {note}" for note in notes]]
    return "\n".join(parts) + "\n"


def as_json(rows: Sequence[Row], targets: Sequence[TargetResult], facts: Mapping[str, object]) -> str:
    """Every run's numbers, for comparing two runs by program."""
    return json.dumps({
        **facts,
        "rows": [{"case": r.case.key, "title": r.case.title, "contender": r.contender.name,
                  "role": r.contender.role, "work": r.case.work, "unit": r.case.unit, "failure": r.failure,
                  "seconds": [round(s.seconds, 4) for s in r.samples],
                  "peak_bytes": [s.peak_bytes for s in r.samples]} for r in rows],
        "targets": [{"case": t.target.case, "target": t.target.describe(), "ratio": t.ratio, "against": t.against,
                     "status": t.status}
                    for t in targets],
    }, indent=1) + "\n"


def write(folder: Path, page: str, data: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.md").write_text(page)
    (folder / "results.json").write_text(data)
