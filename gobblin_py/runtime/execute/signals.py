"""Stopping a run on SIGTERM or SIGINT without leaving anything half done.

While a run plans and runs its tasks, a signal stops it at once: the main thread gets :class:`JobInterrupted`,
tasks of the local engine stop at their next batch (:func:`gobblin_py.sdk.interrupts.check_cancelled`), Spark jobs are cancelled, and
the launcher's ``finally`` blocks remove this run's task files and release the job lock. While it commits,
a signal lets the dataset commits under way finish (a commit is never left half done), starts no new one,
and then stops the run. The process exits with 128 + the signal number: 143 for SIGTERM, 130 for SIGINT.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from gobblin_py.sdk.errors import GobblinPyError
from gobblin_py.sdk.interrupts import cancelled, clear_stopping, mark_stopping

_state = {"deferred": False, "signum": 0, "active": False}
_NAMES: dict[int, str] = {signal.SIGTERM: "SIGTERM", signal.SIGINT: "SIGINT"}


class JobInterrupted(GobblinPyError):
    """The run was stopped by a signal; its exit code is 128 + the signal number."""

    def __init__(self, signum: int, detail: str = "", locked: bool = True) -> None:
        self.signum = signum
        self.exit_code = 128 + signum
        name = _NAMES.get(signum, f"signal {signum}")
        lock = "; the job lock is released" if locked else ""
        super().__init__(f"stopped by {name}: {detail or 'nothing of this run was committed'}{lock}")


def interrupted_by() -> int:
    """The signal that stopped the run (0 when none did)."""
    return _state["signum"]


def _not_py4j(record: logging.LogRecord) -> bool:
    return "py4j" not in record.pathname


def _handler(signum: int, frame: FrameType | None) -> None:
    # the run is ending: a call to Spark's JVM cut short here is expected, not an error for py4j to log (it
    # logs through its own loggers and, for this one, the root logger)
    logging.getLogger("py4j").setLevel(logging.CRITICAL + 1)
    logging.getLogger().addFilter(_not_py4j)
    first = not cancelled()
    _state["signum"] = _state["signum"] or signum
    mark_stopping()
    if first and not _state["deferred"]:
        raise JobInterrupted(signum)


def forget_signals() -> None:
    """Forget a stop an earlier run of this process was asked for (a run does, as it starts handling signals)."""
    clear_stopping()
    _state.update(deferred=False, signum=0)


@contextmanager
def handle_signals() -> Iterator[None]:
    """SIGTERM and SIGINT stop the run as the module says (only where signals can be handled: the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if _state["active"]:  # inside an outer block (``gpy run`` handles signals from loading the job file on)
        try:
            yield
        finally:
            _state["deferred"] = True  # the run is over: a signal now changes nothing it did
        return
    forget_signals()
    _state["active"] = True
    previous = {s: signal.signal(s, _handler) for s in _NAMES}
    try:
        yield
    finally:
        _state["active"] = False
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def reclaim_signals() -> None:
    """Put this module's handlers back where a library replaced them (PySpark installs its own for SIGINT)."""
    if _state["active"] and threading.current_thread() is threading.main_thread():
        for signum in _NAMES:
            signal.signal(signum, _handler)


@contextmanager
def shielded() -> Iterator[None]:
    """Inside, a signal only marks the run as interrupted (see :func:`cancelled`): what is under way finishes."""
    before = _state["deferred"]
    _state["deferred"] = True
    try:
        yield
    finally:
        _state["deferred"] = before


@contextmanager
def deferred(detail: str) -> Iterator[None]:
    """As :func:`shielded`, and a signal received inside stops the run when the block is done (``detail`` says
    what was finished)."""
    with shielded():
        yield
    raise_if_interrupted(detail)


def as_stop(exc: BaseException) -> JobInterrupted | None:
    """What ``exc`` means once the process was asked to stop: the :class:`JobInterrupted` to report instead (a
    library cut short by the signal raises its own error: py4j's ``Py4JError`` or a refused connection, or
    PySpark's ``KeyboardInterrupt``), or None when ``exc`` is an error of its own."""
    if isinstance(exc, JobInterrupted):
        return exc
    if isinstance(exc, KeyboardInterrupt) and _state["active"]:  # a SIGINT handler a library installed
        _state["signum"] = _state["signum"] or signal.SIGINT
        mark_stopping()
    if cancelled() and _state["signum"]:
        return JobInterrupted(_state["signum"])
    return None


def raise_if_interrupted(detail: str = "") -> None:
    """Raise :class:`JobInterrupted` when the process was asked to stop."""
    if cancelled() and _state["signum"]:
        raise JobInterrupted(_state["signum"], detail)
