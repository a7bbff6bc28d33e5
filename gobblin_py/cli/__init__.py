"""The ``gpy`` command line.

Exit codes, for cron and schedulers: :data:`gobblin_py.cli.base.EXIT_CODES` (``gpy --help`` lists them). Each command
group lives in its own module; :func:`main` imports it when its command is used (``COMMAND_MODULES`` of
:mod:`gobblin_py.cli.base`), so a command loads only what it needs.
"""

from gobblin_py.cli.base import DEFAULT_SYSCONFIG, entry, load_job_properties, main

__all__ = ["DEFAULT_SYSCONFIG", "entry", "load_job_properties", "main"]
