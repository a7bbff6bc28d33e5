"""Run one contender's command as a whole process: its wall time and the peak memory of its process tree.

Memory is the resident set of the process *and every descendant* (a Spark driver's JVM is a child of the
Python process; a pip-installed console script may start more), summed at each sample. Samples come every
``interval`` seconds from ``/proc``. The kernel's own high-water mark (``ru_maxrss`` from ``wait4``) is used
only for a process too short to be sampled: it is no floor, since a child's count starts from the resident set
of the harness it was forked from (hundreds of MB after generating the input data), not its own.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True)
class Sample:
    """What one run of one command cost."""

    seconds: float
    peak_bytes: int
    returncode: int


def _children_by_parent() -> dict[int, list[int]]:
    """Every live process's children, from ``/proc/<pid>/stat`` (field 4 is the parent's pid)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue  # it ended meanwhile
        # the command name (field 2) is in parentheses and may hold spaces: split after the last ')'
        fields = stat[stat.rfind(b")") + 2:].split()
        children.setdefault(int(fields[1]), []).append(int(entry))
    return children


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm", "rb") as handle:
            return int(handle.read().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return 0


def descendants(root: int) -> list[int]:
    """``root`` and every process below it, now."""
    children = _children_by_parent()
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def tree_rss(root: int) -> int:
    """The summed resident memory of ``root`` and all its descendants, now, in bytes."""
    return sum(map(_rss, descendants(root)))


class _Sampler(threading.Thread):
    """Samples a process tree's memory until stopped; keeps the highest sum seen.

    Listing every process costs a few milliseconds, so the tree is re-listed every ``rescan`` seconds and
    only its known members' ``statm`` (microseconds each) are read at every sample.
    """

    def __init__(self, pid: int, interval: float, rescan: float = 0.5) -> None:
        super().__init__(daemon=True)
        self.pid, self.interval, self.rescan, self.peak = pid, interval, rescan, 0
        self._done = threading.Event()

    def run(self) -> None:
        members, listed = [self.pid], 0.0
        while not self._done.is_set():
            now = time.monotonic()
            if now - listed >= self.rescan:
                members, listed = descendants(self.pid), now
            self.peak = max(self.peak, sum(map(_rss, members)))
            self._done.wait(self.interval)

    def stop(self) -> int:
        self._done.set()
        self.join()
        return self.peak


def measure(argv: Sequence[str], log: Path, env: Mapping[str, str] | None = None, cwd: Path | None = None,
            interval: float = 0.05, timeout: float | None = None) -> Sample:
    """Run ``argv`` to completion (stdout and stderr into ``log``) and return its time and peak memory.

    The clock runs from just before the process starts until ``wait4`` reaps it, so interpreter and JVM
    start-up and shutdown are included, as cron or an orchestrator would see them. A process still running
    after ``timeout`` seconds is killed with its whole process group (and reports exit code -9).
    """
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "wb") as out:
        started = time.perf_counter()
        process = subprocess.Popen(list(argv), stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   env={**os.environ, **(env or {})}, cwd=cwd, start_new_session=True)
        sampler = _Sampler(process.pid, interval)
        sampler.start()
        killer = threading.Timer(timeout, os.killpg, (process.pid, signal.SIGKILL)) if timeout else None
        if killer:
            killer.start()
        try:
            _, status, usage = os.wait4(process.pid, 0)
        finally:
            if killer:
                killer.cancel()
        seconds = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        sampled = sampler.stop()
    # ru_maxrss is in KiB on Linux; it includes the forked copy of the harness, so only a fallback
    return Sample(seconds, sampled or usage.ru_maxrss * 1024, process.returncode)
