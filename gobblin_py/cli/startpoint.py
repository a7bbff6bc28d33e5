"""``gpy state startpoint set | list | clear`` and ``gpy state watermark``: steer where datasets start, and ask
whether data is complete up to a time."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from gobblin_py.cli.base import _Group, conf_options, job_filesystems, load_job_properties, require_job_file
from gobblin_py.cli.state import state
from gobblin_py.sdk.errors import UsageError


def job_context(job_file: str, conf_root: str | None, sysconfig: str | None):
    """``(properties, job name)`` of a job file whose state is kept (startpoints live beside its state store)."""
    require_job_file(job_file)
    props = load_job_properties(job_file, conf_root, sysconfig)
    name = props.get("job.name")
    if not name:
        raise UsageError(f"{job_file}: job.name is not set")
    if (props.get("state.store.enabled") or "true").strip().lower() == "false":
        raise UsageError(f"{job_file}: state.store.enabled=false, so this job keeps no state")
    job_filesystems(props)
    return props, name


def committed_event_ms(props, job: str, urn: str, partition: str) -> int | None:
    """The newest event time committed for the dataset (its partition, when one is named), None when none was."""
    from gobblin_py.store import open_state_store, progress

    latest = open_state_store(props).get_latest_dataset_state(job, urn)
    events = progress.partition_event_progress(latest)
    if partition:
        return events.get(partition)
    return max(events.values(), default=None)


@state.group("startpoint", cls=_Group)
def startpoint() -> None:
    """Ask datasets to start elsewhere at the next run: from the oldest data, the upcoming, a time or a watermark."""


@startpoint.command("set")
@click.argument("job_file")
@click.option("--dataset", "urn", required=True, help='The dataset URN ("" for the default dataset).')
@click.option("--partition", default="", help="Only this partition (a Kafka partition number).")
@click.option("--oldest", is_flag=True, help="Read everything the source still has.")
@click.option("--upcoming", is_flag=True, help="Skip what exists now; read only what comes after.")
@click.option("--timestamp", "at", default=None, help="Read again from this event time (ISO 8601 or epoch ms).")
@click.option("--value", default=None, help="Start at this watermark value (an offset, an id, a time).")
@click.option("--force", is_flag=True, help="Set a --timestamp after the latest data all the same.")
@conf_options
def startpoint_set(job_file: str, urn: str, partition: str, oldest: bool, upcoming: bool, at: str | None,
                   value: str | None, force: bool, conf_root: str | None, sysconfig: str | None) -> None:
    """Set a startpoint; it is used by the next run and removed by the commit that used it.

    It is checked against the job's source before it is stored: a dataset the job has (with state, or planned
    by the source now), a kind the source supports, a partition only where the source has partitions (and one
    the dataset has, where the source can say), a value of the source's watermark type, and a time not after
    the latest data (unless --force).
    """
    from gobblin_py.runtime.dry_run import known_datasets
    from gobblin_py.runtime.plan.startpoint_checks import check_against_data, check_dataset_known, check_startpoint
    from gobblin_py.sdk.plugins import resolve_class
    from gobblin_py.store.startpoints import Startpoint, StartpointKind, StartpointStore, parse_time_ms

    given = {"OLDEST": oldest, "UPCOMING": upcoming, "TIMESTAMP": at is not None, "SPECIFIC": value is not None}
    chosen = [kind for kind, on in given.items() if on]
    if len(chosen) != 1:  # options of one flag would let the last silently win
        raise UsageError("give exactly one of --oldest, --upcoming, --timestamp T, --value W"
                         + (f" (not {len(chosen)})" if chosen else ""))
    props, name = job_context(job_file, conf_root, sysconfig)
    point = Startpoint(StartpointKind(chosen[0]),
                       str(parse_time_ms(at, "--timestamp")) if at is not None else value)
    if not props.get("source.class"):
        raise UsageError(f"{job_file}: source.class is not set")
    source = resolve_class(props["source.class"], "source.class")
    check_startpoint(source, props, urn, partition, point)
    known, unplanned = known_datasets(props, name, urn)
    if unplanned is None:
        check_dataset_known(name, urn, known)
    # a source that could not plan (its server down) cannot say what its data holds either: not asked again
    check_against_data(source, props, urn, partition, point, committed_event_ms(props, name, urn, partition), force,
                       ask_source=unplanned is None)
    if unplanned is not None and urn not in known:  # a source that is down cannot say: the operator may prepare a run for when it is up
        click.echo(f"gpy: warning: dataset {urn!r} has no state, and the source could not plan to show whether it "
                   f"is one of its datasets ({unplanned}); check the name", err=True)
    StartpointStore.for_job(props).set(name, urn, partition, point)
    where = f"dataset {urn!r}" + (f" partition {partition!r}" if partition else "")
    click.echo(f"{name}: {where} starts at {point.describe()} at the next run")


@startpoint.command("list")
@click.argument("job_file")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")
@conf_options
def startpoint_list(job_file: str, as_json: bool, conf_root: str | None, sysconfig: str | None) -> None:
    """Every startpoint waiting for the job's next run (a warning for each one the run would refuse)."""
    from gobblin_py.runtime.plan.startpoint_checks import check_stored
    from gobblin_py.sdk.plugins import resolve_class
    from gobblin_py.store.startpoints import StartpointStore

    props, name = job_context(job_file, conf_root, sysconfig)
    store = StartpointStore.for_job(props)
    points = store.all(name)
    if points and props.get("source.class"):
        for urn in sorted(points):
            try:
                check_stored(resolve_class(props["source.class"], "source.class"), props, store, name,
                             {urn: points[urn]})
            except UsageError as exc:
                click.echo(f"gpy: warning: {exc}", err=True)
    if as_json:
        click.echo(json.dumps({urn: {p: s.to_json() for p, s in sp.by_partition.items()} for urn, sp in points.items()},
                              indent=2))
        return
    if not points:
        click.echo(f"{name}: no startpoints")
    for urn, sp in sorted(points.items()):
        for partition, point in sorted(sp.by_partition.items()):
            where = f"dataset {urn!r}" + (f" partition {partition!r}" if partition else "")
            click.echo(f"{where}: {point.describe()}")


@startpoint.command("clear")
@click.argument("job_file")
@click.option("--dataset", "urn", default=None, help="Only this dataset's startpoints.")
@conf_options
def startpoint_clear(job_file: str, urn: str | None, conf_root: str | None, sysconfig: str | None) -> None:
    """Remove the job's startpoints (or one dataset's): the next run starts from the checkpoints."""
    from gobblin_py.store.startpoints import StartpointStore

    props, name = job_context(job_file, conf_root, sysconfig)
    removed = StartpointStore.for_job(props).clear(name, urn)
    click.echo(f"{name}: {removed} startpoint(s) removed")


@state.command("watermark")
@click.argument("job_file")
@click.option("--dataset", "urn", default=None,
              help='The dataset URN ("" for the default dataset); without it, every dataset of the job.')
@click.option("--at", "at", default=None, help="Exit 0 when data is complete up to this time, 1 when not yet.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")
@conf_options
def state_watermark(job_file: str, urn: str | None, at: str | None, as_json: bool, conf_root: str | None,
                    sysconfig: str | None) -> None:
    """The dataset's completeness watermark: every record with an earlier event time is committed.

    With --at T, for schedulers and sensors: exit 0 when data is complete up to T, 1 otherwise. Without --dataset
    it judges every dataset the job has committed that carries event times (a table, topic or endpoint without
    them is listed, not judged): exit 0 when each is complete up to T, 1 when one is not yet or the job has no
    state yet, 2 when none of its datasets carries event times (waiting cannot help).
    """
    from gobblin_py.store import open_state_store
    from gobblin_py.store.startpoints import parse_time_ms

    props, name = job_context(job_file, conf_root, sysconfig)
    target = parse_time_ms(at, "--at") if at is not None else None
    store = open_state_store(props)
    if urn is None:
        _every_watermark(name, store.get_latest_dataset_states_by_urns(name), at, target, as_json)
        return
    latest = store.get_latest_dataset_state(name, urn)
    if latest is None:
        if at is None:
            raise UsageError(f"{name}: no state for dataset {urn!r} yet")
        click.echo(f"{name} dataset {urn!r}: no state yet, so not complete up to {at}")
        sys.exit(1)
    watermark, partitions = _progress(latest)
    complete = target is not None and watermark is not None and watermark >= target
    if as_json:
        click.echo(json.dumps({"job": name, "dataset": urn, **_watermark_json(watermark, partitions),
                               "at_ms": target, "complete": complete if at else None}))
    else:
        _echo_watermark(name, urn, watermark, partitions)
        if target is not None:
            click.echo(f"complete up to {_iso(target)}: {'yes' if complete else 'not yet'}")
    if target is not None:
        sys.exit(0 if complete else 1)


def _progress(state: Any) -> tuple[int | None, dict[str, int]]:
    from gobblin_py.store import progress

    return progress.completeness(state), progress.partition_event_progress(state)


def _watermark_json(watermark: int | None, partitions: dict[str, int]) -> dict[str, Any]:
    return {"watermark_ms": watermark, "watermark": _iso(watermark) if watermark is not None else None,
            "partitions": partitions}


def _echo_watermark(name: str, urn: str, watermark: int | None, partitions: dict[str, int]) -> None:
    shown = _iso(watermark) if watermark is not None else "none yet (no event times committed)"
    click.echo(f"{name} dataset {urn!r}: complete up to {shown}")
    for partition, ms in sorted(partitions.items()):
        click.echo(f"  partition {partition!r}: {_iso(ms)}")


def _every_watermark(name: str, states: dict[str, Any], at: str | None, target: int | None, as_json: bool) -> None:
    """``gpy state watermark JOB`` without --dataset: each dataset's watermark; with --at, whether all that carry
    event times are complete up to it (exit 0), not yet (1), or none carries them (2)."""
    if not states:
        if target is None:
            raise UsageError(f"{name}: no dataset state yet")
        click.echo(f"{name}: no dataset state yet, so not complete up to {at}")
        sys.exit(1)
    progress = {urn: _progress(state) for urn, state in sorted(states.items())}
    timed = {urn: watermark for urn, (watermark, partitions) in progress.items() if watermark is not None or partitions}
    behind = sorted(urn for urn, watermark in timed.items()
                    if target is not None and (watermark is None or watermark < target))
    complete = target is not None and bool(timed) and not behind
    if as_json:
        click.echo(json.dumps({"job": name, "datasets": {urn: _watermark_json(*p) for urn, p in progress.items()},
                               "untimed": sorted(set(progress) - set(timed)), "at_ms": target,
                               "complete": complete if at else None, "behind": behind}))
    else:
        for urn, (watermark, partitions) in progress.items():
            if urn in timed:
                _echo_watermark(name, urn, watermark, partitions)
            else:
                click.echo(f"{name} dataset {urn!r}: no event times (not judged)")
        if target is not None and timed:
            click.echo(f"complete up to {_iso(target)}: "
                       + ("yes" if complete else f"not yet ({', '.join(repr(u) for u in behind)})"))
    if target is None:
        return
    if not timed:
        raise UsageError(f"{name}: none of its datasets ({', '.join(repr(u) for u in progress)}) carries event "
                         "times, so completeness cannot be judged; rely on gpy run's exit code, or set "
                         "source.event.time.column")
    sys.exit(0 if complete else 1)


def _iso(ms: int) -> str:
    from gobblin_py.store.report import iso_time

    return iso_time(ms) or ""
