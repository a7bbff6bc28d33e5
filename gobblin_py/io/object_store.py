"""Looking a file up and reading its end on S3 in one request each, where fsspec's general calls take two.

A commit of many datasets on an object store is bound by round trips, not bytes. s3fs's ``exists`` follows a
missing key with a listing (to tell a folder of that name), and reading a file through ``open`` first looks up
its size; here a lookup is one ``HEAD`` and the end of a file one ranged ``GET`` (``Range: bytes=-n``, which
the store answers with the whole object when it is shorter). Elsewhere (local disk, HDFS, GCS, Azure …) the
filesystem's own calls are used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem

S3_PROTOCOLS = frozenset({"s3", "s3a", "s3n"})


def _is_s3(fs: AbstractFileSystem) -> bool:
    protocols = (fs.protocol,) if isinstance(fs.protocol, str) else tuple(fs.protocol)
    return bool(S3_PROTOCOLS & set(protocols)) and hasattr(fs, "call_s3") and hasattr(fs, "split_path")


def file_exists(fs: AbstractFileSystem, path: str) -> bool:
    """Whether a file is at ``path``. On S3 one ``HEAD`` of the key: a folder of that name (other keys under
    ``path/``) is not a file, and does not stop one being written there. Elsewhere ``fs.exists``."""
    if not _is_s3(fs):
        return fs.exists(path)
    bucket, key, version = fs.split_path(path)
    if not key:
        return fs.exists(path)
    try:
        fs.call_s3("head_object", getattr(fs, "kwargs", {}), Bucket=bucket, Key=key,
                   **({"VersionId": version} if version else {}))
    except FileNotFoundError:
        return False
    return True


def read_tail(fs: AbstractFileSystem, path: str, size: int) -> bytes:
    """The last ``size`` bytes of the file ``path`` (all of it when it is shorter): on S3 one ranged ``GET``,
    without a lookup of its size first. FileNotFoundError when it is absent."""
    if _is_s3(fs):
        return fs.cat_file(path, start=-size)
    return fs.cat_file(path, start=max(0, int(fs.size(path) or 0) - size))
