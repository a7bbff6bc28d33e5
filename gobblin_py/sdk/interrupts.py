"""Cancellation, as a plugin sees it: whether the run was asked to stop, and a wait that ends when it is.

A task calls :func:`check_cancelled` between batches (it raises :class:`TaskCancelled`) and waits with
:func:`pause` instead of ``time.sleep``, so that a SIGTERM or SIGINT stops it at once. The runtime owns the
signals (:mod:`gobblin_py.runtime.execute.signals`: what a signal stops and when, the exit codes) and marks the
process here as asked to stop.
"""

from __future__ import annotations

import threading

from gobblin_py.sdk.errors import GobblinPyError

_cancelled = threading.Event()


class TaskCancelled(GobblinPyError):
    """A task stopped because its run was interrupted."""


def cancelled() -> bool:
    """Whether this process was asked to stop."""
    return _cancelled.is_set()


def check_cancelled() -> None:
    """Raise :class:`TaskCancelled` when this process was asked to stop (tasks call it between batches)."""
    if _cancelled.is_set():
        raise TaskCancelled("the run was interrupted")


def pause(seconds: float) -> None:
    """Sleep, waking at once when the process is asked to stop (a retry's wait must not delay a shutdown)."""
    _cancelled.wait(seconds)


def mark_stopping() -> None:
    """Mark this process as asked to stop (the runtime's signal handler does, on SIGTERM or SIGINT)."""
    _cancelled.set()


def clear_stopping() -> None:
    """Forget an earlier request to stop (the runtime does, as a run starts handling signals)."""
    _cancelled.clear()
