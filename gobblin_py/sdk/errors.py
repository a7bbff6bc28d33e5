"""Errors a user can act on. Each names the file, key or record concerned, and what went wrong.

The CLI turns these into a one-line message and an exit code; anything else is a bug and gets a traceback.
"""

from __future__ import annotations


class GobblinPyError(Exception):
    """Base of every error gobblin_py reports to a user without a traceback."""

    exit_code = 1


class UsageError(GobblinPyError):
    """The command line or a job configuration is wrong (exit code 2)."""

    exit_code = 2


class CorruptFileError(GobblinPyError):
    """A file could not be decoded: it is truncated, corrupt or of an unsupported kind (exit code 2)."""

    exit_code = 2

    def __init__(self, path: str, reason: str, offset: int | None = None) -> None:
        self.path = path
        self.reason = reason
        self.offset = offset
        where = f" at offset {offset}" if offset is not None else ""
        super().__init__(f"{path}: {reason}{where}")

    def with_path(self, path: str) -> CorruptFileError:
        """The same error, reported against ``path`` (the decoder may not know the file's name)."""
        return CorruptFileError(path, self.reason, self.offset)


class StateStoreError(GobblinPyError):
    """The state store cannot be read or written as asked (exit code 2)."""

    exit_code = 2


class RecordsLost(GobblinPyError):
    """A task's or a dataset's record counts do not add up: records were lost (or invented) on the way."""


class NothingToPull(GobblinPyError):
    """A run found nothing at all to pull and its job asks for that to fail (``job.fail.on.empty``; exit code 4)."""

    exit_code = 4
