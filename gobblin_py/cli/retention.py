"""``gpy state clean``: delete a job's state files older than a lookback (never the state its next run reads)."""

from __future__ import annotations

import time

import click

from gobblin_py.cli.base import conf_options
from gobblin_py.cli.startpoint import job_context
from gobblin_py.cli.state import state


@state.command("clean")
@click.argument("job_file")
@click.option("--older-than", "older_than", required=True,
              help="A lookback as Gobblin writes it: 30d, 18h, 1d12h, 30m (y years, M months, d days, h hours, "
                   "m minutes).")
@click.option("--dry-run", is_flag=True, help="List the files that would be deleted; delete nothing.")
@conf_options
def state_clean(job_file: str, older_than: str, dry_run: bool, conf_root: str | None, sysconfig: str | None) -> None:
    """Delete the job's run state files written before the lookback. Each dataset's current state, and the run
    it copies, are kept whatever their age; published data is never touched."""
    from gobblin_py.store import MysqlDatasetStateStore, open_state_store
    from gobblin_py.store.retention import Lookback, delete_state_files, plan_state_clean, select_before

    props, name = job_context(job_file, conf_root, sysconfig)
    store = open_state_store(props)
    lookback = Lookback.parse(older_than, "--older-than")
    if isinstance(store, MysqlDatasetStateStore):
        now = time.time()
        rows = store.apply_retention(name, now - lookback.cutoff(now), now=now, dry_run=dry_run)
        for row in rows:
            click.echo(f"{'would delete' if dry_run else 'deleted'}  {row}")
        click.echo(f"{name}: {len(rows)} state row(s) older than {older_than} "
                   + ("would be deleted (dry run)" if dry_run else "deleted"))
        return
    plan = plan_state_clean(store, select_before(lookback), jobs=[name])
    verb = "would delete" if dry_run else "deleting"
    for deletion in plan:
        click.echo(f"{verb}  {store.display_path(deletion.path)}")
    if dry_run:
        click.echo(f"{name}: {len(plan)} state file(s) older than {older_than} would be deleted (dry run)")
        return
    deleted = delete_state_files(store, plan)
    click.echo(f"{name}: {deleted} state file(s) older than {older_than} deleted")
