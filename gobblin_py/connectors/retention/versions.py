"""Published dataset versions: Gobblin's ``GlobCleanableDatasetFinder`` (each folder matching
``gobblin.retention.dataset.pattern`` is a dataset) and ``DateTimeDatasetVersionFinder`` (each folder below it
named by a date, ``yyyy/MM/dd`` say, or a publish's ``<yyyyMMddHHmmss>_append``, is a version of that time).

A version is deleted with everything in it, then the folders above it left empty, up to the dataset's folder
(kept). Nothing outside a dataset's folder is ever deleted: each version must lie below it, also through
symbolic links.

A folder's name is only as good as its pattern, so two guards stand between a name and a deletion: a pattern
that cannot name a time (no year; minutes where a month stands, ``yyyy/mm/dd``) is refused before any work, and
a version the policy selects by its name's date is kept, with a warning, when anything in it was modified after
the policy's own lookback cutoff: its name says it is old, its files say otherwise. A version is thus deleted
only when both its name and its files are older than the lookback.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from gobblin_py.connectors.retention.settings import DATETIME_PATTERN_KEY, PATTERN_KEY, CleanerSettings
from gobblin_py.io import fs as fsutil
from gobblin_py.io.contained_paths import PathEscapeError, check_no_symlink_escape, is_within
from gobblin_py.io.crash_points import phase
from gobblin_py.sdk import joda
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.logs import get_logger
from gobblin_py.store.retention import DELETE_PHASE, Policy, Version

log = get_logger(__name__)

APPEND_SUFFIX = "_append"
_GLOB_CHARS = re.compile(r"[*?\[]")


class GlobCleanableDatasetFinder:
    """Gobblin's ``GlobCleanableDatasetFinder``: the folders matching ``gobblin.retention.dataset.pattern`` are
    the datasets whose versions are cleaned."""


class DateTimeDatasetVersionFinder:
    """Gobblin's ``DateTimeDatasetVersionFinder``: the folders below a dataset named by a date
    (``gobblin.retention.version.datetime.pattern``) are its versions, timestamped by that date."""

    def __init__(self, settings: CleanerSettings) -> None:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        if not settings.datetime_pattern:
            raise UsageError(f"{DATETIME_PATTERN_KEY}: is not set; the date pattern of the version folders")
        self.pattern = settings.datetime_pattern.strip().strip("/")
        try:
            self.format = joda.to_strftime(self.pattern)
        except ValueError as exc:
            raise UsageError(f"{DATETIME_PATTERN_KEY}: {exc}") from None
        problem = joda.version_pattern_problem(self.pattern)
        if problem:
            raise UsageError(f"{DATETIME_PATTERN_KEY}={self.pattern!r} {problem}; the folders' dates would be read "
                             "wrong, and retention would delete by them")
        try:
            self.zone = ZoneInfo(settings.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise UsageError(f"gobblin.retention.version.datetime.timezone={settings.timezone!r}: not a time zone") \
                from None
        self.depth = self.pattern.count("/") + 1
        default_glob = "/".join("*" for _ in range(self.depth))
        self.glob = (settings.version_glob or default_glob).strip("/")

    def version_time(self, relative: str) -> float | None:
        """The time of the version folder at ``relative`` (below its dataset), or None when it is not a date."""
        parts = relative.split("/")[-self.depth:]
        text = "/".join(parts)
        if text.endswith(APPEND_SUFFIX):
            text = text[:-len(APPEND_SUFFIX)]
        try:
            return datetime.strptime(text, self.format).replace(tzinfo=self.zone).timestamp()
        except ValueError:
            return None  # not a version (Gobblin ignores it too)

    def versions(self, fs: Any, dataset: str) -> list[Version]:
        found = []
        for path, info in fs.glob(posixpath.join(dataset, self.glob), detail=True).items():
            if info.get("type") != "directory":
                continue
            moment = self.version_time(posixpath.relpath(path, dataset))
            if moment is not None:
                found.append(Version(path, moment))
        return sorted(found, key=lambda v: (v.time, v.path), reverse=True)


@dataclass(frozen=True)
class VersionDeletion:
    """A published version retention deletes."""

    dataset: str
    path: str
    time: float


@dataclass(frozen=True)
class KeptVersion:
    """A version the policy selected by its name's date, kept because something in it is newer than the cutoff."""

    path: str
    time: float  # what its name says
    modified: float  # its newest entry's modification time

    def describe(self) -> str:
        def when(moment: float) -> str:
            return datetime.fromtimestamp(moment, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        return (f"{self.path}: its name reads {when(self.time)}, older than the lookback, but it holds entries "
                f"modified {when(self.modified)}, within it; not deleted (check {DATETIME_PATTERN_KEY})")


def _modified(info: dict[str, Any]) -> float | None:
    """A listing entry's modification time in epoch seconds, or None when the filesystem gives none."""
    for key in ("mtime", "LastModified", "last_modified", "updated"):
        value = info.get(key)
        if isinstance(value, datetime):
            return value.timestamp()
        if value is not None:
            try:
                return float(value)
            except (TypeError, ValueError):
                return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
    return None


def newest_modification(fs: Any, path: str) -> float | None:
    """The newest modification time of ``path`` and of everything below it (folders too, where they have one)."""
    entries = [fs.info(path), *fs.find(path, withdirs=True, detail=True).values()]
    times = [moment for moment in map(_modified, entries) if moment is not None]
    return max(times) if times else None


def _common_root(pattern: str) -> str:
    parts = pattern.split("/")
    for index, part in enumerate(parts):
        if _GLOB_CHARS.search(part):
            return "/".join(parts[:index]) or "/"
    return pattern


def find_datasets(settings: CleanerSettings) -> tuple[Any, str, list[str]]:
    """The filesystem, the pattern's deepest folder without wildcards, and the dataset folders found."""
    if not settings.pattern:
        raise UsageError(f"{PATTERN_KEY}: is not set; the glob of the dataset folders to clean")
    fs, pattern = fsutil.open_fs(settings.pattern)
    pattern = pattern.rstrip("/")
    root = _common_root(pattern)
    datasets = []
    for path, info in sorted(fs.glob(pattern, detail=True).items()):
        if info.get("type") != "directory":
            continue
        if settings.blacklist is not None and settings.blacklist.search(path):
            continue
        datasets.append(path)
    return fs, root, datasets


@dataclass(frozen=True)
class VersionPlan:
    """What a retention run of published versions deletes, and what it keeps against its policy's choice."""

    fs: Any
    root: str
    deletions: list[VersionDeletion]
    kept: list[KeptVersion]


def plan_versions(settings: CleanerSettings, policy: Policy, now: float, cutoff: float | None) -> VersionPlan:
    """The published versions ``policy`` selects in every dataset the pattern finds, oldest first, but those
    with anything modified at or after ``cutoff`` (the newest time the policy's lookback lets it delete; None:
    the policy has no lookback)."""
    fs, root, datasets = find_datasets(settings)
    finder = DateTimeDatasetVersionFinder(settings)
    planned, kept = [], []
    for dataset in datasets:
        for version in policy(finder.versions(fs, dataset), now):
            modified = newest_modification(fs, version.path) if cutoff is not None else None
            if modified is not None and cutoff is not None and modified >= cutoff:
                kept.append(KeptVersion(version.path, version.time, modified))
                log.warning("retention_version_kept", version=version.path, reason=kept[-1].describe())
                continue
            planned.append(VersionDeletion(dataset, version.path, version.time))
    return VersionPlan(fs, root, sorted(planned, key=lambda d: (d.dataset, d.time, d.path)), kept)


def delete_versions(fs: Any, root: str, deletions: list[VersionDeletion]) -> int:
    """Delete each planned version (a crash point each), then the folders it leaves empty below its dataset."""
    local = fsutil.is_local(fs)
    deleted = 0
    for deletion in deletions:
        if deletion.path == deletion.dataset or not is_within(deletion.dataset, deletion.path) \
                or not is_within(root, deletion.dataset):
            raise PathEscapeError(f"{deletion.path}: not inside the dataset folder {deletion.dataset}")
        if local:
            check_no_symlink_escape(root, deletion.dataset, what=PATTERN_KEY)
            check_no_symlink_escape(deletion.dataset, deletion.path, what="a dataset version")
        with phase(DELETE_PHASE):
            if not fs.exists(deletion.path):
                continue
            fsutil.remove_tree(fs, deletion.path)
        deleted += 1
        parent = posixpath.dirname(deletion.path)
        while parent != deletion.dataset and is_within(deletion.dataset, parent) and fs.exists(parent) \
                and not fs.ls(parent):
            fs.rmdir(parent)
            parent = posixpath.dirname(parent)
    return deleted
