"""Where the crash tests kill ``gpy run``: commit boundaries and the phases of a run. Inert unless their
environment variables are set (each mark then costs a dictionary lookup). Test hooks, not part of the plugin
SDK: they live in the io layer, below both the runtime and the connectors, so that a built-in connector's commit
step can mark a phase inside it (the Kafka writer marks the moment its messages are on the broker and not yet
committed) as the runtime marks its own.

- :func:`boundary` marks a commit step boundary. With ``GPY_TEST_CRASH_AT_BOUNDARY=n`` the process kills itself
  (SIGKILL, or the signal number in ``GPY_TEST_SIGNAL``) at the n-th boundary, writing ``<n> <name>`` to
  ``GPY_TEST_BOUNDARY_LOG`` first when that is set. With ``GPY_TEST_BOUNDARY_OF=<dataset>`` only that dataset's
  boundaries count (their names start ``<dataset>:``), so the n-th is the same boundary however parallel commits
  interleave.
- :func:`phase` marks a phase of a run — taking the lock, finishing an earlier run's commit, removing leftover
  files, planning, the tasks, the datasets' commits (``commit.datasets``) and each commit step in them. With ``GPY_TEST_PHASE_LOG=<file>`` every entry and exit is
  appended to the file (``enter|leave <name> <n> <seconds>``: the n-th time, a monotonic clock). With
  ``GPY_TEST_KILL_IN_PHASE=<name>:<n>:<delay>`` the process kills itself ``delay`` seconds after it enters
  phase ``name`` for the n-th time, or as that phase ends if it ends sooner: the kill always lands inside it.
  Just before, ``kill <name> <n> mid|end`` is appended to the phase log.

Either kill is what a crash, an out-of-memory kill or an operator's signal at that instant would be.
"""

from __future__ import annotations

import os
import threading
import time
from contextlib import nullcontext
from typing import Any

BOUNDARY_ENV = "GPY_TEST_CRASH_AT_BOUNDARY"
BOUNDARY_LOG_ENV = "GPY_TEST_BOUNDARY_LOG"
BOUNDARY_OF_ENV = "GPY_TEST_BOUNDARY_OF"
PHASE_LOG_ENV = "GPY_TEST_PHASE_LOG"
KILL_ENV = "GPY_TEST_KILL_IN_PHASE"
SIGNAL_ENV = "GPY_TEST_SIGNAL"

_boundaries_seen = 0
_NOTHING = nullcontext()


def _die() -> None:
    os.kill(os.getpid(), int(os.environ.get(SIGNAL_ENV, "9")))


def _append(path: str | None, line: str) -> None:
    if path:
        with open(path, "a") as out:
            out.write(line + "\n")


def boundary(name: str) -> None:
    """Mark a commit step boundary (see the module)."""
    global _boundaries_seen
    target = os.environ.get(BOUNDARY_ENV)
    if not target:
        return
    scope = os.environ.get(BOUNDARY_OF_ENV)
    if scope and not name.startswith(f"{scope}:"):
        return
    _boundaries_seen += 1
    if _boundaries_seen == int(target):
        _append(os.environ.get(BOUNDARY_LOG_ENV), f"{_boundaries_seen} {name}")
        _die()


def phase(name: str) -> Any:
    """A context manager around phase ``name`` of the run (see the module); a shared no-op when untested."""
    if KILL_ENV not in os.environ and PHASE_LOG_ENV not in os.environ:
        return _NOTHING
    return _Phase(name)


class _Phase:
    """One time a phase is entered. Phases nest, and run at once in several threads (parallel commits)."""

    _lock = threading.Lock()  # a kill and a phase's entry or exit never interleave
    _entered: dict[str, int] = {}

    def __init__(self, name: str) -> None:
        self.name = name
        self.count = 0
        self.armed = False
        self.active = False

    def __enter__(self) -> _Phase:
        with self._lock:
            self.count = self._entered[self.name] = self._entered.get(self.name, 0) + 1
            self.active = True
            self._log("enter")
            target, _, rest = os.environ.get(KILL_ENV, "").partition(":")
            occurrence, _, delay = rest.partition(":")
            if target == self.name and occurrence and int(occurrence) == self.count:
                self.armed = True
                timer = threading.Timer(float(delay or 0), self._fire)
                timer.daemon = True
                timer.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        with self._lock:
            self.active = False
            if self.armed:
                self._kill("end")
            self._log("leave")

    def _fire(self) -> None:
        with self._lock:
            if self.active:
                self._kill("mid")

    def _kill(self, where: str) -> None:
        self.armed = False
        _append(os.environ.get(PHASE_LOG_ENV), f"kill {self.name} {self.count} {where}")
        _die()

    def _log(self, event: str) -> None:
        _append(os.environ.get(PHASE_LOG_ENV), f"{event} {self.name} {self.count} {time.monotonic():.6f}")
