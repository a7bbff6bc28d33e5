"""``gpy state datasets | reset | export | import``: a job's datasets, and steering or moving its state."""

from __future__ import annotations

import sys

import click

from gobblin_py.cli.base import conf_options
from gobblin_py.cli.startpoint import job_context
from gobblin_py.cli.state import state
from gobblin_py.sdk.errors import UsageError


def _store(props):
    from gobblin_py.store import open_state_store

    return open_state_store(props)


@state.command("datasets")
@click.argument("job_file")
@conf_options
def state_datasets(job_file: str, conf_root: str | None, sysconfig: str | None) -> None:
    """The job's datasets: each one's last run, its outcome and how complete its data is."""
    from gobblin_py.store import progress
    from gobblin_py.store.report import iso_time
    from gobblin_py.store.summary_index import SUMMARY_ABOVE, StateIndex, current_files

    props, name = job_context(job_file, conf_root, sysconfig)
    store = _store(props)
    if len(current_files(store, name)) > SUMMARY_ABOVE:  # many datasets: their lines from the state index
        rows = [(line["urn"], line["job_id"], line["state"], line["complete_ms"])
                for line in StateIndex(store, name).summary().lines]
    else:
        rows = [(urn, dataset.job_id, dataset.state.value, progress.completeness(dataset))
                for urn, dataset in store.get_latest_dataset_states_by_urns(name).items()]
    if not rows:
        click.echo(f"{name}: no dataset state yet")
    for urn, job_id, state_name, complete in sorted(rows):
        shown = f"  complete up to {iso_time(complete)}" if complete is not None else ""
        label = urn if urn else '"" (default)'
        click.echo(f"{label}  {job_id}  {state_name}{shown}")


@state.command("reset")
@click.argument("job_file")
@click.option("--dataset", "urn", required=True, help='The dataset URN ("" for the default dataset).')
@click.option("--dry-run", is_flag=True, help="Say what would be reset, change nothing.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@conf_options
def state_reset(job_file: str, urn: str, dry_run: bool, yes: bool, conf_root: str | None, sysconfig: str | None) -> None:
    """Reset one dataset's state: its next run starts it afresh. Published data is never touched."""
    from gobblin_py.runtime.commit.commit_sequence import CommitSequenceStore
    from gobblin_py.runtime.plan.locks import JobLock, LockSettings
    from gobblin_py.store.admin import plan_reset, reset_dataset

    props, name = job_context(job_file, conf_root, sysconfig)
    store = _store(props)
    plan = plan_reset(store, name, urn)
    click.echo(plan.describe())
    if plan.current is None or dry_run:
        return
    if CommitSequenceStore.for_job(props, store).exists(name, urn):
        raise UsageError(f"{name} dataset {urn!r}: an earlier run's commit is still pending; run the job once to "
                         "finish it, then reset")
    if not yes:
        if not sys.stdin.isatty():
            raise UsageError("confirm with --yes (no terminal to ask on)")
        click.confirm("Reset it?", abort=True)
    lock = JobLock(props, name, "state-reset") if LockSettings.load(props).enabled else None
    if lock is not None:
        lock.acquire()  # not while a run of the job is going (exit 75 if one is)
    try:
        state_ = reset_dataset(store, plan)
    finally:
        if lock is not None:
            lock.release()
    click.echo(f"reset: dataset {urn!r} now starts afresh (recorded as run {state_.job_id})")


@state.command("export")
@click.argument("job_file")
@click.argument("target")
@conf_options
def state_export(job_file: str, target: str, conf_root: str | None, sysconfig: str | None) -> None:
    """Write the job's state into TARGET as a plain Apache Gobblin state store (TARGET/<job>/*.jst)."""
    from gobblin_py.store.admin import export_job

    props, name = job_context(job_file, conf_root, sysconfig)
    written = export_job(_store(props), name, target)
    click.echo(f"{name}: {len(written)} state file(s) written under {target}")


@state.command("import")
@click.argument("job_file")
@click.argument("source")
@click.option("--job-name", "source_job", default=None, help="The job's name in SOURCE (default: this job's).")
@click.option("--replace", is_flag=True, help="Put the imported states over the job's current ones.")
@conf_options
def state_import(job_file: str, source: str, source_job: str | None, replace: bool, conf_root: str | None,
                 sysconfig: str | None) -> None:
    """Read an Apache Gobblin state store directory (SOURCE/<job>/*.jst) into the job's state."""
    from gobblin_py.store.admin import import_job

    props, name = job_context(job_file, conf_root, sysconfig)
    urns = import_job(_store(props), name, source, source_job, replace=replace)
    click.echo(f"{name}: imported the state of {len(urns)} dataset(s): {', '.join(repr(u) for u in urns)}")
