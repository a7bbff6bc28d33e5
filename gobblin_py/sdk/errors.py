"""Errors a user can act on. Each names the file, key or record concerned, and what went wrong.

The CLI turns these into a one-line message and an exit code; anything else is a bug and gets a traceback.

Whether a retry can help: a failed task is retried (``task.maxretries``) only when its error may pass. An
exception says so with a ``retryable`` attribute: ``False`` for a permanent failure (the same input fails the same
way: a bad value, a missing file, a configuration error; the task fails at once), ``True`` for a transient one (a
connection refused, a timeout, a busy server; the task is retried). A plugin raises :class:`TransientError` or
:class:`PermanentError` (``raise PermanentError("orders.csv line 7: 'abc' is not a number") from exc``), or sets
``retryable`` on an exception class of its own. Without the attribute,
:func:`gobblin_py.sdk.failures.classify` recognises common library errors; an error it does not know is retried,
as in Gobblin.
"""

from __future__ import annotations


class GobblinPyError(Exception):
    """Base of every error gobblin_py reports to a user without a traceback."""

    exit_code = 1
    #: whether retrying the failed work can help: True (transient), False (permanent), None (unknown: retried)
    retryable: bool | None = None


class TransientError(GobblinPyError):
    """A failure that may pass (a server down for a moment, a lock held elsewhere): the task is retried."""

    retryable = True


class PermanentError(GobblinPyError):
    """A failure that will repeat (a bad value, a missing column or file): the task fails at once, unretried."""

    retryable = False


class DataError(PermanentError):
    """A value of the input that does not fit (``amount=abc`` in a double column): the same input fails the same
    way until the data is fixed or its rows routed aside, so the run exits 65 (sysexits' ``EX_DATAERR``), which a
    scheduler does not retry. The message names the file, the line (the record in formats without lines) and the
    column; ``row`` is the value's row in the batch that failed, until the run says where that row came from."""

    exit_code = 65

    def __init__(self, message: str, row: int | None = None, where: str | None = None) -> None:
        self.message = message
        self.row = row
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)

    def __reduce__(self) -> tuple:  # across processes with its parts, not its joined message
        return (type(self), (self.message, self.row, self.where))

    def located(self, where: str | None) -> DataError:
        """The same error, saying where its row came from (``None``: where is not known)."""
        return DataError(self.message, None, where)


class UsageError(GobblinPyError):
    """The command line or a job configuration is wrong (exit code 2)."""

    exit_code = 2
    retryable = False


class CorruptFileError(GobblinPyError):
    """A file could not be decoded: it is truncated, corrupt or of an unsupported kind (exit code 2)."""

    exit_code = 2
    retryable = False

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
    retryable = False


class StateStoreUnavailable(TransientError):
    """The state store's server cannot be reached (a database down): the run fails (exit code 1) having changed
    nothing it cannot finish next time; a later run may succeed."""


class RecordsLost(GobblinPyError):
    """A task's or a dataset's record counts do not add up: records were lost (or invented) on the way."""


class NothingToPull(GobblinPyError):
    """A run found nothing at all to pull and its job asks for that to fail (``job.fail.on.empty``; exit code 4)."""

    exit_code = 4
