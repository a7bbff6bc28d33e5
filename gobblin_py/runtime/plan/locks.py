"""One run per job at a time: a lock file next to the job's state.

``<job.lock.dir>/<job.name>.lock`` (``job.lock.dir`` defaults to ``state.store.dir``) is created atomically
and holds the holder's host, pid, job id, start time and last refresh; a background thread refreshes it every
``job.lock.refresh.seconds`` (default a third of the timeout, at most 30 s). A lock is stale — and taken over — when its holder is a process of
this host that is gone, or when it has not been refreshed for ``job.lock.timeout.seconds`` (default 300). A
second run of a live job exits with code 75 (EX_TEMPFAIL: "try again later") naming the holder.

How "atomically" is done depends on the filesystem (:mod:`gobblin_py.io.fs_conditional`): a hard link on local
disk; on S3 a conditional put (``If-None-Match: *``) creates the lock, and taking over a stale lock or
refreshing it replaces only the version that was read (``If-Match: <ETag>``); elsewhere a check, then a write.
Every taker reads the lock back before it counts as held, and a holder that finds another run's lock at a
refresh, or before committing, commits nothing: on a store that ignores conditional requests, two runs started
at the same instant may both pass the start, but only one commits.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any

from gobblin_py.io import fs as fsutil
from gobblin_py.io import fs_conditional as conditional
from gobblin_py.io.contained_paths import contained_join
from gobblin_py.io.processes import host_name, pid_alive
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.errors import CorruptFileError, GobblinPyError
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.settings import Settings, same_as, setting
from gobblin_py.store.folders import require_folder
from gobblin_py.store.store import StateStoreSettings

ENABLED_KEY = "job.lock.enabled"
DIR_KEY = "job.lock.dir"
TIMEOUT_KEY = "job.lock.timeout.seconds"
REFRESH_KEY = "job.lock.refresh.seconds"
EXIT_LOCKED = 75

log = get_logger(__name__)


@dataclass(frozen=True)
class LockSettings(Settings):
    """The keys of the job lock."""

    enabled: bool = setting(ENABLED_KEY, default=True, doc="false: runs of the job may overlap")
    directory: str | None = setting(DIR_KEY, default_doc="state.store.dir", doc="folder of <job.name>.lock")
    state_dir: str | None = same_as(StateStoreSettings, "root")
    fs_uri: str | None = setting("fs.uri", doc="filesystem of a bare job.lock.dir")
    state_fs_uri: str | None = same_as(StateStoreSettings, "fs_uri")
    state_enabled: bool = same_as(StateStoreSettings, "enabled")
    timeout_s: float = setting(TIMEOUT_KEY, default=300.0, minimum=1, doc="a lock not refreshed this long is stale")
    refresh_s: float | None = setting(REFRESH_KEY, minimum=0.05, default_doc=f"{TIMEOUT_KEY} / 3, at most 30",
                                      doc="seconds between refreshes of a held lock")

    @property
    def refresh_interval(self) -> float:
        """Seconds between refreshes: the key's value, else a third of the timeout (at most 30 s)."""
        return self.refresh_s if self.refresh_s is not None else min(self.timeout_s / 3, 30.0)

    def check(self) -> list[ConfigError]:
        problems = []
        if self.enabled and not self.directory and not self.state_dir and not self.state_enabled:
            # (with a state store, its missing state.store.dir is the problem reported)
            problems.append(ConfigError("is not set", key=DIR_KEY, hint="name where the job's lock lives "
                                        f"(or set state.store.dir), or set {ENABLED_KEY}=false"))
        if self.refresh_s is not None and self.refresh_s >= self.timeout_s:
            problems.append(ConfigError(f"{self.refresh_s:g} s is not shorter than {TIMEOUT_KEY} ({self.timeout_s:g} s)",
                                        key=REFRESH_KEY, hint=f"refresh the lock more often than it times out, or leave "
                                        f"{REFRESH_KEY} unset (a third of {TIMEOUT_KEY}, at most 30 s)"))
        return problems


class JobLockedError(GobblinPyError):
    """Another live run of the job holds its lock."""

    exit_code = EXIT_LOCKED


@dataclass
class LockInfo:
    """What a lock file says about its holder."""

    host: str
    pid: int
    job_id: str
    started: float
    refreshed: float
    token: str

    @classmethod
    def parse(cls, data: bytes, path: str) -> LockInfo:
        try:
            raw = json.loads(data.decode("utf-8"))
            return cls(raw["host"], int(raw["pid"]), raw.get("job_id", ""), float(raw["started"]),
                       float(raw["refreshed"]), raw.get("token", ""))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise CorruptFileError(path, f"unreadable lock file ({exc}); remove it with `gpy lock break`") from None

    def to_bytes(self) -> bytes:
        return json.dumps(self.__dict__, separators=(",", ":")).encode("utf-8")

    def describe(self) -> str:
        started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.started))
        return f"{self.job_id or 'a run'} (pid {self.pid} on {self.host}, started {started}, refreshed {time.time() - self.refreshed:.0f} s ago)"


_TAKER_FILE = re.compile(r"\.(?P<host>.+)-(?P<pid>\d+)\.[0-9a-f]+\.(new|stale)")


class JobLock:
    """The lock of one job; use as a context manager around the run."""

    def __init__(self, props: dict[str, str], job_name: str, job_id: str = "") -> None:
        settings = LockSettings.load({**props, ENABLED_KEY: "true"})
        directory = settings.directory or settings.state_dir
        if not directory:  # (a run has already refused the state store's missing state.store.dir)
            raise ConfigError("is not set", key=DIR_KEY, hint="name where the job's lock lives (or set state.store.dir), "
                              f"or set {ENABLED_KEY}=false")
        self.fs, root = fsutil.open_fs(directory, settings.fs_uri or settings.state_fs_uri)
        require_folder(self.fs, root, DIR_KEY if settings.directory else "state.store.dir")
        self.path = contained_join(root, f"{job_name}.lock", what="job.name")
        self.display = self.path if fsutil.is_local(self.fs) else self.fs.unstrip_protocol(self.path)
        self.job_id = job_id
        self.timeout_s = settings.timeout_s
        self.refresh_s = settings.refresh_interval
        self.info: LockInfo | None = None
        self.lost: str | None = None  # why the lock was lost while running, if it was
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------ inspection
    def holder(self) -> LockInfo | None:
        """What the lock file says, or None when there is none."""
        return self._read()[0]

    def _read(self) -> tuple[LockInfo | None, str | None]:
        """The holder and the version of the lock file read (an ETag where the store has conditional writes)."""
        try:
            data, version = conditional.read_versioned(self.fs, self.path)
        except FileNotFoundError:
            return None, None
        try:
            return LockInfo.parse(data, self.display), version
        except CorruptFileError:
            # unreadable (an older gpy crashed mid-write?): a stale holder once the timeout has passed
            age = time.time() - self.fs.modified(self.path).timestamp()
            if age > self.timeout_s:
                return LockInfo("?", -1, "", 0.0, 0.0, "unreadable"), version
            raise

    def is_stale(self, info: LockInfo) -> bool:
        if info.host == host_name() and not pid_alive(info.pid):
            return True
        return time.time() - info.refreshed > self.timeout_s

    # ------------------------------------------------------------ acquire / release
    def _create(self, info: LockInfo) -> bool:
        """Create the lock file with its content in one step (a crash never leaves an empty lock)."""
        return conditional.create_if_absent(self.fs, self.path, info.to_bytes())

    def _ours(self, info: LockInfo) -> bool:
        """Read the lock back: a store that ignores conditional writes lets the last writer win."""
        current = self.holder()
        return current is not None and current.token == info.token

    def acquire(self) -> None:
        now = time.time()
        info = LockInfo(host_name(), os.getpid(), self.job_id, now, now, uuid.uuid4().hex)
        for _ in range(5):
            if self._create(info):
                if self._ours(info):
                    self._held(info)
                    return
                continue  # another run wrote over it at the same instant: look at who holds it now
            holder, version = self._read()
            if holder is None:
                continue  # released between our create and our read: try again
            if not self.is_stale(holder):
                raise JobLockedError(f"{self.display}: the job is already running: {holder.describe()}")
            if version is not None:
                # a dead holder's lock, replaced only if it is still the version read (compare-and-swap)
                if conditional.replace_if_version(self.fs, self.path, info.to_bytes(), version) and self._ours(info):
                    log.info("stale_lock_taken_over", lock=self.display, holder=holder.describe())
                    self._held(info)
                    return
                continue
            self._move_aside(holder, info)
        raise JobLockedError(f"{self.display}: could not take the job lock (contended)")

    def _move_aside(self, holder: LockInfo, info: LockInfo) -> None:
        """Remove a dead holder's lock where there is no compare-and-swap: move it aside (a rename on local
        disk and HDFS), check it was that lock (not a fresh one another taker just created), put back any other."""
        aside = f"{self.path}.{conditional.owner_tag()}.{info.token}.stale"
        try:
            self.fs.mv(self.path, aside)
        except FileNotFoundError:
            return
        try:
            moved_token = LockInfo.parse(self.fs.cat_file(aside), aside).token
        except CorruptFileError:
            moved_token = "unreadable"
        if moved_token == holder.token:
            self.fs.rm(aside)
            log.info("stale_lock_taken_over", lock=self.display, holder=holder.describe())
            return
        try:  # someone else's fresh lock: put it back unless yet another lock is there now
            if fsutil.is_local(self.fs):
                os.link(aside, self.path)
            else:
                self.fs.mv(aside, self.path)
        except FileExistsError:
            pass
        finally:
            if self.fs.exists(aside):
                self.fs.rm(aside)
        raise JobLockedError(f"{self.display}: another run took the stale lock first")

    def _held(self, info: LockInfo) -> None:
        self.info = info
        self._remove_leftovers()
        self._thread = threading.Thread(target=self._refresh_loop, name="gpy-lock-refresh", daemon=True)
        self._thread.start()

    def _remove_leftovers(self) -> None:
        """Delete the files runs killed while taking or refreshing this lock left beside it: the temporary copy
        of a create or a refresh, a stale lock moved aside. A taker's files (``<lock>.<host>-<pid>.<hex>.new``
        or ``.stale``) only once its process is gone — this host's; a refresh's (``_tmp_<lock>.<hex>``) always,
        since only the holder refreshes."""
        directory, name = posixpath.split(self.path)
        try:
            paths = self.fs.ls(directory, detail=False)
            for path in paths:
                entry = posixpath.basename(str(path).rstrip("/"))
                taker = _TAKER_FILE.fullmatch(entry[len(name):]) if entry.startswith(f"{name}.") else None
                dead = taker is not None and taker["host"] == host_name() and not pid_alive(int(taker["pid"]))
                if dead or entry.startswith(f"{fsutil.TEMP_PREFIX}{name}."):
                    self.fs.rm(path)
                    log.info("lock_leftover_removed", file=entry)
        except OSError as exc:  # housekeeping never costs the run its lock
            log.warning("lock_leftovers_not_removed", lock=self.display, error=str(exc))

    def _refresh_loop(self) -> None:
        while not self._stop.wait(self.refresh_s):
            assert self.info is not None
            try:
                current, version = self._read()
                if current is None or current.token != self.info.token:
                    self.lost = "the lock was broken or taken over by another run"
                    return
                self.info.refreshed = time.time()
                data = self.info.to_bytes()
                if version is None:
                    fsutil.atomic_write(self.fs, self.path, data)
                elif not conditional.replace_if_version(self.fs, self.path, data, version):
                    self.lost = "the lock was broken or taken over by another run"
                    return
            except Exception as exc:  # noqa: BLE001 - keep trying until the timeout; report if it passes
                if time.time() - self.info.refreshed > self.timeout_s:
                    self.lost = f"the lock could not be refreshed for {self.timeout_s:.0f} s ({exc})"
                    return

    def ensure_held(self) -> None:
        """Raise unless this run still holds the lock (checked before anything is committed)."""
        if self.info is None:
            return
        if self.lost is None:
            current = self.holder()
            if current is None or current.token != self.info.token:
                self.lost = "the lock was broken or taken over by another run"
        if self.lost is not None:
            raise JobLockedError(f"{self.display}: {self.lost}; nothing more is committed by this run")

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()  # a refresh in flight must not bring the removed lock back
        if self.info is None:
            return
        current = self.holder()
        if current is not None and current.token == self.info.token:
            fsutil.remove(self.fs, self.path)
        self.info = None

    def break_lock(self) -> LockInfo | None:
        """Remove the lock whoever holds it, an unreadable one too; returns what it said."""
        try:
            holder = self.holder()
        except CorruptFileError:
            holder = LockInfo("?", -1, "", 0.0, 0.0, "unreadable")
        if holder is not None:
            fsutil.remove(self.fs, self.path)
        return holder

    def __enter__(self) -> JobLock:
        self.acquire()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()
