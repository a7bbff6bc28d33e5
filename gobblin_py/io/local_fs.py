"""The local disk with the fsspec calls gpy makes, without importing fsspec.

Importing fsspec costs a process about 40 ms of CPU (it pulls in asyncio, ssl, email and every compression
library installed), as much as the rest of a small job's start-up after pyarrow. A job whose files, state and
output are all on local disk never needs it, so :func:`gobblin_py.io.fs.open_fs` answers local URLs with this
class. Each method it defines answers as fsspec's ``LocalFileSystem`` does (same paths, same info dicts, same
errors); any other attribute is served by a real fsspec ``LocalFileSystem``, imported on first use, so code
written against fsspec's interface keeps working.
"""

from __future__ import annotations

import datetime
import os
import shutil
import stat
from typing import Any, BinaryIO, cast

_PREFIXES = ("file://", "file:", "local://", "local:")
_BINARY_MODES = frozenset({"rb", "wb", "ab", "xb"})


class LocalFileSystem:
    """fsspec's ``LocalFileSystem`` interface on local disk (see the module docstring)."""

    protocol = ("file", "local")
    root_marker = "/"
    sep = "/"
    storage_options: dict[str, Any] = {}

    _delegate: Any = None

    def __reduce__(self) -> tuple:
        return (LocalFileSystem, ())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LocalFileSystem)

    def __hash__(self) -> int:
        return hash("gobblin_py.io.local_fs")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if LocalFileSystem._delegate is None:
            from fsspec.implementations.local import LocalFileSystem as FsspecLocal

            LocalFileSystem._delegate = FsspecLocal()
        return getattr(LocalFileSystem._delegate, name)

    # ------------------------------------------------------------------ paths

    @classmethod
    def _strip_protocol(cls, path: Any) -> str:
        path = os.fspath(path)
        for prefix in _PREFIXES:
            if path.startswith(prefix):
                path = path[len(prefix):]
                break
        if not path.startswith("/"):
            if path.startswith("~"):
                path = os.path.expanduser(path)
            else:
                path = path[2:] if path.startswith("./") else ("" if path == "." else path)
                path = f"{os.getcwd()}/{path}"
        return path.rstrip("/") or cls.root_marker

    def unstrip_protocol(self, name: str) -> str:
        return f"file://{self._strip_protocol(name)}"

    @classmethod
    def _parent(cls, path: str) -> str:
        return cls._strip_protocol(path).rsplit("/", 1)[0] or "/"

    # ------------------------------------------------------------------ metadata

    def info(self, path: Any, **kwargs: Any) -> dict[str, Any]:
        if isinstance(path, os.DirEntry):
            out = path.stat(follow_symlinks=False)
            link = path.is_symlink()
            kind = ("directory" if path.is_dir(follow_symlinks=False)
                    else "file" if path.is_file(follow_symlinks=False) else "other")
            size = out.st_size
            if link:
                try:
                    size = path.stat(follow_symlinks=True).st_size
                except OSError:
                    size = 0
            name = self._strip_protocol(path.path)
        else:
            name = self._strip_protocol(path)
            out = os.stat(name, follow_symlinks=False)
            link = stat.S_ISLNK(out.st_mode)
            if link:
                out = os.stat(name, follow_symlinks=True)
            size = out.st_size
            kind = ("directory" if stat.S_ISDIR(out.st_mode)
                    else "file" if stat.S_ISREG(out.st_mode) else "other")
        result: dict[str, Any] = {"name": name, "size": size, "type": kind,
                                  "created": getattr(out, "st_birthtime", out.st_ctime), "islink": link,
                                  "mode": out.st_mode, "uid": out.st_uid, "gid": out.st_gid, "mtime": out.st_mtime,
                                  "ino": out.st_ino, "nlink": out.st_nlink}
        if link:
            result["destination"] = os.readlink(name)
        return result

    def exists(self, path: Any, **kwargs: Any) -> bool:
        try:
            self.info(path)
            return True
        except Exception:  # fsspec: any failure to stat means "not there"
            return False

    def isdir(self, path: Any) -> bool:
        return os.path.isdir(self._strip_protocol(path))

    def isfile(self, path: Any) -> bool:
        return os.path.isfile(self._strip_protocol(path))

    def islink(self, path: Any) -> bool:
        return os.path.islink(self._strip_protocol(path))

    def size(self, path: Any) -> int | None:
        return self.info(path).get("size", None)

    def modified(self, path: Any) -> datetime.datetime:
        return datetime.datetime.fromtimestamp(self.info(path)["mtime"], tz=datetime.timezone.utc)

    def ls(self, path: Any, detail: bool = False, **kwargs: Any) -> list:
        path = self._strip_protocol(path)
        path_info = self.info(path)
        if path_info["type"] != "directory":
            return [path_info] if detail else [path_info["name"]]
        entries = []
        with os.scandir(path) as scan:
            for entry in scan:
                try:
                    entries.append(self.info(entry) if detail else self._strip_protocol(entry.path))
                except FileNotFoundError:
                    pass
        return entries

    def find(self, path: Any, maxdepth: int | None = None, withdirs: bool = False, detail: bool = False,
             **kwargs: Any) -> Any:
        path = self._strip_protocol(path)
        found: dict[str, dict[str, Any]] = {}
        if withdirs and path != "" and self.isdir(path):
            found[path] = self.info(path)
        self._walk_into(path, maxdepth, withdirs, found, detail or withdirs)
        if not found and self.isfile(path):
            found[path] = {}
        names = sorted(found)
        return {name: found[name] for name in names} if detail else names

    def _walk_into(self, path: str, maxdepth: int | None, withdirs: bool, found: dict[str, dict[str, Any]],
                   detail: bool = True, folder: bool = False) -> None:
        """fsspec's ``walk`` as ``find`` uses it: errors while listing leave a folder out. Without ``detail``
        the entries are not stat'ed (scandir knows which are folders); ``folder``: ``path`` is known to be one."""
        if maxdepth is not None and maxdepth < 1:
            raise ValueError("maxdepth must be at least 1")
        try:
            listing = self._listing(path, detail, folder)
        except OSError:
            return
        folders = []
        for name, is_folder, info in listing:
            if is_folder and name.rstrip("/") != path:
                folders.append(name.rstrip("/"))
                if withdirs:
                    found[name] = info
            else:
                found[name] = info
        if maxdepth is not None:
            maxdepth -= 1
            if maxdepth < 1:
                return
        for name in folders:
            self._walk_into(name, maxdepth, withdirs, found, detail, folder=True)

    def _listing(self, path: str, detail: bool, folder: bool) -> list[tuple[str, bool, dict[str, Any]]]:
        """``(name, is a folder, info)`` of each entry of ``path`` (a path that is no folder lists itself); the
        info is empty without ``detail``."""
        if detail and not folder:
            info = self.info(path)
            if info["type"] != "directory":
                return [(info["name"], False, info)]
        entries = []
        try:
            scan = os.scandir(path)
        except NotADirectoryError:  # a file (or a link to one): what ls says of it
            return [(path, False, {})]
        with scan:
            for entry in scan:
                try:
                    if detail:
                        info = self.info(entry)
                        entries.append((info["name"], info["type"] == "directory", info))
                    else:
                        entries.append((self._strip_protocol(entry.path), entry.is_dir(follow_symlinks=False), {}))
                except FileNotFoundError:
                    pass
        return entries

    # ------------------------------------------------------------------ changes

    def makedirs(self, path: Any, exist_ok: bool = False) -> None:
        path = self._strip_protocol(path)
        if exist_ok and os.path.isdir(path):
            # the common case, one stat: os.makedirs would stat the parent, then mkdir (which locks the parent
            # folder exclusively, against every thread creating files there) only to be told it exists
            return
        os.makedirs(path, exist_ok=exist_ok)

    def mkdir(self, path: Any, create_parents: bool = True, **kwargs: Any) -> None:
        path = self._strip_protocol(path)
        if self.exists(path):
            raise FileExistsError(path)
        if create_parents:
            self.makedirs(path, exist_ok=True)
        else:
            os.mkdir(path, **kwargs)

    def rmdir(self, path: Any) -> None:
        os.rmdir(self._strip_protocol(path))

    def rm_file(self, path: Any) -> None:
        os.remove(self._strip_protocol(path))

    def rm(self, path: Any, recursive: bool = False, maxdepth: int | None = None) -> None:
        for one in path if isinstance(path, list) else [path]:
            one = self._strip_protocol(one)
            if self.isdir(one) and not self.islink(one):
                if not recursive:
                    raise ValueError("Cannot delete directory, set recursive=True")
                if os.path.abspath(one) == os.getcwd():
                    raise ValueError("Cannot delete current working directory")
                shutil.rmtree(one)
            else:
                os.remove(one)

    def mv(self, path1: Any, path2: Any, recursive: bool = True, **kwargs: Any) -> None:
        shutil.move(self._strip_protocol(path1), self._strip_protocol(path2))

    def cp_file(self, path1: Any, path2: Any, **kwargs: Any) -> None:
        path1, path2 = self._strip_protocol(path1), self._strip_protocol(path2)
        if self.isfile(path1):
            shutil.copyfile(path1, path2)
        elif self.isdir(path1):
            self.makedirs(path2, exist_ok=True)
        else:
            raise FileNotFoundError(path1)

    def get_file(self, path1: Any, path2: Any, callback: Any = None, **kwargs: Any) -> None:
        if hasattr(path2, "write"):  # a file object: fsspec copies into it
            with open(self._strip_protocol(path1), "rb") as source:
                shutil.copyfileobj(source, path2)
            return
        self.cp_file(path1, path2)

    def put_file(self, path1: Any, path2: Any, callback: Any = None, **kwargs: Any) -> None:
        self.cp_file(path1, path2)

    # ------------------------------------------------------------------ bytes

    def open(self, path: Any, mode: str = "rb", **kwargs: Any) -> BinaryIO:
        """A binary file (``rb``, ``wb``, ``ab``, ``xb``); other modes and options are fsspec's."""
        if mode not in _BINARY_MODES or kwargs:
            return self.__getattr__("open")(path, mode, **kwargs)
        return cast(BinaryIO, open(self._strip_protocol(path), mode))  # mode is one of the binary modes

    def cat_file(self, path: Any, start: int | None = None, end: int | None = None, **kwargs: Any) -> bytes:
        if start is None and end is None and not kwargs:
            with open(self._strip_protocol(path), "rb") as stream:
                return stream.read()
        return self.__getattr__("cat_file")(path, start=start, end=end, **kwargs)

    def pipe_file(self, path: Any, value: bytes, mode: str = "overwrite", **kwargs: Any) -> None:
        if mode == "create" and self.exists(path):
            raise FileExistsError
        with self.open(path, "wb") as stream:
            stream.write(value)
