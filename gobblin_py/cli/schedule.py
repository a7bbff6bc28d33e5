"""``gpy schedule``: a job's Gobblin schedule (``job.schedule``, Quartz) as crontab lines or Airflow DAG files.

gpy does not schedule jobs itself. This command writes what another scheduler needs to run each job on the
schedule its job file names: a crontab line running ``gpy run <job>``, or a thin Airflow DAG built by
``gpy_job_dag`` of ``jobs/airflow/gpy_dag.py``. Every job must translate, or nothing is written.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

import click

from gobblin_py.cli.base import conf_options, load_job_properties, main, require_job_file
from gobblin_py.io.contained_paths import contained_join
from gobblin_py.jobconf.schedule import DISABLED_KEY, RUN_ONCE_KEY, SCHEDULE_KEY, ScheduleError, quartz_to_cron
from gobblin_py.sdk.errors import GobblinPyError, UsageError

# jobs/airflow/gpy_dag.py of the repository gpy runs from (a checkout or an editable install)
DAG_MODULE = Path(__file__).resolve().parents[2] / "jobs" / "airflow" / "gpy_dag.py"


@dataclass(frozen=True)
class Scheduled:
    """One job and its schedule: the Quartz expression and the cron expression that fires alike."""

    job_file: str  # absolute
    name: str
    quartz: str
    cron: str


def gpy_command() -> list[str]:
    """How cron or Airflow starts this gpy: the ``gpy`` program by its absolute path when it is what runs now,
    else this Python with ``-m gobblin_py.cli``."""
    program = sys.argv[0] if sys.argv else ""
    if os.path.basename(program) == "gpy" and os.path.isfile(program):
        return [os.path.abspath(program)]
    return [os.path.abspath(sys.executable), "-m", "gobblin_py.cli"]


def _scheduled(job_file: str, conf_root: str | None, sysconfig: str | None) -> Scheduled:
    require_job_file(job_file)
    props = load_job_properties(job_file, conf_root, sysconfig)
    where = f"{job_file}: key '{SCHEDULE_KEY}'"
    if (props.get(DISABLED_KEY) or "").strip().lower() == "true":
        raise UsageError(f"{job_file}: {DISABLED_KEY}=true: Gobblin would not run this job; not scheduled")
    if (props.get(RUN_ONCE_KEY) or "").strip().lower() == "true":
        raise UsageError(f"{job_file}: {RUN_ONCE_KEY}=true: Gobblin runs this job once; start it with gpy run")
    quartz = (props.get(SCHEDULE_KEY) or "").strip()
    if not quartz:
        raise UsageError(f"{where}: is not set; nothing to schedule (set it to a Quartz cron expression, "
                         "e.g. 0 0 2 * * ? for 02:00 every day)")
    try:
        cron = quartz_to_cron(quartz)
    except ScheduleError as exc:
        raise UsageError(f"{job_file}: {exc}") from None
    return Scheduled(os.path.abspath(job_file), props.get("job.name") or Path(job_file).stem, quartz, cron)


def _conf_args(conf_root: str | None, sysconfig: str | None) -> list[str]:
    args = []
    if conf_root is not None:
        args += ["--conf-root", os.path.abspath(conf_root)]
    if sysconfig is not None:
        args += ["--sysconfig", os.path.abspath(sysconfig)]
    return args


def crontab_line(job: Scheduled, gpy: list[str], workdir: str, conf_args: list[str]) -> str:
    """The crontab line that runs ``job`` on its schedule, from ``workdir`` (where its relative paths point)."""
    command = f"cd {shlex.quote(workdir)} && exec {shlex.join([*gpy, 'run', job.job_file, *conf_args])}"
    # in a crontab, an unescaped % ends the command
    return f"{job.cron} {command.replace('%', chr(92) + '%')}"


def dag_id(job: Scheduled) -> str:
    """An Airflow DAG id for a job: ``gpy_`` and its name, letters, digits, ``_``, ``-`` and ``.`` only."""
    return "gpy_" + re.sub(r"[^A-Za-z0-9_.-]", "_", job.name)


def dag_file(job: Scheduled, gpy: list[str], workdir: str, dag_module: Path, conf_args: list[str]) -> str:
    """The text of a DAG file that runs ``job`` on its schedule with ``gpy_job_dag`` of ``dag_module``."""
    return f'''"""Airflow DAG {dag_id(job)}: gpy runs {job.job_file} on its Gobblin schedule.

{SCHEDULE_KEY}={job.quartz} (Quartz), {job.cron} as cron. Written by `gpy schedule --airflow`; write it again
after the job's schedule changes.
"""

import sys

sys.path.insert(0, {str(dag_module.parent)!r})

from gpy_dag import gpy_job_dag  # noqa: E402 - found on the path above

dag = gpy_job_dag(
    {dag_id(job)!r},
    schedule={job.cron!r},
    job_file={job.job_file!r},
    workdir={workdir!r},
    gpy={shlex.join(gpy)!r},
    wait_for="commit",
    conf_args={conf_args!r},
    description={f"gpy run {job.job_file} ({SCHEDULE_KEY}={job.quartz})"!r},
)
'''


@main.command("schedule")
@click.argument("job_files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@conf_options
@click.option("--crontab", is_flag=True, help="Print a crontab line per job.")
@click.option("--airflow", "airflow_dir", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="Write an Airflow DAG file per job into DIR (a DAGs folder).")
def schedule(job_files: tuple[str, ...], conf_root: str | None, sysconfig: str | None, crontab: bool,
             airflow_dir: str | None) -> None:
    """Run jobs on their Gobblin schedule (job.schedule, a Quartz cron expression) with cron or Airflow.

    gpy does not schedule jobs itself: --crontab prints the lines for `crontab -e`, --airflow DIR writes one
    DAG file per job. The commands run from the current folder (where the jobs' relative paths point). A
    schedule cron cannot express (seconds other than 0, L, W, #, a year) is refused, naming the job; when
    any job is refused, nothing is printed or written (exit 2).
    """
    if crontab == (airflow_dir is not None):
        raise UsageError("give one of --crontab or --airflow DIR")
    jobs: list[Scheduled] = []
    refused: list[GobblinPyError] = []
    for job_file in job_files:
        try:
            jobs.append(_scheduled(job_file, conf_root, sysconfig))
        except GobblinPyError as exc:
            refused.append(exc)
    if refused:
        for problem in refused:
            click.echo(f"gpy: error: {problem}", err=True)
        click.echo(f"gpy: error: {len(refused)} of {len(job_files)} jobs not scheduled; nothing written", err=True)
        sys.exit(2)
    gpy, workdir, conf_args = gpy_command(), os.getcwd(), _conf_args(conf_root, sysconfig)
    if crontab:
        for job in jobs:
            click.echo(f"# {job.name}: {SCHEDULE_KEY}={job.quartz}")
            click.echo(crontab_line(job, gpy, workdir, conf_args))
        return
    assert airflow_dir is not None
    if not DAG_MODULE.is_file():
        raise UsageError(f"--airflow: {DAG_MODULE} (the DAG's operators) is not beside this gpy; run gpy from a "
                         "checkout of its repository")
    folder = Path(airflow_dir)
    folder.mkdir(parents=True, exist_ok=True)
    names = [dag_id(job) for job in jobs]
    doubled = sorted({n for n in names if names.count(n) > 1})
    if doubled:
        raise UsageError(f"--airflow: several jobs would be DAG {', '.join(doubled)}: give each job its own job.name")
    for job in jobs:
        path = Path(contained_join(str(folder), f"{dag_id(job)}.py", what="job.name"))
        path.write_text(dag_file(job, gpy, workdir, DAG_MODULE, conf_args), encoding="utf-8")
        click.echo(f"{path}: DAG {dag_id(job)}, schedule {job.cron} ({SCHEDULE_KEY}={job.quartz})")
