"""``gpy pack``."""

from __future__ import annotations

from pathlib import Path

import click

from gobblin_py.cli.base import conf_options, load_job_properties, main, require_job_file


@main.command("pack")
@click.argument("job_file", required=False, type=click.Path(dir_okay=False))
@conf_options
@click.option("--output", type=click.Path(dir_okay=False), default=None,
              help="Copy the archive to this file (e.g. to upload it where a cluster fetches it from): whole or not "
                   "at all, replacing a file there only once the copy is complete.")
def pack(job_file: str | None, conf_root: str | None, sysconfig: str | None, output: str | None) -> None:
    """Build the environment archive `gpy run` ships to a Spark cluster's executors, and print its path.

    It holds gpy, its dependencies and, given JOB_FILE, the job's plugin modules; a Python of the same minor
    version is all an executor needs besides it. Cached by content: an unchanged environment is not packed again.
    Name it in a job with gpy.spark.archive=PATH, or pass it to spark-submit --archives PATH#environment with
    spark.pyspark.python=./environment/bin/python and spark.pyspark.driver.python set to gpy's own Python
    (docs: Running on a cluster, spark-submit).
    """
    import time

    from gobblin_py.runtime.engines.pack import copy_archive, environment_archive
    from gobblin_py.runtime.execute import signals
    from gobblin_py.sdk.errors import UsageError

    props: dict[str, str] = {}
    if job_file is not None:
        require_job_file(job_file)
        props = dict(load_job_properties(job_file, conf_root, sysconfig))
    target = Path(output).absolute() if output is not None else None
    if target is not None and not target.parent.is_dir():
        raise UsageError(f"--output {output}: the folder {target.parent} does not exist")
    before = _identity(target)
    archive: Path | None = None
    began = time.monotonic()
    try:
        with signals.handle_signals():  # SIGTERM or SIGINT: the partial archive or copy is removed, exit 143 / 130
            archive = environment_archive(props)
            seconds = time.monotonic() - began
            if target is not None:
                copy_archive(archive, target)
    except Exception as exc:
        stop = signals.as_stop(exc)  # also an error the signal caused (an import it cut short raises its own)
        if stop is None:
            raise
        raise signals.JobInterrupted(stop.signum, _stopped(archive, target, before), locked=False) from None
    shown = archive if target is None else target
    click.echo(f"{shown}\t{shown.stat().st_size / 1e6:.1f} MB\t{seconds:.1f} s")


def _identity(path: Path | None) -> tuple[int, int] | None:
    """The file at ``path`` (device and inode), None when there is none: a copy renamed over it changes it."""
    try:
        info = path.stat() if path is not None else None
    except FileNotFoundError:
        return None
    return (info.st_dev, info.st_ino) if info is not None else None


def _stopped(archive: Path | None, target: Path | None, before: tuple[int, int] | None) -> str:
    """What a stop left: no archive, the archive without its copy at ``target``, or both."""
    if archive is None:
        return "no archive was written"
    if target is None:
        return f"the archive is {archive}"
    if _identity(target) != before:  # the signal came after the copy was renamed into place
        return f"the archive was written to {target}"
    left = "left as it was" if before is not None else "not written"
    return f"{target} was {left}; the archive is {archive}"
