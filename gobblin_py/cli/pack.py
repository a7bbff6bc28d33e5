"""``gpy pack``."""

from __future__ import annotations

import click

from gobblin_py.cli.base import conf_options, load_job_properties, main, require_job_file


@main.command("pack")
@click.argument("job_file", required=False, type=click.Path(dir_okay=False))
@conf_options
@click.option("--output", type=click.Path(dir_okay=False), default=None,
              help="Copy the archive to this file (e.g. to upload it where a cluster fetches it from).")
def pack(job_file: str | None, conf_root: str | None, sysconfig: str | None, output: str | None) -> None:
    """Build the environment archive `gpy run` ships to a Spark cluster's executors, and print its path.

    It holds gpy, its dependencies and, given JOB_FILE, the job's plugin modules; a Python of the same minor
    version is all an executor needs besides it. Cached by content: an unchanged environment is not packed again.
    Name it in a job with gpy.spark.archive=PATH, or pass it to spark-submit --archives PATH#environment with
    spark.pyspark.python=./environment/bin/python.
    """
    import shutil
    import time

    from gobblin_py.runtime.engines.pack import environment_archive
    from gobblin_py.sdk import interrupts

    props: dict[str, str] = {}
    if job_file is not None:
        require_job_file(job_file)
        props = dict(load_job_properties(job_file, conf_root, sysconfig))
    began = time.monotonic()
    try:
        with interrupts.handle_signals():  # SIGTERM or SIGINT: the partial archive is removed, exit 143 / 130
            archive = environment_archive(props)
    except interrupts.JobInterrupted as stop:
        raise interrupts.JobInterrupted(stop.signum, "no archive was written", locked=False) from None
    seconds = time.monotonic() - began
    if output is not None:
        shutil.copyfile(archive, output)
        archive = type(archive)(output).resolve()
    size = archive.stat().st_size
    click.echo(f"{archive}\t{size / 1e6:.1f} MB\t{seconds:.1f} s")
