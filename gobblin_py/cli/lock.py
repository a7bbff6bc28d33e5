"""``gpy lock show`` / ``gpy lock break``."""

from __future__ import annotations

import sys

import click

from gobblin_py.cli.base import _Group, conf_options, job_filesystems, load_job_properties, main, require_job_file
from gobblin_py.sdk.errors import CorruptFileError, UsageError

# ------------------------------------------------------------------ lock


@main.group(cls=_Group)
def lock() -> None:
    """Inspect or break a job's lock (one run per job at a time)."""


def _job_lock(job_file: str, conf_root: str | None, sysconfig: str | None):
    from gobblin_py.runtime.plan.locks import JobLock

    require_job_file(job_file)
    props = load_job_properties(job_file, conf_root, sysconfig)
    if not props.get("job.name"):
        raise UsageError(f"{job_file}: job.name is not set")
    job_filesystems(props)
    return JobLock(props, props["job.name"])


@lock.command("show")
@click.argument("job_file")
@conf_options
def lock_show(job_file: str, conf_root: str | None, sysconfig: str | None) -> None:
    """Who holds the job's lock, if anyone (exit code 0 when free, 75 when held)."""
    job_lock = _job_lock(job_file, conf_root, sysconfig)
    holder = job_lock.holder()
    if holder is None:
        click.echo(f"{job_lock.display}: free")
        return
    stale = " (stale: the next run takes it over)" if job_lock.is_stale(holder) else ""
    click.echo(f"{job_lock.display}: held by {holder.describe()}{stale}")
    sys.exit(0 if stale else 75)


@lock.command("break")
@click.argument("job_file")
@click.option("--force", is_flag=True, help="Break it even though its holder looks alive.")
@conf_options
def lock_break(job_file: str, force: bool, conf_root: str | None, sysconfig: str | None) -> None:
    """Remove the job's lock. Refuses while its holder is alive unless --force."""
    job_lock = _job_lock(job_file, conf_root, sysconfig)
    try:
        holder = job_lock.holder()
    except CorruptFileError as exc:  # no run can hold a lock it cannot read back: nothing to protect
        job_lock.break_lock()
        click.echo(f"{job_lock.display}: broken (it was an {exc.reason.split(';')[0]})")
        return
    if holder is None:
        click.echo(f"{job_lock.display}: no lock to break")
        return
    if not job_lock.is_stale(holder) and not force:
        raise UsageError(f"{job_lock.display}: held by a live run, {holder.describe()}; use --force to break it anyway")
    job_lock.break_lock()
    click.echo(f"{job_lock.display}: broken (was held by {holder.describe()})")


