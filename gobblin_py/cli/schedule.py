"""``gpy schedule``: a job's Gobblin schedule (``job.schedule``, Quartz) as crontab lines or Airflow DAG files.

gpy does not schedule jobs itself. This command writes what another scheduler needs to run each job on the
schedule its job file names: a crontab line running ``gpy run <job>``, or a thin Airflow DAG built by
``gpy_job_dag`` of ``jobs/airflow/gpy_dag.py``. Every job must translate, or nothing is written; DAG files are
written all or none.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import click

from gobblin_py.cli.base import conf_options, load_job_properties, main, require_job_file
from gobblin_py.io.contained_paths import contained_join
from gobblin_py.io.fs import fsync_dir
from gobblin_py.jobconf.remote import is_remote
from gobblin_py.jobconf.schedule import DISABLED_KEY, RUN_ONCE_KEY, SCHEDULE_KEY, ScheduleError, quartz_to_cron
from gobblin_py.sdk.errors import GobblinPyError, UsageError

# jobs/airflow/gpy_dag.py of the repository gpy runs from (a checkout or an editable install)
DAG_MODULE = Path(__file__).resolve().parents[2] / "jobs" / "airflow" / "gpy_dag.py"
DAG_ID_MAX = 250  # Airflow's ID_LEN: the longest DAG id its database holds
TEMPORARY_PREFIX = ".gpy-schedule-"  # a DAG file being written (hidden, and not .py: Airflow never parses it)


@dataclass(frozen=True)
class Scheduled:
    """One job and its schedule: the Quartz expression and the cron expression that fires alike."""

    job_file: str  # absolute
    name: str
    quartz: str
    cron: str
    named: bool = True  # by its job.name (else by its file's name)


def gpy_command() -> list[str]:
    """How cron or Airflow starts this gpy: the ``gpy`` program by its absolute path when it is what runs now,
    else this Python with ``-m gobblin_py.cli``."""
    program = sys.argv[0] if sys.argv else ""
    if os.path.basename(program) == "gpy" and os.path.isfile(program):
        return [os.path.abspath(program)]
    return [os.path.abspath(sys.executable), "-m", "gobblin_py.cli"]


def _breaks_lines(value: str) -> bool:
    """Whether ``value`` holds a line break (or a NUL), which would end a crontab line or a comment early."""
    return "\x00" in value or len(f"{value}.".splitlines()) > 1


def _scheduled(job_file: str, conf_root: str | None, sysconfig: str | None) -> Scheduled:
    require_job_file(job_file)
    props = load_job_properties(job_file, conf_root, sysconfig)
    where = f"{job_file}: key '{SCHEDULE_KEY}'"
    for key in ("job.name", SCHEDULE_KEY):
        if _breaks_lines(props.get(key) or ""):
            raise UsageError(f"{job_file}: key '{key}' holds a line break ({props.get(key)!r}), which would start a "
                             "new crontab entry or DAG line; write it on one line")
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
    absolute = job_file if is_remote(job_file) else os.path.abspath(job_file)
    name = props.get("job.name")
    return Scheduled(absolute, name or Path(job_file).stem, quartz, cron, named=bool(name))


def _conf_args(conf_root: str | None, sysconfig: str | None) -> list[str]:
    args = []
    if conf_root is not None:
        args += ["--conf-root", os.path.abspath(conf_root)]
    if sysconfig is not None:
        args += ["--sysconfig", os.path.abspath(sysconfig)]
    return args


def _cron_word(word: str) -> str:
    """``word`` quoted for the shell cron starts, and for cron itself: cron ends a command at a ``%`` and turns
    ``\\%`` into ``%``, but cannot pass a backslash right before a ``%``; so each ``%`` stands outside the shell's
    quotes, as ``'\\%'``, where the character before it is always a quote."""
    return shlex.quote(word).replace("%", "'\\%'")


def crontab_line(job: Scheduled, gpy: list[str], workdir: str, conf_args: list[str]) -> str:
    """The crontab line that runs ``job`` on its schedule, from ``workdir`` (where its relative paths point);
    UsageError naming the job file when a value would break the line."""
    words = [*gpy, "run", job.job_file, *conf_args]
    for value, what in ((job.job_file, "the job file's path"), (workdir, "the working folder"),
                        (shlex.join(gpy), "the gpy command"), (shlex.join(conf_args), "--conf-root/--sysconfig")):
        if _breaks_lines(value):
            raise UsageError(f"{job.job_file!r}: {what} holds a line break ({value!r}), which would start a new "
                             "crontab entry; rename it")
    return f"{job.cron} cd {_cron_word(workdir)} && exec {' '.join(_cron_word(word) for word in words)}"


def dag_id(job: Scheduled) -> str:
    """An Airflow DAG id for a job: ``gpy_`` and its name, letters, digits, ``_``, ``-`` and ``.`` only."""
    return "gpy_" + re.sub(r"[^A-Za-z0-9_.-]", "_", job.name)


def dag_file(job: Scheduled, gpy: list[str], workdir: str, dag_module: Path, conf_args: list[str]) -> str:
    """The text of a DAG file that runs ``job`` on its schedule with ``gpy_job_dag`` of ``dag_module``.

    Every value from outside (paths, the command, the description) is a ``repr()`` literal; the docstring holds
    only the DAG id and the schedule, which hold no quote or backslash (``quartz_to_cron`` refused any other)."""
    return f'''"""Airflow DAG {dag_id(job)}: gpy runs the job file given below on its Gobblin schedule.

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


def dag_owner(path: Path) -> str | None:
    """The job file a DAG file written by ``gpy schedule --airflow`` runs, or None for any other file."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return None
    for node in tree.body:
        call = node.value if isinstance(node, ast.Assign) else None
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "gpy_job_dag":
            for keyword in call.keywords:
                if keyword.arg == "job_file" and isinstance(keyword.value, ast.Constant):
                    return str(keyword.value.value)
    return None


def _name_limits(folder: Path) -> tuple[int, int]:
    """The longest file name and path (in bytes) the file system of ``folder`` (or its nearest existing parent)
    takes."""
    existing = folder.absolute()
    while not existing.is_dir() and existing != existing.parent:
        existing = existing.parent
    try:
        return os.pathconf(existing, "PC_NAME_MAX"), os.pathconf(existing, "PC_PATH_MAX")
    except (OSError, ValueError):
        return 255, 4096


def dag_name_problems(jobs: list[Scheduled], folder: Path) -> list[tuple[str, str]]:
    """Why some jobs' DAGs cannot be named: a DAG id longer than Airflow takes, or a file name or path longer
    than the file system of ``folder`` takes; each naming the job file and the key its name comes from."""
    name_max, path_max = _name_limits(folder)
    problems = []
    for job in jobs:
        ident = dag_id(job)
        file_name = f"{ident}.py"
        path = os.fsencode(folder.absolute() / file_name)
        source = "key 'job.name'" if job.named else "its file name (job.name is not set)"
        shown = ident if len(ident) <= 40 else f"{ident[:36]}…"
        if len(ident) > DAG_ID_MAX:
            why = f"DAG id {shown} is {len(ident)} characters, and Airflow takes at most {DAG_ID_MAX}"
        elif len(os.fsencode(file_name)) > name_max:
            why = f"DAG file name {shown}.py is {len(file_name)} bytes, and {folder} takes at most {name_max}"
        elif len(path) >= path_max:
            why = f"DAG file {folder / file_name} is a path of {len(path)} bytes, beyond the {path_max} allowed"
        else:
            continue
        room = min(DAG_ID_MAX, name_max - 3, path_max - 1 - (len(path) - len(file_name) + 3)) - len("gpy_")
        problems.append((job.job_file, f"{job.job_file}: {source} makes a name too long: {why}; give the job a "
                                        f"job.name of at most {max(room, 0)} characters"))
    return problems


def dag_conflicts(jobs: list[Scheduled], folder: Path) -> list[tuple[str, str]]:
    """Why some jobs cannot have their DAG files in ``folder``: two jobs of one DAG id, here or already there,
    or a file of that name that ``gpy schedule`` did not write (it is never replaced)."""
    problems = []
    by_id: dict[str, Scheduled] = {}
    for job in jobs:
        other = by_id.setdefault(dag_id(job), job)
        if other is not job:
            problems.append((job.job_file, f"--airflow: jobs {other.job_file} (job.name {other.name!r}) and "
                                           f"{job.job_file} (job.name {job.name!r}) would both be DAG "
                                           f"{dag_id(job)}: give each its own job.name"))
    for name, job in by_id.items():
        path = folder / f"{name}.py"
        try:
            if not path.exists():
                continue
        except OSError:  # a name too long to look up: dag_name_problems says so
            continue
        owner = dag_owner(path)
        if owner is None:
            problems.append((job.job_file, f"--airflow: {path} is there and was not written by gpy schedule; DAG "
                                           f"{name} of {job.job_file} would replace it: move it, or give the job "
                                           "another job.name"))
        elif owner != job.job_file:
            problems.append((job.job_file, f"--airflow: {path} is already DAG {name} of {owner}; {job.job_file} "
                                           f"(job.name {job.name!r}) would replace it: give one of them another "
                                           "job.name"))
    return problems


def _refuse(problems: list[tuple[str, str]], total: int) -> NoReturn:
    for _, problem in problems:
        click.echo(f"gpy: error: {problem}", err=True)
    refused = len({job_file for job_file, _ in problems})
    click.echo(f"gpy: error: {refused} of {total} jobs not scheduled; nothing written", err=True)
    sys.exit(2)


def write_dags(folder: Path, files: list[tuple[Path, str]]) -> None:
    """Write every DAG file or none: each to a hidden temporary file in ``folder``, made durable, then all
    renamed into place (Airflow's DAG processor never reads half a file). A failure while writing (a full disk)
    removes the temporary files and replaces nothing; one among the renames says which files were written."""
    mask = os.umask(0)
    os.umask(mask)
    temporary: list[str] = []
    for path, text in files:
        try:
            temporary.append(_write_temporary(folder, text, 0o666 & ~mask))
        except OSError as exc:
            _remove(temporary)
            raise GobblinPyError(f"--airflow: cannot write {path}: {exc.strerror or exc}; no DAG file was "
                                 "written or replaced") from exc
    written: list[str] = []
    for (path, _), name in zip(files, temporary, strict=True):
        try:
            os.replace(name, path)
        except OSError as exc:
            _remove(temporary[len(written):])
            raise GobblinPyError(f"--airflow: cannot write {path}: {exc.strerror or exc}; written: "
                                 f"{', '.join(written) or 'none'}; not written: "
                                 f"{', '.join(str(p) for p, _ in files[len(written):])}") from exc
        written.append(str(path))
    fsync_dir(str(folder))


def _write_temporary(folder: Path, text: str, mode: int) -> str:
    """A new hidden file in ``folder`` holding ``text``, fsynced; its name. Removed again when it cannot be."""
    fd, name = tempfile.mkstemp(prefix=TEMPORARY_PREFIX, suffix=".tmp", dir=folder)
    try:
        os.fchmod(fd, mode)  # as a file written plainly: Airflow may run as another user
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return name


def _remove(paths: list[str]) -> None:
    for path in paths:
        Path(path).unlink(missing_ok=True)


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
    schedule cron cannot express (seconds other than 0, L, W, #, a year) is refused, naming the job; so is a
    line break in a job's name, schedule or path, a name too long for a DAG, and a DAG file another job (or not
    gpy) wrote. When any job is refused, nothing is printed or written (exit 2); DAG files are written all or
    none.
    """
    if crontab == (airflow_dir is not None):
        raise UsageError("give one of --crontab or --airflow DIR")
    if airflow_dir is not None and not DAG_MODULE.is_file():
        raise UsageError(f"--airflow: {DAG_MODULE} (the DAG's operators) is not beside this gpy; run gpy from a "
                         "checkout of its repository")
    jobs: list[Scheduled] = []
    refused: list[tuple[str, str]] = []
    for job_file in job_files:
        try:
            jobs.append(_scheduled(job_file, conf_root, sysconfig))
        except GobblinPyError as exc:
            refused.append((job_file, str(exc)))
    gpy, workdir, conf_args = gpy_command(), os.getcwd(), _conf_args(conf_root, sysconfig)
    if crontab:
        lines = []
        for job in jobs:
            try:
                lines += [f"# {job.name}: {SCHEDULE_KEY}={job.quartz}", crontab_line(job, gpy, workdir, conf_args)]
            except UsageError as exc:
                refused.append((job.job_file, str(exc)))
        if refused:
            _refuse(refused, len(job_files))
        click.echo("\n".join(lines))
        return
    assert airflow_dir is not None
    folder = Path(airflow_dir)
    refused += dag_name_problems(jobs, folder)
    refused += dag_conflicts(jobs, folder)
    if refused:
        _refuse(refused, len(job_files))
    folder.mkdir(parents=True, exist_ok=True)
    paths = [Path(contained_join(str(folder), f"{dag_id(job)}.py", what="job.name")) for job in jobs]
    write_dags(folder, [(path, dag_file(job, gpy, workdir, DAG_MODULE, conf_args))
                        for path, job in zip(paths, jobs, strict=True)])
    for path, job in zip(paths, jobs, strict=True):
        click.echo(f"{path}: DAG {dag_id(job)}, schedule {job.cron} ({SCHEDULE_KEY}={job.quartz})")
