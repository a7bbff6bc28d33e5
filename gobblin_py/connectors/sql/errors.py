"""The two kinds of failure of the SQL source: the database's (exit code 1) and the job's (exit code 2)."""

from __future__ import annotations

from gobblin_py.sdk.errors import GobblinPyError, UsageError


class SqlSourceError(GobblinPyError):
    """The database failed or returned what cannot be read (exit code 1)."""


class SqlConfigError(UsageError):
    """The job names a database, user, table or column that is not there, or a wrong password (exit code 2)."""
