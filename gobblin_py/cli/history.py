"""``gpy history``: a job's past runs, newest first, and one run in full."""

from __future__ import annotations

import json
import os

import click

from gobblin_py.cli.base import conf_options, load_job_properties, main
from gobblin_py.sdk.errors import UsageError


def _history(job_file: str, conf_root: str | None, sysconfig: str | None):
    """The job's name and its run history store."""
    from gobblin_py.store.run_history import RunHistoryStore

    if not os.path.isfile(job_file):
        raise UsageError(f"{job_file}: no such job file")
    props = load_job_properties(job_file, conf_root, sysconfig)
    name = props.get("job.name")
    if not name:
        raise UsageError(f"{job_file}: job.name is not set")
    store = RunHistoryStore.for_job(props)
    if store is None:
        raise UsageError(f"{job_file}: this job records no run history (job.history.enabled=false, or neither "
                         "job.history.dir nor a state store is set)")
    return name, store


@main.command("history")
@click.argument("job_file")
@click.argument("run_id", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Only the newest N runs.")
@conf_options
def history(job_file: str, run_id: str | None, as_json: bool, limit: int | None, conf_root: str | None,
            sysconfig: str | None) -> None:
    """The job's runs, newest first: when, how long, status, exit code, records. With RUN_ID, that run in full.

    A run that ended without recording its end (killed with SIGKILL, its machine stopped) shows as KILLED.
    An unknown RUN_ID exits 2.
    """
    from gobblin_py.store import history_report
    from gobblin_py.store.run_history import effective_status

    name, store = _history(job_file, conf_root, sysconfig)
    if run_id is not None:
        record = store.get(name, run_id)
        if as_json:
            click.echo(json.dumps({**record, "status": effective_status(record)}, indent=2, ensure_ascii=False))
        else:
            click.echo(history_report.render_run(record))
        return
    rows = history_report.list_rows(store.runs(name, limit))
    if as_json:
        click.echo(json.dumps({"job": name, "history": store.url, "runs": rows}, indent=2, ensure_ascii=False))
    else:
        click.echo(history_report.render_list(name, rows, store.url))
