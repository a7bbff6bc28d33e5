"""``gpy run --dry-run``: the work units the next run would plan, startpoints applied, changing nothing.

No lock is taken, no earlier commit is finished (a pending one is only reported: the real run finishes it
first), no file is written; the Source plans exactly as it would at the start of a run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gobblin_py.runtime.commit.boundary import plugin_boundary
from gobblin_py.runtime.commit.commit_sequence import CommitSequenceStore
from gobblin_py.runtime.commit.job_run import JobRun
from gobblin_py.runtime.launcher import JobLauncher, open_source
from gobblin_py.runtime.plan.empty_plan import explain
from gobblin_py.sdk.errors import GobblinPyError
from gobblin_py.sdk.plugins import canonical_plugin_props
from gobblin_py.sdk.states import MultiWorkUnit
from gobblin_py.store import open_state_store
from gobblin_py.store.report import watermark_text
from gobblin_py.store.startpoints import applied_ids
from gobblin_py.store.store import StateStoreSettings


@dataclass
class PlannedUnit:
    """One work unit the next run would run."""

    dataset: str
    partition: str
    low: object
    high: object
    detail: str
    startpoints: list[str] = field(default_factory=list)


@dataclass
class DryRun:
    """What the next run of a job would do first."""

    job: str
    units: list[PlannedUnit] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)  # datasets whose earlier commit the run finishes first
    # dataset -> (" partition 'p'" or "", where the startpoint starts, as people read it)
    startpoints: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    empty_reason: str = ""  # why the source would plan nothing, when it says

    def render(self) -> str:
        lines = [f"{self.job}: the next run would"]
        for urn in self.pending:
            lines.append(f"  first finish the pending commit of dataset {urn!r}")
        planned = {u.dataset for u in self.units}
        for urn, descriptions in sorted(self.startpoints.items()):
            name = urn or '""'
            for where, point in descriptions:
                if urn in planned:
                    lines.append(f"  {name}{where}: start at {point}")
                else:  # the startpoint is not used: it waits for a run that plans its dataset
                    lines.append(f"  {name}{where}: keep the startpoint at {point}: no work unit of this dataset "
                                 "is planned")
        if not self.units:
            reason = f": {self.empty_reason}" if self.empty_reason else ""
            lines.append(f"  plan no work unit: nothing new to pull{reason}")
            return "\n".join(lines)
        lines.append(f"  plan {len(self.units)} work unit(s):")
        header = ["dataset", "partition", "low", "expected high", "what", "startpoint"]
        rows = [[u.dataset or '""', u.partition or "-", _text(u.low), _text(u.high), u.detail,
                 ",".join(u.startpoints) or "-"] for u in self.units]
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
        for row in [header, *rows]:
            lines.append("    " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        return "\n".join(lines)


def _text(value: object) -> str:
    return watermark_text(value)  # a time watermark as its time, never a raw dict


def _partition(unit) -> str:
    for key in ("gpy.partition", "partition.id", "source.querybased.partition.value"):
        if unit.get_prop(key):
            return str(unit.get_prop(key))
    return ""


def _detail(unit) -> str:
    files = unit.get_prop_as_list("source.filebased.files.to.pull")
    if files or unit.get_prop("source.filebased.files.to.pull") is not None:
        return f"{len(files)} file(s)"
    rows = unit.get_prop("source.querybased.estimated.rows")
    return f"~{rows} row(s)" if rows else ""


def dry_run(launcher: JobLauncher) -> DryRun:
    """Plan the next run of ``launcher``'s job without running or changing anything."""
    props = dict(launcher.props)
    run = JobRun(props, launcher.job_name, f"job_{launcher.job_name}_dryrun", 0)
    report = DryRun(launcher.job_name)
    if StateStoreSettings.load(props).enabled:
        run.store = open_state_store(props)
        report.pending = sorted(s.urn for s in CommitSequenceStore.for_job(props, run.store).pending(launcher.job_name))
    source, state = open_source(run)
    report.startpoints = {urn: [(f" partition {p!r}" if p else "", sp.human())
                                for p, sp in sorted(points.by_partition.items())]
                          for urn, points in state.startpoints.items()}
    with plugin_boundary(f"source.class={props['source.class']}: planning work units"):
        units = source.get_workunits(state) or []
    if not units:
        plan = explain(source, props["source.class"], first_run=not run.previous)
        report.empty_reason = plan.reason if plan is not None else ""
    default_urn = props.get("dataset.urn", "")
    for unit in units:
        for member in unit.work_units if isinstance(unit, MultiWorkUnit) else [unit]:
            interval = member.watermark_interval
            report.units.append(PlannedUnit(
                member.get_prop("dataset.urn", default_urn), _partition(member),
                interval.low_json if interval else None, interval.expected_high_json if interval else None,
                _detail(member), sorted(applied_ids(member))))
    return report


def known_datasets(job_props: Mapping[str, str], job_name: str, urn: str) -> tuple[list[str], str | None]:
    """The datasets of a job a startpoint can name, enough to tell whether ``urn`` is one: those with state,
    and (unless ``urn`` has state) those its source would plan now, planned as ``--dry-run`` does with the
    startpoints left out. ``(names, why the plan is missing)``: the second is the source's error when
    it could not plan (a database or broker that is down), else None."""
    props = canonical_plugin_props(job_props)
    run = JobRun(props, job_name, f"job_{job_name}_datasets", 0)
    if StateStoreSettings.load(props).enabled:
        run.store = open_state_store(props)
    source, state = open_source(run, startpoints=False)
    known = set(run.previous)
    if urn in known:
        return sorted(known), None
    try:
        with plugin_boundary(f"source.class={props['source.class']}: planning work units"):
            units = source.get_workunits(state) or []
    except GobblinPyError as exc:
        return sorted(known), str(exc)
    default_urn = props.get("dataset.urn", "")
    for unit in units:
        for member in unit.work_units if isinstance(unit, MultiWorkUnit) else [unit]:
            known.add(member.get_prop("dataset.urn", default_urn))
    return sorted(known), None
