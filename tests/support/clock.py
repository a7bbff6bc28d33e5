"""A clock a test moves by hand, for code that takes its clocks (or its sleep) as parameters."""

from __future__ import annotations


class FakeClock:
    """A monotonic clock and a wall clock that stand still until :meth:`advance` (or :meth:`sleep`) moves both."""

    def __init__(self, wall: float = 1_767_225_600.0) -> None:  # 2026-01-01T00:00:00Z
        self.now = 0.0
        self.epoch = wall
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def time(self) -> float:
        return self.epoch + self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds

    def sleep(self, seconds: float) -> None:
        """A sleep that returns at once, having moved the clock and noted how long it was asked for."""
        self.slept.append(seconds)
        self.advance(seconds)
