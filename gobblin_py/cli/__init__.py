"""The ``gpy`` command line.

Exit codes, for cron and schedulers: 0 success, 1 failure, 2 bad usage, bad configuration or a corrupt file
(one line on stderr naming the file or key, never a traceback), 3 committed with failed tasks, 4 nothing at all
to pull (``job.fail.on.empty``), 75 the job's lock is held, 143/130 stopped by SIGTERM/SIGINT. Each command group lives in its own module; importing this package
registers them all on :func:`main`.
"""

from gobblin_py.cli import (  # noqa: F401 - each registers its commands
    history,
    lock,
    pack,
    retention,
    run,
    schedule,
    startpoint,
    state,
    state_admin,
    validate,
)
from gobblin_py.cli.base import DEFAULT_SYSCONFIG, entry, load_job_properties, main

__all__ = ["DEFAULT_SYSCONFIG", "entry", "load_job_properties", "main"]
