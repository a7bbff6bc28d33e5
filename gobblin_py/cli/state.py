"""``gpy state …``: look at and steer a job's state."""

from __future__ import annotations

import json
import os

import click

from gobblin_py.cli.base import _Group, conf_options, job_filesystems, load_job_properties, main
from gobblin_py.sdk.errors import UsageError

# ------------------------------------------------------------------ state


@main.group(cls=_Group)
def state() -> None:
    """Inspect the state store: each dataset's watermarks and run history."""


def _store_and_jobs(target: str, conf_root: str | None, sysconfig: str | None):
    """A store and the job names to look at, from a job file or a store directory."""
    from gobblin_py.jobconf.loader.job_files import classify
    from gobblin_py.jobconf.remote import is_remote
    from gobblin_py.store import open_state_store
    from gobblin_py.store.store import TABLE_SUFFIX, FsDatasetStateStore

    remote_job = is_remote(target) and classify(target) in ("props", "hocon")
    if (os.path.isdir(target) or "://" in target) and not remote_job:
        store_dir = FsDatasetStateStore(target)
        if any(name.endswith(TABLE_SUFFIX) for name in _names(store_dir)):
            # a job's own folder: <root>/<job>
            root, job = os.path.split(os.path.normpath(target)) if "://" not in target else target.rstrip("/").rsplit("/", 1)
            return FsDatasetStateStore(root), [job]
        return store_dir, store_dir.job_names()
    if not remote_job and not os.path.exists(target):
        raise UsageError(f"{target}: no such job file or state store directory")
    props = load_job_properties(target, conf_root, sysconfig)
    job_name = props.get("job.name")
    if not job_name:
        raise UsageError(f"{target}: job.name is not set")
    if props.get("state.store.enabled", "true").strip().lower() == "false":
        raise UsageError(f"{target}: state.store.enabled=false, so this job keeps no state")
    job_filesystems(props)
    return open_state_store(props), [job_name]


def _names(store) -> list[str]:
    from gobblin_py.io import fs as fsutil

    return fsutil.list_names(store.fs, store.root)


@state.command("show")
@click.argument("target")
@click.option("--dataset", "urn", default=None, help="Only this dataset URN (full detail).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for machines (full detail).")
@click.option("--full", is_flag=True, help="Full detail even for more than 20 datasets.")
@conf_options
def state_show(target: str, urn: str | None, as_json: bool, full: bool, conf_root: str | None,
               sysconfig: str | None) -> None:
    """Latest state of each dataset: run, times, tasks and their low/expected/actual watermarks.

    TARGET is a job file (its state.store.dir and job.name are used) or a state store directory. With more than
    20 datasets it prints one line per dataset, newest first, unless --dataset, --json or --full asks for more.
    """
    from gobblin_py.store import report
    from gobblin_py.store.summary_index import SUMMARY_ABOVE, StateIndex, current_files, render_summary

    store, jobs = _store_and_jobs(target, conf_root, sysconfig)
    if urn is None and not as_json and not full:

        if sum(len(current_files(store, job)) for job in jobs) > SUMMARY_ABOVE:
            summaries = [StateIndex(store, job).summary() for job in jobs]
            for problem in (p for s in summaries for p in s.problems):
                click.echo(f"gpy: warning: {problem}", err=True)
            click.echo(render_summary(summaries, store.url))
            return
    rows = report.show(store, jobs, urn)
    if urn is not None and not rows:
        raise UsageError(f"no state for dataset {urn!r} in {store.url}")
    if as_json:
        click.echo(json.dumps({"store": store.url, "datasets": rows}, indent=2, ensure_ascii=False))
    else:
        click.echo(report.render_show(rows, store.url))


@state.command("history")
@click.argument("target")
@click.option("--dataset", "urn", default="", help='Dataset URN (default: the default dataset "").')
@click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")
@conf_options
def state_history(target: str, urn: str, as_json: bool, conf_root: str | None, sysconfig: str | None) -> None:
    """Every stored run of one dataset, oldest first."""
    from gobblin_py.store import report

    store, jobs = _store_and_jobs(target, conf_root, sysconfig)
    rows = report.history(store, jobs, urn)
    if as_json:
        click.echo(json.dumps({"store": store.url, "urn": urn, "runs": rows}, indent=2, ensure_ascii=False))
    else:
        click.echo(report.render_history(rows, urn))


