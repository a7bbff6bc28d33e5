"""The ``gpy`` command line.

Exit codes, for cron and schedulers: 0 success, 1 failure, 2 bad usage, bad configuration or a corrupt file
(one line on stderr naming the file or key, never a traceback).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from gobblin_py import __version__
from gobblin_py.errors import GobblinPyError, UsageError
from gobblin_py.logs import configure_logging

DEFAULT_SYSCONFIG = Path("conf") / "gobblin.properties"


def _fail(exc: GobblinPyError) -> None:
    from gobblin_py.config.settings import SettingsError

    problems = exc.problems if isinstance(exc, SettingsError) else [exc]
    for problem in problems:  # one line each, every one naming its file, line and key
        click.echo(f"gpy: error: {problem}", err=True)
    sys.exit(exc.exit_code)


class _Group(click.Group):
    """Turns every GobblinPyError into its one-line message and exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except GobblinPyError as exc:
            _fail(exc)
        except OSError as exc:  # a filesystem that refuses: say which path, without a traceback
            click.echo(f"gpy: error: {exc}", err=True)
            sys.exit(1)
        except Exception as exc:
            if not type(exc).__module__.startswith("botocore"):
                raise
            # S3 through s3fs: no credentials, an endpoint that does not answer, …: one line, no traceback
            if type(exc).__name__ == "NoCredentialsError":
                click.echo(f"gpy: error: S3: {exc}; set fs.s3a.access.key and fs.s3a.secret.key in the job, or "
                           "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE) in the environment", err=True)
                sys.exit(2)
            click.echo(f"gpy: error: S3: {exc}", err=True)
            sys.exit(1)


def conf_options(func: Callable) -> Callable:
    """``--conf-root`` and ``--sysconfig``, shared by every command that loads a job file."""
    func = click.option(
        "--sysconfig",
        type=click.Path(dir_okay=False),
        default=None,
        help=f"System configuration under every job (default: {DEFAULT_SYSCONFIG} when present).",
    )(func)
    func = click.option(
        "--conf-root",
        type=click.Path(file_okay=False),
        default=None,
        help="Jobs root whose .properties/.configuration files apply (default: the job's own folder).",
    )(func)
    return func


def resolve_sysconfig(sysconfig: str | None) -> str | None:
    if sysconfig is not None:
        if not os.path.isfile(sysconfig):
            raise UsageError(f"--sysconfig {sysconfig}: no such file")
        return sysconfig
    return str(DEFAULT_SYSCONFIG) if DEFAULT_SYSCONFIG.is_file() else None


def load_job_properties(path: str, conf_root: str | None, sysconfig: str | None):
    """The fully resolved properties of one job file (a JobConfig: it knows the file and line of each key); the
    file may be on an fsspec URL (s3://…)."""
    from gobblin_py.config import load_job
    from gobblin_py.config.remote import is_remote, load_remote_job

    if is_remote(path):
        return load_remote_job(path, conf_root=conf_root, sysconfig=resolve_sysconfig(sysconfig))
    return load_job(path, conf_root=conf_root, sysconfig=resolve_sysconfig(sysconfig))


def _require_job_file(path: str) -> None:
    from gobblin_py.config.remote import is_remote

    if not is_remote(path) and not os.path.isfile(path):
        raise UsageError(f"{path}: no such job file")


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gpy")
@click.option("--log-level", default="INFO", show_default=True, help="DEBUG, INFO, WARNING or ERROR.")
@click.option(
    "--log-format",
    type=click.Choice(["auto", "console", "json"]),
    default="auto",
    show_default=True,
    help="Log lines for people (console) or machines (json); auto picks by whether stderr is a terminal.",
)
def main(log_level: str, log_format: str) -> None:
    """gpy: Gobblin-style batch ingestion jobs on Apache Spark."""
    configure_logging(log_level, log_format)


# ------------------------------------------------------------------ run


@main.command("run")
@click.argument("job_file", type=click.Path(dir_okay=False))
@conf_options
@click.option("--engine", type=click.Choice(["spark", "local"]), default="spark", show_default=True,
              help="spark: tasks run as Spark tasks; local: in a thread pool of this process.")
@click.option("--master", default=None, help="Spark master URL (default: the job's spark.master, else local[*]).")
@click.option("--strict", is_flag=True, help="Unknown keys in namespaces gpy owns are errors, not warnings.")
def run(job_file: str, conf_root: str | None, sysconfig: str | None, engine: str, master: str | None,
        strict: bool) -> None:
    """Run one job: pull what is new, publish it per the commit policy, save the watermarks.

    Exit codes: 0 all committed, 3 committed with failed tasks, 1 failed, 2 bad configuration or usage,
    75 another run of the job holds its lock.
    """
    from gobblin_py.runtime.launcher import JobLauncher
    from gobblin_py.runtime.summary import render

    _require_job_file(job_file)
    props = load_job_properties(job_file, conf_root, sysconfig)
    result = JobLauncher(props, engine=engine, master=master, strict=strict).run()
    click.echo(render(result))
    sys.exit(result.exit_code)


# ------------------------------------------------------------------ validate


@main.command("validate")
@click.argument("paths", nargs=-1, type=click.Path())
@conf_options
@click.option("--json", "as_json", is_flag=True, help="Print each job's resolved properties as JSON.")
@click.option("--strict", is_flag=True, help="Unknown keys in namespaces gpy owns are errors, not warnings.")
@click.option("--explain", "explain_key", metavar="KEY", default=None,
              help="Explain a configuration key: who reads it, its type, default and meaning.")
def validate(paths: tuple[str, ...], conf_root: str | None, sysconfig: str | None, as_json: bool, strict: bool,
             explain_key: str | None) -> None:
    """Check job files (or folders of them, recursively) as `gpy run` does before any work.

    Every plugin class must resolve and every key parse; reports per file and goes on; exit code 2 when any
    file is wrong. `--explain KEY` describes a key instead.
    """
    if explain_key is not None:
        from gobblin_py.catalog import explain

        text = explain(explain_key)
        click.echo(text)
        sys.exit(0 if "no plugin of gpy declares it" not in text else 2)
    if not paths:
        raise UsageError("name job files or folders to validate (or --explain KEY)")
    from gobblin_py.validate import validate_paths

    reports = validate_paths(list(paths), conf_root, resolve_sysconfig(sysconfig), strict=strict)
    if as_json:
        click.echo(json.dumps([r.as_json() for r in reports], indent=2, ensure_ascii=False))
    else:
        for report in reports:
            click.echo(report.render())
        bad = sum(1 for r in reports if not r.ok)
        click.echo(f"{len(reports)} job files, {len(reports) - bad} valid, {bad} with problems")
    sys.exit(2 if any(not r.ok for r in reports) else 0)


# ------------------------------------------------------------------ plugins


@main.command("plugins")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")
@click.option("--markdown", is_flag=True, help="Print the key tables of the README.")
def plugins_command(as_json: bool, markdown: bool) -> None:
    """Every plugin gpy has, with the names a job may use for it (Gobblin's included) and its keys."""
    from gobblin_py import catalog

    if as_json:
        click.echo(json.dumps(catalog.json_listing(), indent=2, ensure_ascii=False))
    elif markdown:
        click.echo(catalog.markdown())
    else:
        click.echo(catalog.text_listing())


# ------------------------------------------------------------------ lock


@main.group(cls=_Group)
def lock() -> None:
    """Inspect or break a job's lock (one run per job at a time)."""


def _job_lock(job_file: str, conf_root: str | None, sysconfig: str | None):
    from gobblin_py.runtime.locks import JobLock

    _require_job_file(job_file)
    props = load_job_properties(job_file, conf_root, sysconfig)
    if not props.get("job.name"):
        raise UsageError(f"{job_file}: job.name is not set")
    from gobblin_py import fs_settings

    fs_settings.apply(props)
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
    holder = job_lock.holder()
    if holder is None:
        click.echo(f"{job_lock.display}: no lock to break")
        return
    if not job_lock.is_stale(holder) and not force:
        raise UsageError(f"{job_lock.display}: held by a live run, {holder.describe()}; use --force to break it anyway")
    job_lock.break_lock()
    click.echo(f"{job_lock.display}: broken (was held by {holder.describe()})")


# ------------------------------------------------------------------ state


@main.group(cls=_Group)
def state() -> None:
    """Inspect the state store: each dataset's watermarks and run history."""


def _store_and_jobs(target: str, conf_root: str | None, sysconfig: str | None):
    """A store and the job names to look at, from a job file or a store directory."""
    from gobblin_py.state.store import FsDatasetStateStore, TABLE_SUFFIX

    from gobblin_py.config.loader.job_files import classify
    from gobblin_py.config.remote import is_remote

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
    from gobblin_py import fs_settings

    fs_settings.apply(props)
    return FsDatasetStateStore.from_properties(props), [job_name]


def _names(store) -> list[str]:
    from gobblin_py import fs as fsutil

    return fsutil.list_names(store.fs, store.root)


@state.command("show")
@click.argument("target")
@click.option("--dataset", "urn", default=None, help="Only this dataset URN.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")
@conf_options
def state_show(target: str, urn: str | None, as_json: bool, conf_root: str | None, sysconfig: str | None) -> None:
    """Latest state of each dataset: run, times, tasks and their low/expected/actual watermarks.

    TARGET is a job file (its state.store.dir and job.name are used) or a state store directory.
    """
    from gobblin_py.state import report

    store, jobs = _store_and_jobs(target, conf_root, sysconfig)
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
    from gobblin_py.state import report

    store, jobs = _store_and_jobs(target, conf_root, sysconfig)
    rows = report.history(store, jobs, urn)
    if as_json:
        click.echo(json.dumps({"store": store.url, "urn": urn, "runs": rows}, indent=2, ensure_ascii=False))
    else:
        click.echo(report.render_history(rows, urn))


if __name__ == "__main__":  # pragma: no cover
    main()
