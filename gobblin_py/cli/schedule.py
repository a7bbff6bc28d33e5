"""``gpy schedule``: a job's Gobblin schedule (``job.schedule``, Quartz) as crontab lines or Airflow DAG files.

gpy does not schedule jobs itself. This command writes what another scheduler needs to run each job on the
schedule its job file names: a crontab line running ``gpy run <job>``, or an Airflow DAG file holding
``jobs/airflow/gpy_dag.py`` (its operators, no path of this machine) and one ``gpy_job_dag(...)`` call. Both run the
job file relative to the jobs root (``GPY_JOBS_ROOT``, an Airflow Variable or environment variable for a DAG, a
crontab variable for cron lines), with ``--engine`` and ``--strict``. Every job must translate, or nothing is
written; DAG files are written all or none.
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
from gobblin_py.runtime.engines import ENGINES
from gobblin_py.sdk.errors import GobblinPyError, UsageError

# jobs/airflow/gpy_dag.py of the repository gpy runs from (a checkout or an editable install)
DAG_MODULE = Path(__file__).resolve().parents[2] / "jobs" / "airflow" / "gpy_dag.py"
DAG_ID_MAX = 250  # Airflow's ID_LEN: the longest DAG id its database holds
TEMPORARY_PREFIX = ".gpy-schedule-"  # a DAG file being written (hidden, and not .py: Airflow never parses it)
ROOT_SETTING = "GPY_JOBS_ROOT"  # the jobs root: a crontab variable, the DAG's gpy_jobs_root setting
EXAMPLE_MARK = "# ---- the example DAG"  # where gpy_dag.py's own example DAG starts (not copied)
OPERATORS = ("bash", "kubernetes", "spark")


@dataclass(frozen=True)
class Scheduled:
    """One job and its schedule: the Quartz expression and the cron expression that fires alike."""

    job_file: str  # relative to the jobs root (POSIX), else absolute, or a URL
    name: str
    quartz: str
    cron: str
    named: bool = True  # by its job.name (else by its file's name)


def rooted(path: str, root: str) -> str | None:
    """``path`` relative to ``root`` (POSIX), or None when it lies outside it."""
    relative = os.path.relpath(os.path.abspath(path), root)
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return None
    return Path(relative).as_posix()


def _breaks_lines(value: str) -> bool:
    """Whether ``value`` holds a line break (or a NUL), which would end a crontab line or a comment early."""
    return "\x00" in value or len(f"{value}.".splitlines()) > 1


def _scheduled(job_file: str, conf_root: str | None, sysconfig: str | None, root: str) -> Scheduled:
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
    path = job_file if is_remote(job_file) else rooted(job_file, root)
    if path is None:
        path = os.path.abspath(job_file)
        click.echo(f"gpy: warning: {job_file} is not under the jobs root {root} (--jobs-root): its schedule names "
                   "it by its absolute path, which does not move with the jobs root", err=True)
    name = props.get("job.name")
    return Scheduled(path, name or Path(job_file).stem, quartz, cron, named=bool(name))


def _conf_args(conf_root: str | None, sysconfig: str | None, root: str) -> list[str]:
    """``--conf-root``/``--sysconfig`` as given, relative to the jobs root where they lie in it."""
    args = []
    for option, value in (("--conf-root", conf_root), ("--sysconfig", sysconfig)):
        if value is not None:
            args += [option, value if is_remote(value) else rooted(value, root) or os.path.abspath(value)]
    return args


def run_words(job: Scheduled, engine: str, conf_args: list[str]) -> list[str]:
    """What cron and Airflow both pass to gpy: ``run JOB_FILE --engine ENGINE --strict`` and the conf options."""
    return ["run", job.job_file, "--engine", engine, "--strict", *conf_args]


def _cron_word(word: str) -> str:
    """``word`` quoted for the shell cron starts, and for cron itself: cron ends a command at a ``%`` and turns
    ``\\%`` into ``%``, but cannot pass a backslash right before a ``%``; so each ``%`` stands outside the shell's
    quotes, as ``'\\%'``, where the character before it is always a quote."""
    return shlex.quote(word).replace("%", "'\\%'")


def crontab_root(root: str) -> str:
    """The crontab variable line that sets the jobs root for the lines below it (cron passes it to their
    commands); UsageError when cron cannot hold it (a line break, a quote: cron reads no escapes there)."""
    if _breaks_lines(root) or '"' in root or "'" in root:
        raise UsageError(f"--jobs-root {root!r}: a crontab variable cannot hold a line break or a quote; move the "
                         "jobs, or give another --jobs-root")
    return f'{ROOT_SETTING}="{root}"'


def crontab_line(job: Scheduled, gpy: list[str], words: list[str]) -> str:
    """The crontab line that runs ``job`` on its schedule from the jobs root (where its relative paths point);
    UsageError naming the job file when a value would break the line."""
    for value, what in ((job.job_file, "the job file's path"), (shlex.join(gpy), "the gpy command"),
                        (shlex.join(words), "--conf-root/--sysconfig")):
        if _breaks_lines(value):
            raise UsageError(f"{job.job_file!r}: {what} holds a line break ({value!r}), which would start a new "
                             "crontab entry; rename it")
    return f'{job.cron} cd "${ROOT_SETTING}" && exec {" ".join(_cron_word(word) for word in [*gpy, *words])}'


def dag_id(job: Scheduled) -> str:
    """An Airflow DAG id for a job: ``gpy_`` and its name, letters, digits, ``_``, ``-`` and ``.`` only."""
    return "gpy_" + re.sub(r"[^A-Za-z0-9_.-]", "_", job.name)


def dag_helper(module: Path) -> tuple[str, str]:
    """The docstring and the code of ``gpy_dag.py`` without its example DAG: what each DAG file holds."""
    text = module.read_text(encoding="utf-8")
    tree = ast.parse(text)
    docstring = ast.get_docstring(tree, clean=True) or ""
    body = "".join(text.splitlines(keepends=True)[tree.body[0].end_lineno or 0:])
    return docstring, body.partition(EXAMPLE_MARK)[0].strip() + "\n"


def dag_file(job: Scheduled, helper: tuple[str, str], gpy: list[str] | None, engine: str, operator: str,
             wait_complete: bool, conf_args: list[str]) -> str:
    """The text of a DAG file that runs ``job`` on its schedule: ``gpy_dag.py``'s code and one ``gpy_job_dag`` call.

    Every value from outside (paths, the command, the description) is a ``repr()`` literal; the docstring holds
    only the DAG id and the schedule, which hold no quote or backslash (``quartz_to_cron`` refused any other)."""
    docstring, code = helper
    gpy_text = shlex.join(gpy) if gpy is not None else None
    return f'''"""Airflow DAG {dag_id(job)}: gpy runs the job file given at the end on its Gobblin schedule.

{SCHEDULE_KEY}={job.quartz} (Quartz), {job.cron} as cron. Written by `gpy schedule --airflow`; write it again
after the job's schedule changes. The job file is relative to the jobs root, the setting gpy_jobs_root.

{docstring}
"""

{code}

dag = gpy_job_dag(
    {dag_id(job)!r},
    schedule={job.cron!r},
    job_file={job.job_file!r},
    engine={engine!r},
    operator={operator!r},
    wait_for={"completeness" if wait_complete else None!r},
    gpy={gpy_text!r},
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
@click.option("--jobs-root", "jobs_root", type=click.Path(file_okay=False), default=".", show_default=True,
              help="The folder job files are named relative to, and runs start in (GPY_JOBS_ROOT where they run).")
@click.option("--engine", type=click.Choice(sorted(ENGINES)), default="spark", show_default=True,
              help="The engine of every run (as gpy run --engine).")
@click.option("--gpy", "gpy_text", default=None, metavar="COMMAND",
              help="The gpy command the runs start (default: gpy from the PATH; for a DAG, its gpy_command setting).")
@click.option("--operator", type=click.Choice(OPERATORS), default="bash", show_default=True,
              help="--airflow: the DAG's task: BashOperator, KubernetesPodOperator or SparkSubmitOperator.")
@click.option("--wait-complete", is_flag=True,
              help="--airflow: add a sensor waiting until the job's datasets are complete up to the run's interval "
                   "end (gpy state watermark --at; the datasets need event times).")
def schedule(job_files: tuple[str, ...], conf_root: str | None, sysconfig: str | None, crontab: bool,
             airflow_dir: str | None, jobs_root: str, engine: str, gpy_text: str | None, operator: str,
             wait_complete: bool) -> None:
    """Run jobs on their Gobblin schedule (job.schedule, a Quartz cron expression) with cron or Airflow.

    gpy does not schedule jobs itself: --crontab prints the lines for `crontab -e`, --airflow DIR writes one
    self-contained DAG file per job. Each runs `gpy run JOB_FILE --engine ENGINE --strict` in the jobs root
    (GPY_JOBS_ROOT: a crontab variable printed above the lines; for a DAG, the Airflow Variable gpy_jobs_root or
    that environment variable), the job file named relative to it. A schedule cron cannot express (seconds
    other than 0, L, W, #, a year) is refused, naming the job; so is a line break in a job's name, schedule or
    path, a name too long for a DAG, and a DAG file another job (or not gpy) wrote. When any job is refused,
    nothing is printed or written (exit 2); DAG files are written all or none.
    """
    gpy = _checked_options(crontab, airflow_dir, jobs_root, gpy_text, operator, wait_complete)
    root = os.path.abspath(jobs_root)
    jobs: list[Scheduled] = []
    refused: list[tuple[str, str]] = []
    for job_file in job_files:
        try:
            jobs.append(_scheduled(job_file, conf_root, sysconfig, root))
        except GobblinPyError as exc:
            refused.append((job_file, str(exc)))
    conf_args = _conf_args(conf_root, sysconfig, root)
    if airflow_dir is None:
        _print_crontab(jobs, refused, len(job_files), root, gpy, engine, conf_args)
    else:
        _write_airflow(jobs, refused, len(job_files), Path(airflow_dir), gpy, engine, operator, wait_complete,
                       conf_args)


def _checked_options(crontab: bool, airflow_dir: str | None, jobs_root: str, gpy_text: str | None, operator: str,
                     wait_complete: bool) -> list[str] | None:
    """The options checked together before any job is read; the --gpy command's words, if given."""
    if crontab == (airflow_dir is not None):
        raise UsageError("give one of --crontab or --airflow DIR")
    if crontab and (operator != "bash" or wait_complete):
        raise UsageError("--operator and --wait-complete are for --airflow")
    if airflow_dir is not None and not DAG_MODULE.is_file():
        raise UsageError(f"--airflow: {DAG_MODULE} (the DAG's operators) is not beside this gpy; run gpy from a "
                         "checkout of its repository")
    if not os.path.isdir(os.path.abspath(jobs_root)):
        raise UsageError(f"--jobs-root {jobs_root}: no such folder")
    try:
        return shlex.split(gpy_text) if gpy_text is not None else None
    except ValueError as exc:
        raise UsageError(f"--gpy {gpy_text!r}: {exc} (quote it as a shell would)") from None


def _print_crontab(jobs: list[Scheduled], refused: list[tuple[str, str]], asked: int, root: str,
                   gpy: list[str] | None, engine: str, conf_args: list[str]) -> None:
    """Print the jobs' crontab lines, or nothing when any job is refused."""
    lines = [f"# gpy schedule: job files and their relative paths are relative to {ROOT_SETTING}", crontab_root(root)]
    for job in jobs:
        try:
            lines += [f"# {job.name}: {SCHEDULE_KEY}={job.quartz}",
                      crontab_line(job, gpy or ["gpy"], run_words(job, engine, conf_args))]
        except UsageError as exc:
            refused.append((job.job_file, str(exc)))
    if refused:
        _refuse(refused, asked)
    click.echo("\n".join(lines))


def _write_airflow(jobs: list[Scheduled], refused: list[tuple[str, str]], asked: int, folder: Path,
                   gpy: list[str] | None, engine: str, operator: str, wait_complete: bool,
                   conf_args: list[str]) -> None:
    """Write one DAG file per job into ``folder`` (all or none), or nothing when any job is refused."""
    refused += dag_name_problems(jobs, folder)
    refused += dag_conflicts(jobs, folder)
    if refused:
        _refuse(refused, asked)
    folder.mkdir(parents=True, exist_ok=True)
    helper = dag_helper(DAG_MODULE)
    paths = [Path(contained_join(str(folder), f"{dag_id(job)}.py", what="job.name")) for job in jobs]
    write_dags(folder, [(path, dag_file(job, helper, gpy, engine, operator, wait_complete, conf_args))
                        for path, job in zip(paths, jobs, strict=True)])
    for path, job in zip(paths, jobs, strict=True):
        click.echo(f"{path}: DAG {dag_id(job)}, schedule {job.cron} ({SCHEDULE_KEY}={job.quartz})")
