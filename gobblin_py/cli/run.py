"""``gpy run``."""

from __future__ import annotations

import sys

import click

from gobblin_py.cli.base import conf_options, load_job_properties, main, require_job_file


# ------------------------------------------------------------------ run


@main.command("run")
@click.argument("job_file", type=click.Path(dir_okay=False))
@conf_options
@click.option("--engine", type=click.Choice(["spark", "local"]), default="spark", show_default=True,
              help="spark: tasks run as Spark tasks; local: in a thread pool of this process.")
@click.option("--master", default=None, help="Spark master URL (default: the job's spark.master, else local[*]).")
@click.option("--strict", is_flag=True, help="Unknown keys in namespaces gpy owns are errors, not warnings.")
@click.option("--dry-run", is_flag=True, help="Print the work units the next run would plan (startpoints applied); "
                                              "change nothing.")
def run(job_file: str, conf_root: str | None, sysconfig: str | None, engine: str, master: str | None,
        strict: bool, dry_run: bool) -> None:
    """Run one job: pull what is new, publish it per the commit policy, save the watermarks.

    Exit codes: 0 all committed, 3 committed with failed tasks, 1 failed, 2 bad configuration or usage,
    75 another run of the job holds its lock, 143/130 stopped by SIGTERM/SIGINT.
    """
    from gobblin_py.runtime.launcher import JobLauncher
    from gobblin_py.runtime.summary import render

    require_job_file(job_file)
    props = load_job_properties(job_file, conf_root, sysconfig)
    launcher = JobLauncher(props, engine=engine, master=master, strict=strict)
    if dry_run:
        from gobblin_py.runtime.dry_run import dry_run as plan

        click.echo(plan(launcher).render())
        return
    result = launcher.run()
    click.echo(render(result))
    sys.exit(result.exit_code)


