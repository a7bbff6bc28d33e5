"""Run a benchmark: interleaved rounds of whole-process trials, row counts checked, medians kept.

Round *r* runs every contender once, the order rotated by *r* so none always goes first (or last, on a warm
page cache). A step that exits non-zero or leaves the wrong number of rows marks its case and every later case
of that trial FAILED for its contender, which then sits out the remaining rounds; its folder and log are kept.
"""

from __future__ import annotations

import shutil
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from benchkit.context import Context
from benchkit.model import Benchmark, Case, Contender, Step, Target
from benchkit.process import Sample, measure

STEP_TIMEOUT = 600.0  # seconds: a hung contender (a peer library that deadlocks) must not hang the harness


@dataclass
class Row:
    """One contender's results on one case."""

    case: Case
    contender: Contender
    samples: list[Sample] = field(default_factory=list)
    failure: str | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None and bool(self.samples)

    @property
    def seconds(self) -> float:
        return statistics.median(s.seconds for s in self.samples)

    @property
    def peak_bytes(self) -> int:
        return max(s.peak_bytes for s in self.samples)

    @property
    def rate(self) -> float | None:
        return self.case.work / self.seconds if self.case.work and self.ok else None


@dataclass
class TargetResult:
    """A target and what was measured: ``ratio`` (seconds for a "seconds" goal) is None when one side failed or
    did not run; ``against`` names the baseline it was measured against when there were several."""

    target: Target
    ratio: float | None
    against: str | None = None

    @property
    def status(self) -> str:
        if self.ratio is None:
            return "FAILED"
        return "met" if self.target.holds(self.ratio) else "MISSED"


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def _run_trial(contender: Contender, steps: list[Step], work: Path, rows: dict[str, Row], ctx: Context,
               label: str) -> bool:
    """Run one trial's steps; record samples in ``rows``; False (with the rows marked FAILED) on a failure."""
    for index, step in enumerate(steps):
        if step.before is not None:
            step.before()
        log = step.log or work / f"step-{index}.log"
        sample = measure(step.argv, log, env=step.env, cwd=step.cwd, timeout=STEP_TIMEOUT)
        problem = None
        if sample.returncode != 0:
            problem = f"exit code {sample.returncode}"
        elif step.expect is not None and step.count is not None:
            found = step.count()
            if found != step.expect:
                problem = f"{found:,} rows in its output, {step.expect:,} expected"
        if problem:
            ctx.log(f"  {label}: FAILED, {problem} (log {log})\n{_tail(log)}")
            for later in steps[index:]:
                if later.case in rows and rows[later.case].failure is None:
                    rows[later.case].failure = problem
            return False
        if step.case in rows:
            rows[step.case].samples.append(sample)
            ctx.log(f"  {label}: {step.case} {sample.seconds:.2f} s, {sample.peak_bytes / 2**20:.0f} MB")
        for case, seconds in (step.reports() if step.reports is not None else {}).items():
            if case in rows:
                rows[case].samples.append(Sample(seconds, sample.peak_bytes, sample.returncode))
                ctx.log(f"  {label}: {case} {seconds * 1000:.1f} ms (measured by the process)")
    return True


def run_benchmark(bench: Benchmark, ctx: Context) -> list[Row]:
    """Every contender's rows on every selected case of ``bench``, after the interleaved rounds."""
    cases = [case for case in bench.cases if ctx.wants(case.key)]
    table = {c.name: {case.key: Row(case, c) for case in cases if c.takes_part(case.key)} for c in bench.contenders}
    for contender in bench.contenders:
        if contender.error:
            for row in table[contender.name].values():
                row.failure = contender.error
    rounds = min(ctx.repeat * bench.rounds_factor, bench.max_rounds or ctx.repeat * bench.rounds_factor)
    active = [c for c in bench.contenders if not c.error]
    for round_ in range(rounds):
        shift = round_ % len(active) if active else 0
        for contender in active[shift:] + active[:shift]:
            rows = table[contender.name]
            if any(row.failure for row in rows.values()):
                continue  # it failed in an earlier round
            work = ctx.work / bench.name / f"{contender.name.replace(' ', '_').replace('/', '_')}-{round_}"
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir(parents=True)
            if bench.before_trial is not None:
                bench.before_trial()
            label = f"[{bench.name} {round_ + 1}/{rounds}] {contender.name}"
            if _run_trial(contender, contender.trial(work), work, rows, ctx, label):
                shutil.rmtree(work, ignore_errors=True)
    return [table[c.name][case.key] for case in cases for c in bench.contenders if case.key in table[c.name]]


def _measured(target: Target, by_key: dict[tuple[str, str], Row]) -> TargetResult:
    subject = by_key.get((target.case, target.subject))
    if subject is None or not subject.ok:
        return TargetResult(target, None)
    if target.measure == "seconds":
        return TargetResult(target, subject.seconds)
    where = target.baseline_case or target.case
    ran = [row for name in target.baselines if (row := by_key.get((where, name))) is not None and row.ok]
    if not ran:
        return TargetResult(target, None)
    if target.measure == "memory":
        baseline = min(ran, key=lambda row: row.peak_bytes)
        ratio = subject.peak_bytes / baseline.peak_bytes
    else:
        baseline = min(ran, key=lambda row: row.seconds)
        ratio = (subject.seconds / baseline.seconds if target.measure == "time"
                 else baseline.seconds / subject.seconds)
    return TargetResult(target, ratio, baseline.contender.name if len(target.baselines) > 1 else None)


def evaluate(rows: list[Row]) -> list[TargetResult]:
    """Each selected case's targets, checked against the medians (and peaks)."""
    by_key = {(row.case.key, row.contender.name): row for row in rows}
    results, seen = [], set()
    for row in rows:
        if row.case.key in seen:
            continue
        seen.add(row.case.key)
        results += [_measured(target, by_key) for target in row.case.targets]
    return results
