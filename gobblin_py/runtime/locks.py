"""One run per job at a time: a lock file next to the job's state.

``<job.lock.dir>/<job.name>.lock`` (``job.lock.dir`` defaults to ``state.store.dir``) is created atomically
(``O_CREAT|O_EXCL`` on local disk) and holds the holder's host, pid, job id, start time and last refresh; a
background thread refreshes it every ``job.lock.refresh.seconds`` (default 30). A lock is stale — and taken
over — when its holder is a process of this host that is gone, or when it has not been refreshed for
``job.lock.timeout.seconds`` (default 300). A second run of a live job exits with code 75 (EX_TEMPFAIL:
"try again later") naming the holder.
"""

from __future__ import annotations

import json
import os
import posixpath
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any

from gobblin_py import fs as fsutil
from gobblin_py.config.errors import ConfigError
from gobblin_py.config.settings import Settings, same_as, setting
from gobblin_py.errors import GobblinPyError
from gobblin_py.state.store import StateStoreSettings

ENABLED_KEY = "job.lock.enabled"
DIR_KEY = "job.lock.dir"
TIMEOUT_KEY = "job.lock.timeout.seconds"
REFRESH_KEY = "job.lock.refresh.seconds"
EXIT_LOCKED = 75


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
    refresh_s: float = setting(REFRESH_KEY, default=30.0, minimum=0.05, doc="seconds between refreshes of a held lock")

    def check(self) -> list[ConfigError]:
        problems = []
        if self.enabled and not self.directory and not self.state_dir and not self.state_enabled:
            # (with a state store, its missing state.store.dir is the problem reported)
            problems.append(ConfigError("is not set", key=DIR_KEY, hint="name where the job's lock lives "
                                        f"(or set state.store.dir), or set {ENABLED_KEY}=false"))
        if self.refresh_s >= self.timeout_s:
            problems.append(ConfigError(f"{self.refresh_s:g} s is not shorter than {TIMEOUT_KEY} ({self.timeout_s:g} s)",
                                        key=REFRESH_KEY, hint="refresh the lock more often than it times out"))
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
    def parse(cls, data: bytes, path: str) -> "LockInfo":
        try:
            raw = json.loads(data.decode("utf-8"))
            return cls(raw["host"], int(raw["pid"]), raw.get("job_id", ""), float(raw["started"]),
                       float(raw["refreshed"]), raw.get("token", ""))
        except (ValueError, KeyError, TypeError) as exc:
            raise GobblinPyError(f"{path}: unreadable lock file ({exc}); remove it with `gpy lock break`") from None

    def to_bytes(self) -> bytes:
        return json.dumps(self.__dict__, separators=(",", ":")).encode("utf-8")

    def describe(self) -> str:
        started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.started))
        return f"{self.job_id or 'a run'} (pid {self.pid} on {self.host}, started {started}, refreshed {time.time() - self.refreshed:.0f} s ago)"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class JobLock:
    """The lock of one job; use as a context manager around the run."""

    def __init__(self, props: dict[str, str], job_name: str, job_id: str = "") -> None:
        settings = LockSettings.load({**props, ENABLED_KEY: "true"})
        directory = settings.directory or settings.state_dir
        self.fs, root = fsutil.open_fs(directory, settings.fs_uri or settings.state_fs_uri)
        self.path = posixpath.join(root, f"{job_name}.lock")
        self.display = self.path if fsutil.is_local(self.fs) else self.fs.unstrip_protocol(self.path)
        self.job_id = job_id
        self.timeout_s = settings.timeout_s
        self.refresh_s = settings.refresh_s
        self.info: LockInfo | None = None
        self.lost: str | None = None  # why the lock was lost while running, if it was
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------ inspection
    def holder(self) -> LockInfo | None:
        try:
            data = self.fs.cat_file(self.path)
        except FileNotFoundError:
            return None
        try:
            return LockInfo.parse(data, self.display)
        except GobblinPyError:
            # unreadable (an older gpy crashed mid-write?): a stale holder once the timeout has passed
            age = time.time() - self.fs.modified(self.path).timestamp()
            if age > self.timeout_s:
                return LockInfo("?", -1, "", 0.0, 0.0, "unreadable")
            raise

    def is_stale(self, info: LockInfo) -> bool:
        if info.host == socket.gethostname() and not _pid_alive(info.pid):
            return True
        return time.time() - info.refreshed > self.timeout_s

    # ------------------------------------------------------------ acquire / release
    def _create(self, info: LockInfo) -> bool:
        """Create the lock file with its content in one step (a crash never leaves an empty lock)."""
        self.fs.makedirs(posixpath.dirname(self.path), exist_ok=True)
        if fsutil.is_local(self.fs):
            tmp = f"{self.path}.{info.token}.tmp"
            fsutil.write_new_local(tmp, info.to_bytes())  # on a full disk: an error naming it, no file left
            try:
                os.link(tmp, self.path)  # fails if the lock exists: atomic create-if-absent
                fsutil.fsync_dir(posixpath.dirname(self.path))
                return True
            except FileExistsError:
                return False
            finally:
                os.unlink(tmp)
        # other filesystems: best effort (object stores have no create-if-absent through fsspec)
        if self.fs.exists(self.path):
            return False
        self.fs.pipe_file(self.path, info.to_bytes())
        return True

    def acquire(self) -> None:
        now = time.time()
        info = LockInfo(socket.gethostname(), os.getpid(), self.job_id, now, now, uuid.uuid4().hex)
        for _ in range(5):
            if self._create(info):
                self.info = info
                self._thread = threading.Thread(target=self._refresh_loop, name="gpy-lock-refresh", daemon=True)
                self._thread.start()
                return
            holder = self.holder()
            if holder is None:
                continue  # released between our create and our read: try again
            if not self.is_stale(holder):
                raise JobLockedError(f"{self.display}: the job is already running: {holder.describe()}")
            # a dead holder's lock: move it aside atomically, check it was that lock (not a fresh one another
            # taker just created), then retry the create
            aside = f"{self.path}.stale-{info.token}"
            try:
                self.fs.mv(self.path, aside)
            except FileNotFoundError:
                continue
            try:
                moved_token = LockInfo.parse(self.fs.cat_file(aside), aside).token
            except GobblinPyError:
                moved_token = "unreadable"
            if moved_token != holder.token:
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
            self.fs.rm(aside)
        raise JobLockedError(f"{self.display}: could not take the job lock (contended)")

    def _refresh_loop(self) -> None:
        while not self._stop.wait(self.refresh_s):
            assert self.info is not None
            try:
                current = self.holder()
                if current is None or current.token != self.info.token:
                    self.lost = "the lock was broken or taken over by another run"
                    return
                self.info.refreshed = time.time()
                fsutil.atomic_write(self.fs, self.path, self.info.to_bytes())
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
        """Remove the lock whoever holds it; returns what it said."""
        holder = self.holder()
        if holder is not None:
            fsutil.remove(self.fs, self.path)
        return holder

    def __enter__(self) -> "JobLock":
        self.acquire()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()
