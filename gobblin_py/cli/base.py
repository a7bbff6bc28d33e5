"""What every ``gpy`` command shares: the top-level group, error reporting, and loading a job file."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from gobblin_py import __version__
from gobblin_py.sdk.errors import GobblinPyError, UsageError
from gobblin_py.sdk.logs import configure_logging
from gobblin_py.sdk.redact import redact

DEFAULT_SYSCONFIG = Path("conf") / "gobblin.properties"
CONF_ROOT_ENV = "GPY_CONF_ROOT"

# What gpy's exit status means, for cron and schedulers: `gpy --help` and the docs site's CLI reference show this.
EXIT_CODES: tuple[tuple[int, str], ...] = (
    (0, "success: every dataset committed (or nothing new to pull)"),
    (1, "failed: a dataset was not committed, or the run broke"),
    (2, "bad usage, bad configuration or a corrupt file: one line on stderr names the file, line or key"),
    (3, "committed, but some tasks failed: their data was not published and the next run pulls it again"),
    (4, "nothing at all to pull, and the job sets job.fail.on.empty=true"),
    (65, "bad data: a value that does not fit its column, named with its file, line and column; a scheduler "
         "should not retry"),
    (75, "another run of the job holds its lock: try again later"),
    (130, "stopped by SIGINT (Ctrl-C): nothing half done, the lock released"),
    (143, "stopped by SIGTERM: nothing half done, the lock released"),
)


def _exit_code_epilog() -> str:
    # \b: click keeps the block's lines as they are instead of rewrapping them into one paragraph
    return "\b\nExit codes:\n" + "\n".join(f"  {code:>3}  {meaning}" for code, meaning in EXIT_CODES)


def _fail(exc: GobblinPyError) -> None:
    from gobblin_py.sdk.settings import SettingsError

    problems = exc.problems if isinstance(exc, SettingsError) else [exc]
    for problem in problems:  # one line each, every one naming its file, line and key
        click.echo(redact(f"gpy: error: {problem}"), err=True)
    sys.exit(exc.exit_code)


class _Group(click.Group):
    """Turns every GobblinPyError into its one-line message and exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except GobblinPyError as exc:
            _fail(exc)
        except OSError as exc:  # a filesystem that refuses: say which path, without a traceback
            click.echo(redact(f"gpy: error: {exc}"), err=True)
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


# Each top-level command → the modules that define it and its subcommands, imported when it is asked for: `gpy run`
# does not import the modules (and their libraries) of `gpy state`, `gpy schedule`, `gpy pack`, …
COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "history": ("history",),
    "lock": ("lock",),
    "pack": ("pack",),
    "password-manager": ("password_manager",),
    "plugins": ("validate",),
    "run": ("run",),
    "schedule": ("schedule",),
    "state": ("state", "startpoint", "retention", "state_admin"),
    "validate": ("validate",),
}


class _MainGroup(_Group):
    """``gpy``: its commands registered by their modules, each module imported when its command is used."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self.commands) | set(COMMAND_MODULES))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        # an unknown name loads every command, for click's "did you mean …?" among them
        modules = COMMAND_MODULES.get(cmd_name) or [m for names in COMMAND_MODULES.values() for m in names]
        for module in modules:  # each at most once: sys.modules keeps it
            importlib.import_module(f"{__package__}.{module}")
        return super().get_command(ctx, cmd_name)


def conf_options(func: Callable) -> Callable:
    """``--conf-root`` (or ``GPY_CONF_ROOT``) and ``--sysconfig``, shared by every command that loads a job file."""
    func = click.option(
        "--sysconfig",
        type=click.Path(dir_okay=False),
        default=None,
        help=f"System configuration under every job (default: the {DEFAULT_SYSCONFIG} nearest above the job "
        "file, else above the jobs root).",
    )(func)
    func = click.option(
        "--conf-root",
        type=click.Path(file_okay=False),
        default=None,
        envvar=CONF_ROOT_ENV,
        help=f"Jobs root whose .properties/.configuration files apply, from it down to the job's folder (default: "
        f"${CONF_ROOT_ENV}, else the job's own folder).",
    )(func)
    return func


def key_check_options(func: Callable) -> Callable:
    """``--strict`` and ``--lenient``: how ``gpy run`` and ``gpy validate`` treat keys nothing declares."""
    func = click.option("--lenient", is_flag=True,
                        help="A misspelling of a key the job's plugins read (writer.output.fromat) is a warning, "
                             "not an error.")(func)
    return click.option("--strict", is_flag=True,
                        help="Unknown keys in namespaces gpy owns are errors, not warnings.")(func)


def check_key_options(strict: bool, lenient: bool) -> None:
    """Refuse ``--strict`` with ``--lenient`` (exit code 2)."""
    if strict and lenient:
        raise UsageError("--strict and --lenient contradict each other: give one")


def resolve_sysconfig(sysconfig: str | None, job_path: str | None = None, conf_root: str | None = None) -> str | None:
    """The system configuration file: ``--sysconfig``, else the ``conf/gobblin.properties`` nearest above the job
    (a local file or folder), else above the jobs root; never one found from the working folder by accident."""
    from gobblin_py.jobconf import find_sysconfig
    from gobblin_py.jobconf.remote import is_remote

    if sysconfig is not None:
        if not os.path.isfile(sysconfig):
            raise UsageError(f"--sysconfig {sysconfig}: no such file")
        return os.path.abspath(sysconfig)
    starts = []
    if job_path is not None and not is_remote(job_path):
        starts.append(job_path if os.path.isdir(job_path) else os.path.dirname(os.path.abspath(job_path)))
    if conf_root is not None and not is_remote(conf_root):
        starts.append(conf_root)
    return find_sysconfig(*starts)


def load_job_properties(path: str, conf_root: str | None, sysconfig: str | None):
    """The fully resolved properties of one job file (a JobConfig: it knows the file and line of each key), with
    the keys its Source implies; the file may be on an fsspec URL (s3://…)."""
    from gobblin_py.jobconf import load_job
    from gobblin_py.jobconf.remote import is_remote, load_remote_job
    from gobblin_py.runtime.plan.implied_keys import with_source_defaults

    system = resolve_sysconfig(sysconfig, path, conf_root)
    if is_remote(path):
        return with_source_defaults(load_remote_job(path, conf_root=conf_root, sysconfig=system))
    return with_source_defaults(load_job(path, conf_root=conf_root, sysconfig=system))


def require_job_file(path: str) -> None:
    """UsageError unless ``path`` is a job file on local disk or an fsspec URL (fetched when loaded)."""
    from gobblin_py.jobconf.remote import is_remote

    if not is_remote(path) and not os.path.isfile(path):
        raise UsageError(f"{path}: no such job file")


def job_filesystems(props: Any) -> None:
    """Open the job's filesystems with its own settings (S3 endpoint and credentials, fsspec options)."""
    from gobblin_py.io import fs_settings

    fs_settings.apply(props)


@click.group(cls=_MainGroup, context_settings={"help_option_names": ["-h", "--help"]}, epilog=_exit_code_epilog())
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


_skip_teardown = False


def skip_teardown_at_exit() -> None:
    """End the ``gpy`` process as soon as the command returns, without the interpreter's teardown.

    For a command whose work is finished and durable when it returns (a local-engine run: its output and state
    are fsynced by the commit, its log lines flushed): tearing down a process that imported pyarrow, fsspec and
    the plugins costs tens of milliseconds, a tenth of a small job. Only :func:`entry` honours it, so a command
    invoked inside another program (tests, an embedding scheduler) ends normally.
    """
    global _skip_teardown
    _skip_teardown = True


_M_ARENA_MAX = -8  # glibc's mallopt parameter


def limit_malloc_arenas() -> None:
    """One malloc arena for every thread of the process (glibc), as ``MALLOC_ARENA_MAX=1`` would.

    glibc gives threads arenas of their own: memory librdkafka's threads free stays mapped in theirs while the next
    consumer's threads fill others, so a Kafka pull of three partitions peaked 40 % above one arena's (610 MB
    instead of 436 MB on 2,000,000 messages), and took longer. Python threads take turns on the interpreter lock
    anyway, and Arrow allocates from its own pool. Elsewhere (another C library), nothing happens.
    """
    try:
        import ctypes

        ctypes.CDLL(None).mallopt(_M_ARENA_MAX, 1)
    except (OSError, AttributeError):
        pass


_PR_SET_THP_DISABLE = 41  # Linux's prctl option


def no_huge_pages() -> None:
    """No transparent huge pages for this process and those it starts (Linux), as ``prctl(PR_SET_THP_DISABLE)``.

    Arrow's allocator asks for huge pages, so each first touch of its memory had the kernel zero 2 MB; a run's
    parse blocks and batches live briefly, so that was system time spent on pages used once: on the 20 M-row CSV
    files 1.6 to 1.75 s of it instead of 1.1 s, and 15 to 40 MB more peak memory (JSON lines alike). Elsewhere,
    or on a kernel without the option, nothing happens.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None).prctl(_PR_SET_THP_DISABLE, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def entry() -> None:
    """The ``gpy`` program: :func:`main`, then the exit, at once when the command asked for it."""
    limit_malloc_arenas()
    no_huge_pages()
    try:
        main()
    except SystemExit as exc:
        if not _skip_teardown:
            raise
        code = exc.code
        if not isinstance(code, int):
            if code is not None:
                print(code, file=sys.stderr)
            code = 0 if code is None else 1
        import logging

        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
