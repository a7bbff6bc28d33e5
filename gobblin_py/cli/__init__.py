"""The ``gpy`` command line.

Exit codes, for cron and schedulers: 0 success, 1 failure, 2 bad usage, bad configuration or a corrupt file
(one line on stderr naming the file or key, never a traceback), 3 committed with failed tasks, 4 nothing at all
to pull (``job.fail.on.empty``), 65 bad data (a value that fails its column's cast, named with its file, line and
column: a scheduler should not retry), 75 the job's lock is held, 143/130 stopped by SIGTERM/SIGINT. Each command
group lives in its own module;
:func:`main` imports it when its command is used (``COMMAND_MODULES`` of :mod:`gobblin_py.cli.base`), so a
command loads only what it needs.
"""

from gobblin_py.cli.base import DEFAULT_SYSCONFIG, entry, load_job_properties, main

__all__ = ["DEFAULT_SYSCONFIG", "entry", "load_job_properties", "main"]
