"""Group commit on local disk: the fsyncs of a whole commit batch made as one flush of the filesystem.

A dataset's commit on local disk is a few small writes, links and renames, and each must be durable before the
next may take effect: a temporary state file before it is renamed over the current one, a published file's
new link before its source is unlinked. Made one at a time that is an fsync or two per dataset. Inside
:meth:`GroupSync.active` the writes only note what must become durable and queue what must wait for it;
:meth:`GroupSync.flush` then makes everything noted durable at once, runs the queued actions in order and
makes their effects durable too. The order each commit needs is kept, so a crash (or a power cut) at any
instant leaves what a crash between two single fsyncs would: the batch's log, still on disk until the flush
has returned, finishes every commit on the next run.

"At once" is ``syncfs`` (Linux): one call per filesystem, whose cost follows the data waiting to be written.
With much unwritten data in the page cache (another job's, or big files this run wrote) or without ``syncfs``,
the flush falls back to one fsync per noted file and folder, as without grouping.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

MAX_DIRTY_BYTES = 256 << 20  # unwritten page cache (machine-wide) above which fsyncing file by file is cheaper

_current: ContextVar[GroupSync | None] = ContextVar("gpy_group_sync", default=None)


def current() -> GroupSync | None:
    """The group the calling thread's writes join, or None (every write is made durable on its own)."""
    return _current.get()


class GroupSync:
    """Fsyncs put off to one flush, and the actions that must wait for them, by owner (a dataset's commit)."""

    def __init__(self) -> None:
        self._noted: list[str] = []
        self._queued: list[tuple[Any, Callable[[], None], str]] = []
        self._owner: Any = None

    @contextmanager
    def active(self) -> Iterator[GroupSync]:
        """Inside, this thread's grouped writes join this group (they are not durable until :meth:`flush`)."""
        token = _current.set(self)
        try:
            yield self
        finally:
            _current.reset(token)

    @contextmanager
    def owned_by(self, owner: Any) -> Iterator[None]:
        """What is queued inside belongs to ``owner``: a failure stops only that owner's later actions."""
        before, self._owner = self._owner, owner
        try:
            yield
        finally:
            self._owner = before

    def note(self, path: str) -> None:
        """``path`` (a file written or a folder linked into) must be durable before any queued action runs."""
        self._noted.append(path)

    def then(self, action: Callable[[], None], folder: str) -> None:
        """Run ``action`` once everything noted so far is durable; it changes ``folder``, synced after it."""
        self._queued.append((self._owner, action, folder))

    def discard(self, owner: Any) -> None:
        """Forget ``owner``'s queued actions (its commit failed: it stays logged for the next run)."""
        self._queued = [q for q in self._queued if q[0] is not owner]

    def flush(self, after_action: Callable[[], None] = lambda: None) -> list[tuple[Any, BaseException]]:
        """Make the noted paths durable, run the queued actions in order (calling ``after_action`` after each),
        make their folders durable. Returns the owners whose action failed, each with its error (their later
        actions did not run); when a sync fails, every owner that queued anything fails with it."""
        queued, self._queued = self._queued, []
        noted, self._noted = self._noted, []
        if not queued and not noted:
            return []
        owners = {id(owner): owner for owner, _, _ in queued}
        try:
            sync_paths(noted)
        except OSError as exc:
            return [(owner, exc) for owner in owners.values()]
        failed: dict[int, BaseException] = {}
        touched: list[str] = []
        for owner, action, folder in queued:
            if id(owner) in failed:
                continue
            try:
                action()
            except Exception as exc:  # noqa: BLE001 - reported per owner; the others go on
                failed[id(owner)] = exc
            touched.append(folder)
            after_action()
        try:
            sync_paths(touched)
        except OSError as exc:
            return [(owner, exc) for owner in owners.values()]
        return [(owners[key], exc) for key, exc in failed.items()]


def sync_paths(paths: list[str]) -> None:
    """Make every path in ``paths`` (files and folders) durable: one ``syncfs`` per filesystem where that is
    cheap, else one fsync each. A path that is gone has nothing left to make durable."""
    if not paths:
        return
    distinct = list(dict.fromkeys(paths))
    if _syncfs is not None and _dirty_bytes() <= MAX_DIRTY_BYTES:
        devices: dict[int, str] = {}
        for path in distinct:
            try:
                devices.setdefault(os.stat(path).st_dev, path)
            except FileNotFoundError:
                continue
        for path in devices.values():
            _fsync_or_syncfs(path, whole_filesystem=True)
        return
    for path in distinct:
        _fsync_or_syncfs(path, whole_filesystem=False)


def _fsync_or_syncfs(path: str, whole_filesystem: bool) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        if whole_filesystem:
            if _syncfs(fd) != 0:  # type: ignore[misc]
                code = ctypes.get_errno()
                raise OSError(code, os.strerror(code), path)
            return
        try:
            os.fsync(fd)
        except OSError:
            if not os.path.isdir(path):
                raise  # a folder some filesystems cannot fsync is let go, as a lone folder fsync does
    finally:
        os.close(fd)


def _dirty_bytes() -> int:
    """Page cache waiting to be written, machine-wide (an upper bound for one filesystem's)."""
    try:
        with open("/proc/meminfo", "rb") as meminfo:
            for line in meminfo:
                if line.startswith(b"Dirty:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return MAX_DIRTY_BYTES + 1


def _load_syncfs() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int]
    function.restype = ctypes.c_int
    return function


_syncfs = _load_syncfs()
