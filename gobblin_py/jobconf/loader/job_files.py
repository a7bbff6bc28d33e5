"""Which files are jobs and which are global files: classification by extension, and finding them on disk."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Union

from gobblin_py.jobconf import keys as K
from gobblin_py.sdk.config_errors import ConfigError

from ..convert import guava_trim

__all__ = [
    "PathLike",
    "HOCON_JOB_EXTENSIONS",
    "GLOBAL_PROPS_EXTENSION",
    "GLOBAL_HOCON_EXTENSION",
    "job_extensions",
    "classify",
    "mtime_ms",
    "discover_job_files",
    "global_files",
    "is_within",
]

PathLike = Union[str, "os.PathLike[str]"]

HOCON_JOB_EXTENSIONS = ("json", "conf")
GLOBAL_PROPS_EXTENSION = ".properties"
GLOBAL_HOCON_EXTENSION = ".configuration"




def job_extensions(sys_props: Mapping[str, str], origin: str | None) -> tuple[str, ...]:
    """The Java-properties job extensions (``jobconf.extensions``, default ``pull,job``), lower case."""
    raw = sys_props.get(K.JOB_CONFIG_FILE_EXTENSIONS_KEY, K.DEFAULT_JOB_CONFIG_FILE_EXTENSIONS)
    extensions = tuple(dict.fromkeys(p.lower() for p in (guava_trim(x) for x in raw.split(",")) if p))
    common = sorted(set(extensions) & set(HOCON_JOB_EXTENSIONS))
    if common:
        raise ConfigError(
            f"Java props and HOCON pull file extensions intersect: {common}",
            path=origin,
            key=K.JOB_CONFIG_FILE_EXTENSIONS_KEY,
            hint="conf and json are always HOCON; remove them from jobconf.extensions",
        )
    return extensions


def classify(path: PathLike, extensions: Sequence[str] = ("pull", "job")) -> str | None:
    """``"props"``, ``"hocon"``, ``"global-props"``, ``"global-hocon"`` or None for ``path``'s file name."""
    name = os.path.basename(os.fspath(path)).lower()
    if any(name.endswith("." + ext) for ext in extensions):
        return "props"
    if any(name.endswith("." + ext) for ext in HOCON_JOB_EXTENSIONS):
        return "hocon"
    if name.endswith(GLOBAL_PROPS_EXTENSION):
        return "global-props"
    if name.endswith(GLOBAL_HOCON_EXTENSION):
        return "global-hocon"
    return None


def mtime_ms(path: str) -> int:
    """The modification time of ``path`` in milliseconds (Java ``File.lastModified``)."""
    return os.stat(path).st_mtime_ns // 1_000_000


def discover_job_files(root: PathLike, extensions: Sequence[str] = ("pull", "job")) -> list[tuple[str, int]]:
    """``PullFileLoader.fetchJobFilesRecursively``: job files under ``root`` ordered by mtime ascending.

    The walk is depth-first with entries in name order; the sort by modification time (milliseconds) is
    stable, so files with equal times keep walk order. Global files are never job files.
    """
    found: list[tuple[str, int]] = []
    visited = set()

    def walk(directory: str) -> None:
        real = os.path.realpath(directory)
        if real in visited:  # a symlink loop
            return
        visited.add(real)
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            return
        for name in names:
            full = os.path.join(directory, name)
            if os.path.isdir(full):
                walk(full)
            elif classify(full, extensions) in ("props", "hocon"):
                try:
                    found.append((full, mtime_ms(full)))
                except OSError:
                    continue

    walk(os.fspath(root))
    found.sort(key=lambda item: item[1])
    return found



def global_files(directory: str) -> list[str]:
    """The ``.properties`` and ``.configuration`` files directly in ``directory``, in name order."""
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    out = []
    for name in names:
        lowered = name.lower()
        full = os.path.join(directory, name)
        if (lowered.endswith(GLOBAL_PROPS_EXTENSION) or lowered.endswith(GLOBAL_HOCON_EXTENSION)) and os.path.isfile(full):
            out.append(full)
    return out


def is_within(path: str, root: str) -> bool:
    """True when ``path`` is ``root`` or lies below it."""
    try:
        return os.path.commonpath([os.path.abspath(path), os.path.abspath(root)]) == os.path.abspath(root)
    except ValueError:
        return False
