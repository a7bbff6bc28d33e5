"""Looking a file up and reading its end on S3 in one request each, where fsspec's general calls take two.

A commit of many datasets on an object store is bound by round trips, not bytes. s3fs's ``exists`` follows a
missing key with a listing (to tell a folder of that name), and reading a file through ``open`` first looks up
its size; here a lookup is one ``HEAD`` and the end of a file one ranged ``GET`` (``Range: bytes=-n``, which
the store answers with the whole object when it is shorter). Elsewhere (local disk, HDFS, GCS, Azure …) the
filesystem's own calls are used.
"""

from __future__ import annotations

from collections.abc import Iterator
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
    return files_exist(fs, [path])[0]


def files_exist(fs: AbstractFileSystem, paths: list[str]) -> list[bool]:
    """:func:`file_exists` of each path, in the order given. On S3 the lookups are in flight together, up to
    ``fs.s3a.threads.max`` at once, on s3fs's own event loop; the first error (other than a missing file) is
    raised once every lookup has ended."""
    if not _is_s3(fs):
        return [fs.exists(path) for path in paths]
    import asyncio

    from fsspec.asyn import sync

    from gobblin_py.io.fs_settings import request_threads

    async def look(gate: asyncio.Semaphore, path: str) -> bool:
        bucket, key, version = fs.split_path(path)
        async with gate:
            if not key:
                return bool(await fs._exists(path))
            try:
                await fs._call_s3("head_object", getattr(fs, "kwargs", {}), Bucket=bucket, Key=key,
                                  **({"VersionId": version} if version else {}))
            except FileNotFoundError:
                return False
            return True

    async def look_all() -> list[bool | BaseException]:
        gate = asyncio.Semaphore(request_threads())
        return await asyncio.gather(*(look(gate, path) for path in paths), return_exceptions=True)

    found = sync(fs.loop, look_all)
    for answer in found:
        if isinstance(answer, BaseException):
            raise answer
    return [bool(answer) for answer in found]


def read_tail(fs: AbstractFileSystem, path: str, size: int) -> bytes:
    """The last ``size`` bytes of the file ``path`` (all of it when it is shorter): on S3 one ranged ``GET``,
    without a lookup of its size first. FileNotFoundError when it is absent."""
    if _is_s3(fs):
        return fs.cat_file(path, start=-size)
    return fs.cat_file(path, start=max(0, int(fs.size(path) or 0) - size))


COPY_LIMIT = 5 << 30  # the largest object S3 copies in one request; a larger one is copied in parts


def move_file(fs: AbstractFileSystem, src: str, dst: str, size: int) -> None:
    """Move the file ``src`` of ``size`` bytes to ``dst``, replacing a file there. On S3 a copy of the object
    then a delete: two requests, where fsspec's ``mv`` first lists ``src`` (it might be a folder) and looks up
    its size. Elsewhere ``fs.mv``."""
    if not _is_s3(fs) or size > COPY_LIMIT:
        fs.mv(src, dst)
        return
    from fsspec.asyn import sync

    sync(fs.loop, fs._copy_basic, src, dst)
    fs.rm_file(src)


BULK_READ = 256  # files whose reads are in flight together; each batch is handed back before the next is read


def read_files(fs: AbstractFileSystem, paths: list[str]) -> Iterator[tuple[str, bytes | Exception]]:
    """Each file's bytes, or the error reading it (FileNotFoundError when it is absent), in the order given.
    On S3 each file is one ``GET`` (no lookup of its size first) and the reads of up to ``BULK_READ`` files are
    in flight together; elsewhere the files are read one after another."""
    if not _is_s3(fs):
        for path in paths:
            try:
                yield path, fs.cat_file(path)
            except Exception as exc:  # noqa: BLE001 - handed to the caller, as s3fs's bulk read does
                yield path, exc
        return
    for start in range(0, len(paths), BULK_READ):
        chunk = paths[start:start + BULK_READ]
        # a range from byte 0 to the end: one GET of the whole object, of whichever version is current then
        found = fs.cat_ranges(chunk, [0] * len(chunk), [None] * len(chunk), on_error="return")
        yield from zip(chunk, found, strict=True)
