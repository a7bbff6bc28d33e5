"""Which datasets a copy job copies, and their files (Gobblin's CopyableGlobDatasetFinder and RecursiveCopyableDataset).

Every path matching ``gobblin.dataset.pattern`` is a dataset (one whose path contains a match of
``gobblin.dataset.blacklist`` is left out); its URN is its path. Each file below a dataset, at any depth and
hidden or not (Hadoop lists them all), is copied to ``<data.publisher.final.dir>/<its path below the pattern's
deepest folder without wildcards>``: with ``/logs/*`` the file ``/logs/a/x/1.txt`` goes to ``<final>/a/x/1.txt``,
and with ``/logs/data/`` the file ``/logs/data/1.txt`` goes to ``<final>/1.txt``. A dataset's URN is its folder
below that deepest plain folder (``a``; ``a%2Fb`` for ``a/b``), or, for a pattern without wildcards, the
folder's own name (``data``). Symbolic links are not followed: a match reached through one is skipped, as is a
link below a dataset (the folder without wildcards may be a link: the job names it itself). A file or match whose
name is not valid UTF-8 is skipped with a warning naming its bytes: no destination, URN or state can hold it.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from gobblin_py.connectors.copy.descriptor import mtime_ms
from gobblin_py.connectors.copy.settings import GlobFinderSettings
from gobblin_py.io import fs as fsutil
from gobblin_py.io.contained_paths import contained_join, is_within, path_problem
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.errors import GobblinPyError
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.settings import problem_at

log = get_logger(__name__)

GLOB_CHARACTERS = "*?["


@dataclass(frozen=True)
class Listed:
    """A file found below a dataset: its path on the source filesystem, its size and modification time."""

    path: str
    size: int
    mtime_ms: int


@dataclass(frozen=True)
class CopyDataset:
    """One dataset to copy: its root on the source filesystem and the folder below which its files' destinations
    are computed (the pattern's deepest folder without wildcards)."""

    root: str
    search_root: str

    @property
    def urn(self) -> str:
        """The dataset's name in the state store: its folder below the search root (``/`` written ``%2F``, as
        the store keeps one file per URN in one folder), or its own name for a pattern without wildcards."""
        return quote(self.target or posixpath.basename(self.root) or "root", safe=" ._-~@,=+")

    def destination(self, path: str) -> str:
        """Where the file ``path`` goes, relative to the publish root (a pattern naming one file: its name)."""
        relative = posixpath.relpath(path, self.search_root)
        return contained_join("", posixpath.basename(path) if relative == "." else relative,
                              what=f"the destination of {path}")

    @property
    def target(self) -> str:
        """The dataset's folder relative to the publish root ('' when the dataset is the search root)."""
        relative = posixpath.relpath(self.root, self.search_root)
        return "" if relative == "." else relative


def deepest_plain_folder(pattern: str) -> str:
    """The longest leading part of ``pattern`` without a wildcard (Gobblin's deepestNonGlobPath)."""
    parts = pattern.split("/")
    plain = []
    for part in parts:
        if any(c in part for c in GLOB_CHARACTERS):
            break
        plain.append(part)
    return "/".join(plain) or "/"


class CopyableGlobDatasetFinder:
    """Finds the datasets of ``gobblin.dataset.pattern`` and lists each one's files (Gobblin's default finder for
    CopySource)."""

    settings_class = GlobFinderSettings

    @classmethod
    def validate(cls, props: Mapping[str, str]) -> list[ConfigError]:
        """Hadoop's ``{a,b}`` alternatives are not read by this glob: refused rather than matched literally."""
        pattern = props.get("gobblin.dataset.pattern") or ""
        if "{" in pattern:
            return [problem_at(props, "gobblin.dataset.pattern", f"{pattern}: {{a,b}} alternatives are not supported",
                               "use one job per alternative, or a wider glob with gobblin.dataset.blacklist")]
        return []

    def init(self, props: Any) -> None:
        self.settings = GlobFinderSettings.load(props)
        self.fs, pattern = fsutil.open_fs(self.settings.pattern.rstrip("/") or "/", self.settings.fs_uri)
        self.pattern = pattern.rstrip("/") or "/"
        self.search_root = deepest_plain_folder(self.pattern)

    def find_datasets(self) -> list[CopyDataset]:
        """Every path matching the pattern and not blacklisted, in path order; a match reached through a
        symbolic link is skipped with a warning (it could lead anywhere, as links inside a dataset could)."""
        found, linked, unencodable = [], [], []
        for path in sorted(self.fs.glob(self.pattern)):
            path = path.rstrip("/") or "/"
            if self.settings.blacklist is not None and self.settings.blacklist.search(path):
                continue
            if path_problem(path, allow_absolute=True):
                unencodable.append(path)
                continue
            link = self._link_in_match(path)
            if link is not None:
                linked.append(link)
                continue
            found.append(CopyDataset(path, self.search_root))
        if linked:
            log.warning("copy_skipped_linked_datasets", pattern=self.pattern, count=len(linked), first=linked[:5],
                        why="a dataset the pattern matches through a symbolic link is not copied")
        warn_unencodable(self.pattern, unencodable)
        return found

    def _link_in_match(self, path: str) -> str | None:
        """The first folder or file of ``path`` below the pattern's folder without wildcards that is a symbolic
        link, or None (the folder the job names itself may be a link: that is the user's choice)."""
        if not fsutil.is_local(self.fs) or not is_within(self.search_root, path):
            return None
        probe = self.search_root
        for part in posixpath.relpath(path, self.search_root).split("/"):
            probe = posixpath.join(probe, part)
            if part != "." and os.path.islink(probe):
                return probe
        return None

    def list_files(self, dataset: CopyDataset) -> list[Listed]:
        """Every file below the dataset (the dataset itself when it is a file), in path order."""
        return list_files(self.fs, dataset.root)

    def url(self, path: str) -> str:
        """How a writer opens a listed file: its path on local disk, else its URL."""
        return path if fsutil.is_local(self.fs) else self.fs.unstrip_protocol(path)


def list_files(fs, root: str) -> list[Listed]:
    """Every file below ``root`` on ``fs`` (``root`` itself when it is a file); none when it does not exist."""
    try:
        if fs.isfile(root):
            entries = {root: fs.info(root)}
        else:
            entries = fs.find(root, detail=True, withdirs=False)
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise GobblinPyError(f"{root}: cannot be listed: {exc}") from exc
    listed, skipped, unencodable = [], [], []
    for path, info in sorted(entries.items()):
        if info.get("type", "file") == "directory":
            continue
        if path_problem(path, allow_absolute=True):
            unencodable.append(path)
            continue
        if info.get("type", "file") != "file" or info.get("islink"):
            skipped.append(path)  # a symbolic link, FIFO, socket or device: not data to copy
            continue
        listed.append(Listed(path, int(info.get("size") or 0), mtime_ms(info)))
    if skipped:
        log.warning("copy_skipped_special_files", root=root, count=len(skipped), first=skipped[:5],
                    why="symbolic links and special files (FIFOs, sockets, devices) are not copied")
    warn_unencodable(root, unencodable)
    return listed


def warn_unencodable(root: str, paths: list[str]) -> None:
    """Warn of the files or datasets below ``root`` skipped for a name that is not valid UTF-8, naming each by its
    bytes (local disk hands such a name over with its bytes escaped as surrogates)."""
    if paths:
        log.warning("copy_skipped_unencodable_names", root=root, count=len(paths),
                    first=[repr(os.fsencode(p)) for p in paths[:5]],
                    why="a name that is not valid UTF-8 is not copied (HDFS, object stores and the state store hold "
                        "UTF-8 names only): rename it to copy it")
