"""Waiting for a condition rather than for a time: a test goes on as soon as what it waits for has happened, and a
generous deadline only guards against a hang (so a busy machine slows a test down but never fails it)."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable

HANG_S = 30.0  # far beyond what any condition here takes on a busy machine: only a hang (a bug) reaches it


def wait_until(condition: Callable[[], object], what: str, seconds: float = HANG_S, poll_s: float = 0.005) -> None:
    """Return once ``condition()`` is true; fail naming ``what`` if it is still false after ``seconds``."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"still waiting after {seconds:g} s for {what}")
        time.sleep(poll_s)


class StderrWatch:
    """A process's stderr read line by line on a thread, so a test can wait for the log event that shows the
    process has reached a point (rather than sleep and hope it has), then have the whole of it."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc = proc
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._read, name="stderr-watch", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            with self._changed:
                self.lines.append(line)
                self._changed.notify_all()
        with self._changed:
            self.lines.append("")  # the end
            self._changed.notify_all()

    def wait_for(self, found: Callable[[str], bool], what: str, seconds: float = HANG_S) -> str:
        """The first line ``found`` accepts, once it has been written; fail naming ``what`` after ``seconds`` or
        when stderr ends without one."""
        deadline = time.monotonic() + seconds
        seen = 0
        with self._changed:
            while True:
                for line in self.lines[seen:]:
                    if line == "":
                        raise AssertionError(f"stderr ended without {what}: {''.join(self.lines)[-3000:]}")
                    if found(line):
                        return line
                seen = len(self.lines)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"still waiting after {seconds:g} s for {what}")
                self._changed.wait(left)

    def finish(self, seconds: float = 60) -> str:
        """All of stderr, once the process has exited (within ``seconds``)."""
        self.proc.wait(seconds)
        self._thread.join(seconds)
        return "".join(self.lines)
