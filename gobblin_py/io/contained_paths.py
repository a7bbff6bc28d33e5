"""One containment rule for every path gpy derives from configuration or data.

A dataset's namespace and table, a branch name, ``writer.file.path`` and ``writer.file.name``, a copy dataset's
relative path, an archive entry: each is a *relative* path that gpy joins under a folder the job configured (a
staging, output or final folder). Such a value comes from a job file or from the data itself (a table listed by a
database, a file found by a pattern), so it may hold anything: ``../../etc``, ``/tmp/x``, a NUL byte. Every such
join goes through :func:`contained_join`, which refuses a part that would leave its root, and
:func:`check_no_symlink_escape` refuses a local path that leaves its root through a symbolic link on disk.

The check is lexical on purpose: roots may be object-store URLs (``s3://bucket/out``), where ``..`` has no
meaning to the store but does to every tool that later reads the path as a folder.
"""

from __future__ import annotations

import os
import posixpath

from gobblin_py.sdk.errors import UsageError


class PathEscapeError(UsageError):
    """A path derived from configuration or data would lie outside the folder it belongs under (exit code 2)."""


def path_problem(value: str, *, allow_absolute: bool = False, allow_slash: bool = True) -> str | None:
    """Why ``value`` cannot be a relative path under a root, or None when it can.

    Refused: a NUL byte, a ``..`` component, an absolute path (unless ``allow_absolute``: the caller then strips
    the leading ``/`` as Gobblin's ``writer.file.path`` does), a ``/`` at all when ``allow_slash`` is false (a
    single file or folder name), and a name that cannot be encoded for a file system (an unpaired surrogate).
    """
    if "\x00" in value:
        return "holds a NUL byte"
    if not allow_absolute and value.startswith("/"):
        return "is an absolute path; it must be relative to its folder"
    if not allow_slash and "/" in value:
        return "holds a '/'; it must be a single name"
    if ".." in value.split("/"):
        return "holds a '..' component, which would leave its folder"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid UTF-8"
    return None


def relative_parts(value: str, what: str, *, allow_absolute: bool = False, allow_slash: bool = True) -> list[str]:
    """The components of the relative path ``value`` (empty and ``.`` components dropped), or PathEscapeError
    naming ``what`` (a key, or "table name from source.entities") when it could leave its folder."""
    problem = path_problem(value, allow_absolute=allow_absolute, allow_slash=allow_slash)
    if problem:
        raise PathEscapeError(f"{what}={value!r} {problem}")
    return [p for p in value.split("/") if p not in ("", ".")]


def contained_join(root: str, *parts: str, what: str = "path") -> str:
    """``root`` joined with the relative ``parts``, each checked by :func:`relative_parts`.

    The result is ``root`` itself or lies below it, lexically: it is built from ``root`` and components none of
    which is ``..``, empty, ``.`` or holds a ``/``.
    """
    components: list[str] = []
    for part in parts:
        components.extend(relative_parts(part, what))
    if not components:
        return root
    if not root:
        return "/".join(components)
    return root.rstrip("/") + "/" + "/".join(components) if root != "/" else "/" + "/".join(components)


def is_within(root: str, path: str) -> bool:
    """Whether ``path`` is ``root`` or lies below it, lexically (both normalised; no file system is asked)."""
    root_n = posixpath.normpath(root) if root else "."
    path_n = posixpath.normpath(path) if path else "."
    if root_n == "/":
        return path_n.startswith("/")
    return path_n == root_n or path_n.startswith(root_n + "/")


def check_no_symlink_escape(root: str, path: str, what: str = "path") -> None:
    """On local disk: PathEscapeError when ``path`` (or the deepest part of it that exists) resolves, through a
    symbolic link, to a place outside ``root``'s own resolved location. Paths that do not exist yet are judged by
    the folders above them that do, which is where a link would redirect a write."""
    root_n = os.path.normpath(root)
    probe = os.path.normpath(path)
    # climb to the deepest part that exists, never above the root: a root not made yet holds no link
    while probe != root_n and not os.path.lexists(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    if probe == root_n or (is_within(root_n, probe) and not _link_below(root_n, probe)):
        return  # nothing but plain folders and files below the root: it resolves inside, wherever the root is
    real_root = os.path.realpath(root)
    real = os.path.realpath(probe)
    if not (real == real_root or real.startswith(real_root.rstrip("/") + "/")):
        raise PathEscapeError(f"{what}: {path} leads through a symbolic link to {real}, outside {root}")


def _link_below(root: str, path: str) -> bool:
    """Whether ``path`` (normalised, below ``root``) or a folder between it and ``root`` is a symbolic link."""
    while path != root:
        if os.path.islink(path):
            return True
        path = os.path.dirname(path)
    return False
