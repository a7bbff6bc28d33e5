"""Filesystem access through fsspec, with the one atomic-save helper every state file goes through.

Local URLs get :class:`gobblin_py.io.local_fs.LocalFileSystem`, fsspec's local interface without importing fsspec;
every other filesystem is fsspec's, with the job's settings (``fs_settings``) installed before its first use.

Local disk: write a temporary sibling, fsync it, delete any Hadoop ``.crc`` sidecar of the target, rename over
the target (``os.replace`` is atomic), fsync the directory. Object stores (S3, GCS, Azure, memory): a single
object put is already atomic, so the bytes go straight to the final key. Other filesystems (HDFS): temporary
sibling, then rename; HDFS cannot rename over a file, so the old one is removed just before.
"""

from __future__ import annotations

import errno
import os
import posixpath
import shutil
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from gobblin_py.io import group_sync
from gobblin_py.io.fs_settings import configured_fsspec, local_options_configured
from gobblin_py.io.local_fs import LocalFileSystem
from gobblin_py.sdk.errors import UsageError

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem

_LOCAL = LocalFileSystem()
OBJECT_STORE_PROTOCOLS = {"s3", "s3a", "s3n", "gs", "gcs", "abfs", "abfss", "az", "adl", "memory"}


def open_fs(url: str, fs_uri: str | None = None, storage_options: dict[str, Any] | None = None) -> tuple[AbstractFileSystem, str]:
    """The filesystem and path for ``url``; a bare path is taken on ``fs_uri`` (default: local disk)."""
    if "://" not in url and fs_uri and not fs_uri.startswith("file:"):
        base = fs_uri if fs_uri.endswith("://") else fs_uri.rstrip("/") + "/"
        url = base + url.lstrip("/")
    if "://" not in url:
        url = os.path.abspath(url)
    if url.startswith(("/", "file://", "local://")) and not storage_options and "::" not in url \
            and not local_options_configured():  # "::" would chain filesystems
        return _LOCAL, LocalFileSystem._strip_protocol(url)
    try:
        fs, path = configured_fsspec().core.url_to_fs(url, **(storage_options or {}))
    except ImportError as exc:  # fsspec names the package: "Install s3fs to access S3"
        hint = " (pip install 'gobblin_py[s3]')" if url.startswith(("s3://", "s3a://", "s3n://")) else ""
        raise UsageError(f"{url}: {str(exc).rstrip('.')}{hint}") from None
    except OSError as exc:
        if url.startswith(("hdfs://", "viewfs://")):  # pyarrow lists every libjvm it tried: say it in one line
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise UsageError(f"{url}: cannot start the HDFS client ({first}); set JAVA_HOME, HADOOP_HOME and "
                             "CLASSPATH=$(hadoop classpath --glob) (docs: guides/filesystems.md, HDFS)") from None
        raise
    return fs, path


def is_local_url(url: str, fs_uri: str | None = None) -> bool:
    """Whether ``url`` (a bare path taken on ``fs_uri``, as :func:`open_fs` takes it) is on local disk, without
    opening its filesystem."""
    if "://" not in url and fs_uri and not fs_uri.startswith("file:"):
        return False
    return "://" not in url or url.startswith(("file://", "local://"))


def is_local(fs: AbstractFileSystem) -> bool:
    protocols = (fs.protocol,) if isinstance(fs.protocol, str) else tuple(fs.protocol)
    return "file" in protocols or "local" in protocols


FileIdentity = tuple[int, int, int, int]  # a local file's device, inode, size and modification time (ns)


def local_identity(path: str) -> FileIdentity | None:
    """The identity of a local file (None when it is not there): a file with the same identity later is the same
    file, unchanged, as far as its metadata can tell (a hard link to it has its identity)."""
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return None
    return found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns


def is_object_store(fs: AbstractFileSystem) -> bool:
    """Whether ``fs`` keeps objects under keys (S3, GCS, Azure, memory): no folders, no renames."""
    protocols = (fs.protocol,) if isinstance(fs.protocol, str) else tuple(fs.protocol)
    return any(p in OBJECT_STORE_PROTOCOLS for p in protocols)


def crc_sidecar(path: str) -> str:
    """Hadoop's local checksum file for ``path``: ``.<name>.crc`` beside it."""
    parent, name = posixpath.split(path)
    return posixpath.join(parent, f".{name}.crc")


def _drop_crc(fs: AbstractFileSystem, path: str) -> None:
    # A stale sidecar makes Hadoop readers fail with ChecksumException; a missing one is fine.
    if is_local(fs):
        crc = crc_sidecar(path)
        # looking first: a lookup takes no lock, while unlink locks the folder against its other writers even
        # when there is nothing to remove (the usual case)
        if os.path.lexists(crc):
            try:
                os.unlink(crc)
            except FileNotFoundError:
                pass


def fsync_dir(path: str) -> None:
    """Make a rename or link in ``path`` durable (local disk; a no-op where directories cannot be opened)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def durable_folder(path: str) -> None:
    """Make a link or rename in local folder ``path`` durable: now, or with the commit batch's group sync."""
    group = group_sync.current()
    if group is not None:
        group.note(path)
    else:
        fsync_dir(path)


def after_durable(action: Callable[[], None], folder: str) -> None:
    """Run ``action`` (which changes local ``folder``) once what was written before it is durable: now when
    each write was synced on its own, else at the commit batch's group sync, which then syncs ``folder``."""
    group = group_sync.current()
    if group is not None:
        group.then(action, folder)
    else:
        action()


def makedirs(fs: AbstractFileSystem, path: str) -> None:
    """Make the folder ``path`` and its parents. Object stores have no folders: nothing is done there (a missing
    bucket then fails the first write, naming it, instead of being created)."""
    if not is_object_store(fs):
        fs.makedirs(path, exist_ok=True)


T = TypeVar("T")
REREADS = 20  # reads of an object that keeps being replaced while it is read


def read_whole_version(fs: AbstractFileSystem, path: str, read: Callable[[], T]) -> T:
    """``read()`` (which opens and reads ``path``), again when the object was replaced while it was being read.

    s3fs looks an object up, then fetches it on condition that it is still the version it found; a writer
    replacing it in between (a lock holder's refresh, a commit saving a dataset's ``current`` state) makes the
    fetch fail with EBUSY. Reading the new version is then the right answer: it is what a reader a moment later
    would see. A missing file is still FileNotFoundError.
    """
    for attempt in range(1, REREADS + 1):
        try:
            return read()
        except OSError as exc:
            if exc.errno != errno.EBUSY or isinstance(exc, FileNotFoundError) or attempt == REREADS:
                raise
            fs.invalidate_cache(path)
    raise AssertionError("unreachable")


TEMP_PREFIX = "_tmp_"


def temporary_path(path: str) -> str:
    """A fresh temporary name beside ``path`` (``_tmp_<name>.<hex>``): hidden from listings, and removed by
    :func:`remove_temporary_files` when a killed writer left it."""
    parent, name = posixpath.split(path)
    return posixpath.join(parent, f"{TEMP_PREFIX}{name}.{uuid.uuid4().hex}")


def atomic_write(fs: AbstractFileSystem, path: str, data: bytes) -> None:
    """Replace ``path`` with ``data`` so that readers see either the old file whole or the new one whole."""
    parent = posixpath.dirname(path)
    makedirs(fs, parent)
    if is_object_store(fs):
        fs.pipe_file(path, data)
        return
    if is_local(fs):
        atomic_write_all(fs, [(path, data)])
        return
    tmp = temporary_path(path)
    with fs.open(tmp, "wb") as out:
        out.write(data)
    if fs.exists(path):
        fs.rm(path)
    fs.mv(tmp, path)


def remove_temporary_files(fs: AbstractFileSystem, directory: str) -> list[str]:
    """Delete the temporary files (``_tmp_<name>.<hex>``) that writers killed mid-write left in ``directory``;
    only for a folder no one else is writing in (the job lock is held). Returns their names."""
    try:
        paths = fs.ls(directory, detail=False)
    except FileNotFoundError:
        return []
    removed = []
    for path in paths:
        name = posixpath.basename(str(path).rstrip("/"))
        if name.startswith(TEMP_PREFIX):
            fs.rm(path)
            removed.append(name)
    return removed


def atomic_write_all(fs: AbstractFileSystem, files: list[tuple[str, bytes]], sync_folder: bool = True,
                     grouped: bool = False) -> None:
    """:func:`atomic_write` of several files of one folder, replaced in the order given. On local disk every file
    is written and fsynced before the first is renamed into place, and the folder is fsynced once at the end
    (unless ``sync_folder`` is false: the caller then fsyncs it before relying on the renames). ``grouped``: inside
    a commit batch's group sync, the files join it (see :mod:`gobblin_py.io.group_sync`); only for files no other
    write of the batch reads back, since they are not in place before the flush."""
    parent = _one_local_folder(fs, [path for path, _ in files])
    if parent is None:
        for path, data in files:
            atomic_write(fs, path, data)
        return

    def stage(temporary: list[str]) -> None:
        for path, data in files:
            tmp = temporary_path(path)
            _write_temporary(tmp, data, group)
            temporary.append(tmp)

    group = group_sync.current() if grouped else None
    _replace_staged(fs, parent, [path for path, _ in files], stage, sync_folder, group)


NO_HARD_LINKS = (errno.EXDEV, errno.EPERM, errno.EOPNOTSUPP, errno.EMLINK)


def atomic_write_copies(fs: AbstractFileSystem, paths: list[str], data: bytes, sync_folder: bool = True,
                        grouped: bool = False) -> None:
    """:func:`atomic_write_all` of one content under several names of one folder, replaced in the order given. On
    local disk the content is written and fsynced once and the other names are hard links to it, each put in
    place by an atomic rename (files are only ever replaced, never changed in place, so sharing the bytes is
    safe); where the disk has no hard links, each name gets its own copy."""
    parent = _one_local_folder(fs, paths)
    if parent is None:
        atomic_write_all(fs, [(path, data) for path in paths], sync_folder, grouped)
        return

    def stage(temporary: list[str]) -> None:
        first = temporary_path(paths[0])
        _write_temporary(first, data, group)
        temporary.append(first)
        for path in paths[1:]:
            alias = temporary_path(path)
            try:
                os.link(first, alias)
            except OSError as exc:
                if exc.errno not in NO_HARD_LINKS:
                    raise
                _write_temporary(alias, data, group)
            temporary.append(alias)

    group = group_sync.current() if grouped else None
    _replace_staged(fs, parent, paths, stage, sync_folder, group)


def _one_local_folder(fs: AbstractFileSystem, paths: list[str]) -> str | None:
    """The one local folder all ``paths`` are in (made if missing); None elsewhere or for several folders."""
    parents = {posixpath.dirname(path) for path in paths}
    if not is_local(fs) or len(parents) != 1:
        return None
    [parent] = parents
    makedirs(fs, parent)
    return parent


def _replace_staged(fs: AbstractFileSystem, parent: str, paths: list[str], stage: Callable[[list[str]], None],
                    sync_folder: bool, group: group_sync.GroupSync | None = None) -> None:
    """Let ``stage`` write a temporary file per path (appending each to the list it is given), then, once they
    are durable, rename them over ``paths`` in order; on any failure every temporary file is removed. With a
    commit batch's ``group`` the renames wait for its flush (which syncs the folder)."""
    temporary: list[str] = []

    def give_up(exc: BaseException) -> None:
        for tmp in temporary:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
        if isinstance(exc, OSError) and not exc.filename:
            raise OSError(exc.errno, exc.strerror, paths[0]) from exc  # name the file a full disk refused
        raise exc

    def rename() -> None:
        try:
            for path, tmp in zip(paths, temporary, strict=True):
                _drop_crc(fs, path)
                os.replace(tmp, path)
        except BaseException as exc:
            give_up(exc)

    try:
        stage(temporary)
    except BaseException as exc:
        give_up(exc)
    if group is not None:
        group.then(rename, parent)
        return
    rename()
    if sync_folder:
        fsync_dir(parent)


def _write_temporary(path: str, data: bytes, group: group_sync.GroupSync | None) -> None:
    """A new local file, fsynced now, or noted for the commit batch's ``group``."""
    write_new_local(path, data, sync=group is None)
    if group is not None:
        group.note(path)


def write_new_local(path: str, data: bytes, sync: bool = True) -> None:
    """Write a new local file and fsync it (unless ``sync`` is false: the caller makes it durable); on failure
    (a full disk) remove it and raise an error naming it."""
    try:
        with open(path, "xb") as out:
            out.write(data)
            if sync:
                out.flush()
                os.fsync(out.fileno())
    except OSError as exc:
        if not isinstance(exc, FileExistsError):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        if not exc.filename:
            raise OSError(exc.errno, exc.strerror, path) from exc
        raise


def remove(fs: AbstractFileSystem, path: str) -> None:
    """Delete a file and, on local disk, its Hadoop checksum sidecar."""
    _drop_crc(fs, path)
    fs.rm(path)


REMOVE_THREADS = 16


def remove_tree(fs: AbstractFileSystem, path: str, threads: int = REMOVE_THREADS) -> None:
    """Delete the folder ``path`` and everything in it. On local disk its sub-folders go in parallel (``threads``
    at once): removing a folder waits on the disk (a journal commit, a discard), so thousands of them one by one
    take minutes."""
    if not is_local(fs):
        fs.rm(path, recursive=True)
        return
    with os.scandir(path) as scan:
        entries = list(scan)
    folders = [e.path for e in entries if e.is_dir(follow_symlinks=False)]
    for entry in entries:
        if not entry.is_dir(follow_symlinks=False):
            os.unlink(entry.path)
    if len(folders) == 1:
        remove_tree(fs, folders[0], threads)
    elif folders:
        with ThreadPoolExecutor(max_workers=min(threads, len(folders)), thread_name_prefix="gpy-rm") as pool:
            list(pool.map(_remove_folder, folders))
    os.rmdir(path)


def _remove_folder(path: str) -> None:
    """A local folder and what it holds: one rmdir when it is empty (a task's output folder once its files are
    published), else the whole walk."""
    try:
        os.rmdir(path)
    except OSError as exc:
        if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
            raise
        shutil.rmtree(path)


def list_names(fs: AbstractFileSystem, directory: str) -> list[str]:
    """File names in ``directory`` (not hidden ones: ``.crc`` sidecars, ``_tmp_`` files); [] if absent."""
    try:
        entries = fs.ls(directory, detail=True)
    except FileNotFoundError:
        return []
    names = []
    for entry in entries:
        if entry.get("type") == "directory":
            continue
        name = posixpath.basename(entry["name"].rstrip("/"))
        if not name.startswith((".", "_")):
            names.append(name)
    return sorted(names)


def list_dirs(fs: AbstractFileSystem, directory: str) -> list[str]:
    """Sub-directory names of ``directory`` (not hidden ones); [] if absent."""
    try:
        entries = fs.ls(directory, detail=True)
    except FileNotFoundError:
        return []
    names = [posixpath.basename(e["name"].rstrip("/")) for e in entries if e.get("type") == "directory"]
    return sorted(n for n in names if not n.startswith((".", "_")))
