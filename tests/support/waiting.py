"""Waiting for a condition rather than for a time: a test goes on as soon as what it waits for has happened, and a
generous deadline only guards against a hang (so a busy machine slows a test down but never fails it)."""

from __future__ import annotations

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
