"""Reading the end of a file on S3 in one request, where fsspec's general calls take two.

A commit of many datasets on an object store is bound by round trips, not bytes. Reading a file through ``open``
first looks up its size; here the end of a file is one ranged ``GET`` (``Range: bytes=-n``, which the store
answers with the whole object when it is shorter). Elsewhere (local disk, HDFS, GCS, Azure …) the filesystem's
own calls are used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem

S3_PROTOCOLS = frozenset({"s3", "s3a", "s3n"})


def _is_s3(fs: AbstractFileSystem) -> bool:
    protocols = (fs.protocol,) if isinstance(fs.protocol, str) else tuple(fs.protocol)
    return bool(S3_PROTOCOLS & set(protocols)) and hasattr(fs, "call_s3") and hasattr(fs, "split_path")


def read_tail(fs: AbstractFileSystem, path: str, size: int) -> bytes:
    """The last ``size`` bytes of the file ``path`` (all of it when it is shorter): on S3 one ranged ``GET``,
    without a lookup of its size first. FileNotFoundError when it is absent."""
    if _is_s3(fs):
        return fs.cat_file(path, start=-size)
    return fs.cat_file(path, start=max(0, int(fs.size(path) or 0) - size))
