"""Create-if-absent and compare-and-swap writes of small files, on the filesystems that have them.

- Local disk: a new file is written beside the target and hard-linked to it (``link`` fails when the target
  exists): atomic.
- S3 (and S3-compatible stores that honour conditional requests): ``PUT`` with ``If-None-Match: *`` creates
  only if absent; ``PUT`` with ``If-Match: <ETag>`` replaces only the version that was read. A store that
  rejects the headers as not implemented is written without them (and :func:`conditional_writes` then says
  so); on a store that ignores them the create is still preceded by a check, and callers read back what they
  wrote.
- Any other filesystem: check, then write (not atomic: two writers at the same instant can both succeed).
"""

from __future__ import annotations

import os
import posixpath
import socket
import uuid
from typing import TYPE_CHECKING, Any

from gobblin_py.io import fs as fsutil
from gobblin_py.sdk.logs import get_logger

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem

log = get_logger(__name__)

S3_PROTOCOLS = frozenset({"s3", "s3a", "s3n"})
_PRECONDITION_CODES = ("PreconditionFailed", "ConditionalRequestConflict")
_unsupported: set[str] = set()  # stores (by endpoint) that answered a conditional write "not implemented"


def _protocols(fs: AbstractFileSystem) -> tuple[str, ...]:
    return (fs.protocol,) if isinstance(fs.protocol, str) else tuple(fs.protocol)


def _store_id(fs: AbstractFileSystem) -> str:
    client = getattr(fs, "client_kwargs", None) or {}
    return f"{_protocols(fs)[0]}:{client.get('endpoint_url', '')}"


def conditional_writes(fs: AbstractFileSystem) -> bool:
    """Whether create-if-absent and compare-and-swap are atomic on ``fs`` (local disk, S3 that honours them)."""
    if fsutil.is_local(fs):
        return True
    return bool(S3_PROTOCOLS & set(_protocols(fs))) and _store_id(fs) not in _unsupported


def _error_code(exc: BaseException) -> str:
    cause = exc.__cause__ or exc.__context__
    response = getattr(cause, "response", None) or getattr(exc, "response", None) or {}
    return str(response.get("Error", {}).get("Code", "")) if isinstance(response, dict) else ""


def _not_implemented(fs: AbstractFileSystem, exc: BaseException) -> bool:
    if _error_code(exc) in ("NotImplemented", "NotImplementedError") or isinstance(exc, NotImplementedError):
        if _store_id(fs) not in _unsupported:
            _unsupported.add(_store_id(fs))
            log.warning("conditional_writes_unsupported", store=_store_id(fs),
                        note="the store refuses If-None-Match/If-Match: the job lock is best effort there")
        return True
    return False


def is_precondition_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is an object store refusing a conditional write (HTTP 412, or 409 for a concurrent one)."""
    return _error_code(exc) in _PRECONDITION_CODES


def owner_tag() -> str:
    """``<host>-<pid>``: names a temporary file after the process writing it, so that once that process is gone
    another can tell the file is a leftover (a crash between writing and removing it)."""
    return f"{socket.gethostname()}-{os.getpid()}"


def create_if_absent(fs: AbstractFileSystem, path: str, data: bytes) -> bool:
    """Write ``data`` to ``path`` unless a file is there; False when one is. Atomic where
    :func:`conditional_writes` says so; elsewhere a check, then a write."""
    if fsutil.is_local(fs):
        fsutil.makedirs(fs, posixpath.dirname(path))
        tmp = f"{path}.{owner_tag()}.{uuid.uuid4().hex}.new"
        fsutil.write_new_local(tmp, data)  # on a full disk: an error naming it, no file left
        try:
            os.link(tmp, path)  # fails if the target exists: atomic create-if-absent
        except FileExistsError:
            return False
        finally:
            os.unlink(tmp)
        fsutil.fsync_dir(posixpath.dirname(path))
        return True
    if conditional_writes(fs):
        if fs.exists(path):  # where a store ignores If-None-Match, this keeps it a check-then-write
            return False
        try:
            fs.pipe_file(path, data, mode="create")
            return True
        except FileExistsError:
            return False
        except OSError as exc:
            if is_precondition_failure(exc):
                return False
            if not _not_implemented(fs, exc):
                raise
    fsutil.makedirs(fs, posixpath.dirname(path))
    if fs.exists(path):
        return False
    fs.pipe_file(path, data)
    return True


def read_versioned(fs: AbstractFileSystem, path: str) -> tuple[bytes, str | None]:
    """The bytes of ``path`` and the version they are (an S3 ETag; None where versions are not known).

    FileNotFoundError when it is absent.
    """
    if conditional_writes(fs) and not fsutil.is_local(fs):
        def read() -> tuple[bytes, str | None]:
            with fs.open(path, "rb") as stream:  # s3fs reads the object with If-Match of the ETag it found
                data = stream.read()
                details: Any = getattr(stream, "details", None) or {}
                return data, details.get("ETag")

        return fsutil.read_whole_version(fs, path, read)  # a lock holder may refresh it meanwhile
    return fs.cat_file(path), None


def replace_if_version(fs: AbstractFileSystem, path: str, data: bytes, version: str) -> bool:
    """Replace ``path`` with ``data`` only if it is still ``version`` (from :func:`read_versioned`); False if it
    changed or is gone. Only where :func:`conditional_writes` holds and a version was read."""
    try:
        fs.pipe_file(path, data, IfMatch=version)
        return True
    except FileNotFoundError:
        return False
    except OSError as exc:
        if is_precondition_failure(exc):
            return False
        if _not_implemented(fs, exc):
            fs.pipe_file(path, data)
            return True
        raise
