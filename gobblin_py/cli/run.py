"""``gpy run``."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from gobblin_py.cli.base import (
    check_key_options,
    conf_options,
    key_check_options,
    load_job_properties,
    main,
    require_job_file,
    skip_teardown_at_exit,
)
from gobblin_py.runtime.engines import ENGINES

if TYPE_CHECKING:
    from gobblin_py.cli.progress_display import LiveDisplay
    from gobblin_py.runtime.commit.job_result import JobResult
    from gobblin_py.runtime.launcher import JobLauncher


# ------------------------------------------------------------------ run


@main.command("run")
@click.argument("job_file", type=click.Path(dir_okay=False))
@conf_options
@click.option("--engine", type=click.Choice(sorted(ENGINES)), default="spark", show_default=True,
              help="spark: tasks run as Spark tasks; local: in this process's threads (or worker processes, "
                   "gpy.taskexecutor.processes); connect: on a Spark Connect server (--remote, or the job's "
                   "spark.remote, which also picks it under the default).")
@click.option("--master", default=None, help="Spark master URL (default: the job's spark.master, else local[*]).")
@click.option("--remote", default=None, metavar="sc://HOST:PORT",
              help="Run the tasks on this Spark Connect server (default: the job's spark.remote).")
@key_check_options
@click.option("--dry-run", is_flag=True, help="Print the work units the next run would plan (startpoints applied); "
                                              "change nothing.")
@click.option("--republish", is_flag=True, help="Run even when the job has no state while its final folder holds "
                                                "data it published: pull and publish everything again.")
def run(job_file: str, conf_root: str | None, sysconfig: str | None, engine: str, master: str | None,
        remote: str | None, strict: bool, lenient: bool, dry_run: bool, republish: bool) -> None:
    """Run one job: pull what is new, publish it per the commit policy, save the watermarks.

    Exit codes: 0 all committed, 3 committed with failed tasks, 1 failed, 2 bad configuration or usage,
    4 nothing at all to pull under job.fail.on.empty=true, 65 bad data (a value that does not fit its column,
    named with its file, line and column: do not retry), 75 another run of the job holds its lock,
    143/130 stopped by SIGTERM/SIGINT.
    """
    from gobblin_py.runtime.execute import signals

    check_key_options(strict, lenient)
    with signals.handle_signals():  # a signal at any time stops the run, from loading the job file on
        launcher = _load(job_file, conf_root, sysconfig, engine, master, remote, strict, dry_run, republish, lenient)
        if launcher is None:
            return  # a standalone job (job.class): done
        if dry_run:
            from gobblin_py.runtime.dry_run import dry_run as plan

            click.echo(plan(launcher).render())
            return
        result = _run_shown(launcher)
    from gobblin_py.runtime.commit.job_result import EXIT_DATA, EXIT_USAGE
    from gobblin_py.runtime.commit.summary import render

    if launcher.engine.name == "local":
        skip_teardown_at_exit()  # everything is committed and flushed; no JVM or Spark to stop
    if sys.stdout.isatty():
        from gobblin_py.cli.summary_table import print_summary_table

        print_summary_table(result)
    else:
        click.echo(render(result))
    if result.exit_code == EXIT_USAGE:
        # tasks failed on the job's configuration or input: each said as an error found before the run would be
        for line in result.usage_errors():
            click.echo(f"gpy: error: {line}", err=True)
    elif result.exit_code == EXIT_DATA:  # a value of the input: its file, line and column
        for line in result.data_errors():
            click.echo(f"gpy: error: {line}", err=True)
    sys.exit(result.exit_code)


def _run_standalone(props: Any, dry_run: bool, strict: bool = False, lenient: bool = False) -> bool:
    """Run a job whose ``job.class`` is no ingestion pipeline (Gobblin's ``DatasetCleanerJob``); False for any
    other job. Its keys are checked first (the warnings logged); its report goes to stdout."""
    from gobblin_py.cli.base import job_filesystems
    from gobblin_py.runtime.plan.validation import check_job, standalone_job_class
    from gobblin_py.sdk.logs import get_logger

    job_class = standalone_job_class(props)
    if job_class is None:
        return False
    check = check_job(props, strict=strict, lenient=lenient)
    for warning in check.warnings:
        get_logger(__name__).warning("config_warning", problem=warning)
    check.raise_for_errors()
    job_filesystems(props)
    for line in job_class().run(props, dry_run):
        click.echo(line)
    return True


def _load(job_file: str, conf_root: str | None, sysconfig: str | None, engine: str, master: str | None,
          remote: str | None, strict: bool, dry_run: bool, republish: bool = False,
          lenient: bool = False) -> JobLauncher | None:
    """The job's launcher: its file loaded and checked (a signal meanwhile stops ``gpy`` before the run starts).
    None when ``job.class`` names a standalone job: it has run."""
    from gobblin_py.runtime.execute import signals
    from gobblin_py.runtime.launcher import JobLauncher
    from gobblin_py.runtime.plan.validation import standalone_job_class
    from gobblin_py.sdk.logs import get_logger

    try:
        get_logger(__name__).debug("job_loading", file=job_file)
        require_job_file(job_file)
        props = load_job_properties(job_file, conf_root, sysconfig)
        if standalone_job_class(props) is None:
            return JobLauncher(props, engine=engine, master=master, strict=strict, remote=remote,
                               republish=republish, lenient=lenient)
    except BaseException as exc:
        stop = signals.as_stop(exc)
        if stop is None:
            raise
        raise signals.JobInterrupted(stop.signum, "the run had not started, nothing was committed",
                                        locked=False) from None
    _run_standalone(props, dry_run, strict, lenient)
    return None


def _run_shown(launcher: JobLauncher) -> JobResult:
    """The run, with its progress live on a terminal, or logged as JSON lines (and each dataset's summary)."""
    from gobblin_py.cli.progress_log import JsonProgress, log_dataset_summaries
    from gobblin_py.runtime.execute import task_progress
    from gobblin_py.sdk.logs import log_format

    live = sys.stderr.isatty() and log_format() == "console"
    if live:
        from gobblin_py.cli.progress_display import LiveDisplay

        display: LiveDisplay | JsonProgress = LiveDisplay()
    else:
        display = JsonProgress()
    task_progress.install(display)
    try:
        with display:
            result = launcher.run()
    finally:
        task_progress.install(None)
    if not live:
        log_dataset_summaries(result)
    return result


