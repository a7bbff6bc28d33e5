"""Which datasets a compaction run looks at, and where each one's input, output and late folders are.

Three ways, as Gobblin finds them:

- ``gobblin.dataset.pattern`` (``CompactionSource``): every folder the glob matches is one dataset; its path below
  ``compaction.input.dir`` reads ``<name>/<input.subdir>/<time>`` (Gobblin's ``CompactionPathParser``), and its
  time is ``YYYY/MM/dd/HH`` or ``YYYY/MM/dd`` by its number of levels. gpy reads that time in
  ``compaction.timezone`` (Gobblin's parser always uses America/Los_Angeles, the key's default).
- ``TimeBasedSubDirDatasetsFinder`` (the legacy default): the folders ``compaction.timebased.subdir.pattern`` matches
  below ``compaction.input.dir`` are dataset names; every time folder of ``compaction.folder.pattern`` below
  ``<name>/<input.subdir>`` is one dataset.
- ``SimpleDatasetsFinder``: ``compaction.input.dir`` is the one dataset, compacted into ``compaction.dest.dir``.

Time folders outside ``[now - max.time.ago, now - min.time.ago]`` are skipped (the pattern's bounds are strict, the
legacy finder's inclusive, as in Gobblin), as are names the white/blacklists reject.
"""

from __future__ import annotations

import posixpath
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from gobblin_py.connectors.compaction.names import SimpleDatasetsFinder
from gobblin_py.connectors.compaction.settings import CompactionSettings, period_seconds
from gobblin_py.io import fs as fsutil
from gobblin_py.sdk import joda
from gobblin_py.sdk.logs import get_logger

log = get_logger(__name__)

LATE = "_late"
_GLOB_RUN = re.compile(r"[a-zA-Z0-9='-]+")
_FIXED_SECONDS = {"SECOND": 1, "MINUTE": 60, "HOUR": 3600}


@dataclass(frozen=True)
class Dataset:
    """One unit of compaction: what is read (``input``, and ``input_late`` where Gobblin has one), where the output
    goes (``dest``) and where late files are set aside (``dest_late``); ``folder_ms`` the time folder's time and
    ``end_ms`` the end of its window: one unit of its pattern later (the hour of ``YYYY/MM/dd/HH``)."""

    name: str
    time: str
    input: str
    input_late: str | None
    dest: str
    dest_late: str
    folder_ms: int | None
    end_ms: int | None = None

    @property
    def urn(self) -> str:
        """The dataset's urn in gpy's state store: its output folder."""
        return self.dest


@dataclass(frozen=True)
class InputFile:
    """A data file of a dataset: path, size in bytes, modification time (epoch ms)."""

    path: str
    size: int
    mtime_ms: int


def is_hidden(relative: str) -> bool:
    """Whether a path (relative to a dataset) is no data file: a part starts with ``_`` or ``.`` (Hadoop's rule:
    markers, state files, temporary files)."""
    return any(part.startswith(("_", ".")) for part in relative.split("/"))


def mtime_ms(info: dict) -> int:
    """An fsspec entry's modification time in epoch milliseconds."""
    value = info.get("mtime", info.get("LastModified", info.get("last_modified")))
    if isinstance(value, datetime):
        return int(value.timestamp() * 1000)
    return int(float(value or 0) * 1000)


def list_files(fs, folder: str) -> list[InputFile]:
    """The data files below ``folder`` (recursively, hidden ones left out), by path; [] when it is absent."""
    try:
        found = fs.find(folder, detail=True)
    except FileNotFoundError:
        return []
    root = folder.rstrip("/")
    files = []
    for path, info in found.items():
        relative = path[len(root):].lstrip("/")
        if info.get("type") == "directory" or not relative or is_hidden(relative):
            continue
        files.append(InputFile(path, int(info.get("size") or 0), mtime_ms(info)))
    return sorted(files, key=lambda f: f.path)


def window_end_ms(start_ms: int, pattern: str, zone: ZoneInfo) -> int:
    """The end of the window a time folder of ``pattern`` starting at ``start_ms`` covers: every instant whose
    wall-clock time in the zone is below the folder's time plus one unit of the pattern's finest field (Gobblin's
    lowest interval unit). So a day of a daylight-saving change lasts 23 or 25 hours, and the hour the clocks repeat
    (``…/01`` on America/Los_Angeles' last day of summer time) holds both of its hours: it ends at the second one's
    end, as the ingestion's writer puts the records of both in it."""
    unit = joda.lowest_unit(pattern) or "DAY"
    start = datetime.fromtimestamp(start_ms / 1000, zone).replace(tzinfo=None)
    if unit in _FIXED_SECONDS:
        end = start + timedelta(seconds=_FIXED_SECONDS[unit])
    elif unit in ("DAY", "WEEK"):
        end = start + timedelta(days=1 if unit == "DAY" else 7)
    elif unit == "MONTH":
        end = start.replace(year=start.year + start.month // 12, month=start.month % 12 + 1)
    else:
        end = start.replace(year=start.year + 1)
    # an end the clocks repeat has two instants, one they skip none: the latest whose instant just before has a
    # wall-clock time inside the window
    ends = [int(end.replace(tzinfo=zone, fold=fold).timestamp() * 1000) for fold in (0, 1)]
    inside = [ms for ms in ends if start <= datetime.fromtimestamp((ms - 1) / 1000, zone).replace(tzinfo=None) < end]
    return max(inside or ends)


class DatasetFinder:
    """Finds the datasets of a compaction job (see the module)."""

    def __init__(self, settings: CompactionSettings, now_ms: int | None = None) -> None:
        self.settings = settings
        self.fs, self.input_root = fsutil.open_fs(settings.input_dir)
        _, self.dest_root = fsutil.open_fs(settings.dest_dir)
        self.zone = ZoneInfo(settings.timezone)
        self.now_ms = int(time.time() * 1000) if now_ms is None else now_ms
        self.oldest_ms = self.now_ms - int(period_seconds(settings.max_time_ago) * 1000)
        self.newest_ms = self.now_ms - int(period_seconds(settings.min_time_ago) * 1000)

    def find(self) -> list[Dataset]:
        """The datasets to look at this run, oldest time folders first, at most ``compaction.datasets.max.count``."""
        if self.settings.dataset_pattern:
            found = list(self._by_pattern())
        elif self.settings.finder_class is SimpleDatasetsFinder:
            found = [self._simple()]
        else:
            found = list(self._time_based())
        found = [d for d in found if self._survives(d.name)]
        found.sort(key=lambda d: (d.folder_ms or 0, d.name))
        return found[: self.settings.max_datasets]

    def _survives(self, name: str) -> bool:
        """Gobblin's DatasetFilterUtils: not blacklisted, and whitelisted when there is a whitelist."""
        if any(re.fullmatch(p, name) for p in self.settings.blacklist):
            return False
        return not self.settings.whitelist or any(re.fullmatch(p, name) for p in self.settings.whitelist)

    def _parse(self, text: str, pattern: str) -> int | None:
        try:
            moment = datetime.strptime(text, joda.to_strftime(pattern))
        except ValueError:
            return None
        return int(moment.replace(tzinfo=self.zone).timestamp() * 1000)

    def _in_range(self, folder_ms: int, strict: bool) -> bool:
        if strict:
            return self.oldest_ms < folder_ms < self.newest_ms
        return self.oldest_ms <= folder_ms <= self.newest_ms

    def _by_pattern(self) -> Iterator[Dataset]:
        settings = self.settings
        _, pattern = fsutil.open_fs(settings.dataset_pattern or "")
        for path in sorted(self.fs.glob(pattern)):
            if not self.fs.isdir(path):
                continue
            relative = posixpath.relpath(path, self.input_root)
            parts = relative.split("/")
            if is_hidden(relative):
                continue  # a folder being built or swapped beside its destination, a marker, a temporary file
            if relative.startswith("..") or settings.input_subdir not in parts:
                log.warning("compaction_dataset_skipped", folder=path,
                            reason=f"not below {settings.input_dir} and {settings.input_subdir}")
                continue
            at = parts.index(settings.input_subdir)
            name, when = "/".join(parts[:at]), "/".join(parts[at + 1:])
            folder_pattern = "YYYY/MM/dd/HH" if when.count("/") == 3 else "YYYY/MM/dd"
            folder_ms = self._parse(when, folder_pattern)
            if folder_ms is None:
                log.warning("compaction_dataset_skipped", folder=path, reason=f"{when!r} is no time folder")
                continue
            if not self._in_range(folder_ms, strict=True):
                continue
            yield self._dataset(name, when, folder_ms, folder_pattern)

    def _time_based(self) -> Iterator[Dataset]:
        settings = self.settings
        folder_glob = _GLOB_RUN.sub("*", settings.folder_pattern)
        for name_path in sorted(self.fs.glob(posixpath.join(self.input_root, settings.subdir_pattern))):
            if not self.fs.isdir(name_path):
                continue
            name = posixpath.relpath(name_path, self.input_root)
            base = posixpath.join(name_path, settings.input_subdir)
            for path in sorted(self.fs.glob(posixpath.join(base, folder_glob))):
                when = posixpath.relpath(path, base)
                if is_hidden(when) or not self.fs.isdir(path):
                    continue
                folder_ms = self._parse(when, settings.folder_pattern)
                if folder_ms is None:
                    log.warning("compaction_dataset_skipped", folder=path, reason=f"{when!r} does not match "
                                f"{settings.folder_pattern}")
                    continue
                if self._in_range(folder_ms, strict=False):
                    yield self._dataset(name, when, folder_ms, settings.folder_pattern)

    def _dataset(self, name: str, when: str, folder_ms: int, pattern: str) -> Dataset:
        s = self.settings
        return Dataset(name=name, time=when, folder_ms=folder_ms, end_ms=window_end_ms(folder_ms, pattern, self.zone),
                       input=posixpath.join(self.input_root, name, s.input_subdir, when),
                       input_late=posixpath.join(self.input_root, name, s.input_subdir + LATE, when),
                       dest=posixpath.join(self.dest_root, name, s.dest_subdir, when),
                       dest_late=posixpath.join(self.dest_root, name, s.dest_subdir + LATE, when))

    def _simple(self) -> Dataset:
        return Dataset(name=posixpath.basename(self.input_root.rstrip("/")), time="", folder_ms=None,
                       input=self.input_root, input_late=posixpath.join(self.input_root, LATE),
                       dest=self.dest_root, dest_late=posixpath.join(self.dest_root, LATE))
