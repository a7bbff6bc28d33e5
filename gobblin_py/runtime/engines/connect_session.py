"""One Spark Connect session per job and server, kept between runs.

A server starts a session's Python workers when its first task runs (seconds) and keeps them, per session, for
as long as it runs: a new session for every run of a scheduled job would pay that start every time and leave
the server one more idle Python process each time. So the runs of a job share one server-side session: its id is
kept in gpy's cache folder (``~/.cache/gobblin_py/connect-sessions``), the session stays open when a run ends,
and when the server has closed it (its idle timeout, an administrator) the next run starts a new one. The job
lock keeps two runs of a job from sharing it at once; a stopped run cancels only its own operations (tagged with
its job id). A server address that names its own ``session_id`` is used as it is.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from pathlib import Path

SESSION_PARAM = "session_id"
CLOSED = "INVALID_HANDLE.SESSION_CLOSED"  # the error a closed session's id gets from the server


def _folder() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "gobblin_py" / "connect-sessions"


def _record(remote: str, job_name: str) -> Path:
    return _folder() / hashlib.sha256(f"{remote}\n{job_name}".encode()).hexdigest()[:24]


def names_session(remote: str) -> bool:
    """Whether the address picks its session itself (``sc://host:port/;session_id=…``)."""
    return any(part.partition("=")[0].strip() == SESSION_PARAM for part in remote.split(";")[1:])


def session_url(remote: str, job_name: str, renew: bool = False) -> str:
    """``remote`` with the job's session id (a new one when ``renew`` or none is kept yet)."""
    if names_session(remote):
        return remote
    record = _record(remote, job_name)
    session = None
    if not renew:
        try:
            session = str(uuid.UUID(record.read_text().strip()))
        except (OSError, ValueError):
            session = None
    if session is None:
        session = str(uuid.uuid4())
        try:
            record.parent.mkdir(parents=True, exist_ok=True)
            temporary = record.with_name(f".{record.name}.{os.getpid()}")
            temporary.write_text(session + "\n")
            os.replace(temporary, record)
        except OSError:
            pass  # a read-only home: every run has a session of its own
    base = remote if "/" in remote[len("sc://"):] else remote + "/"
    return f"{base};{SESSION_PARAM}={session}"
