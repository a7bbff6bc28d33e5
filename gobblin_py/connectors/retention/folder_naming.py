"""Whether a retention job reads its version folders' names as they were written: warnings for ``gpy validate``.

A version folder's date is read with ``gobblin.retention.version.datetime.pattern`` in
``gobblin.retention.version.datetime.timezone`` (Gobblin's default, ``America/Los_Angeles``). Two mismatches can
be known from the folders themselves, and only those are warned about:

- the versions are ``<yyyyMMddHHmmss>_append`` folders (the glob ``gobblin.retention.version.globPattern`` ends in
  ``_append``, or such folders lie right below the datasets found, where ``writer.file.pathType=DEFAULT`` puts
  them): their names are a publish's extract id, which gpy
  writes in UTC, as Gobblin does. A pattern other than ``yyyyMMddHHmmss`` reads them wrong or not at all, and a
  time zone whose clock is not UTC's reads each one hours off — from Los Angeles, 7 or 8 hours too new, so a
  version is deleted that much later than its lookback says, and with a lookback of hours not at all;
- the pattern reads none of the folders below the datasets: nothing would ever be deleted.

Date-partitioned folders (``writer.partition.pattern``) are named in the writing job's
``writer.partition.timezone`` — Gobblin's default is ``America/Los_Angeles`` too — which nothing in the folders
records: no warning is given about their time zone.
"""

from __future__ import annotations

import posixpath
import re
from datetime import datetime, timedelta, timezone
from typing import Any

from gobblin_py.connectors.retention.settings import DATETIME_PATTERN_KEY, CleanerSettings
from gobblin_py.connectors.retention.versions import APPEND_SUFFIX, DateTimeDatasetVersionFinder, find_datasets
from gobblin_py.sdk.config_errors import ConfigWarning
from gobblin_py.sdk.errors import UsageError

TIMEZONE_KEY = "gobblin.retention.version.datetime.timezone"
EXTRACT_ID_PATTERN = "yyyyMMddHHmmss"  # a publish's extract id: the name of its _append folder, in UTC
_APPEND_FOLDER = re.compile(r"^\d{14}" + APPEND_SUFFIX + "$")
DATASETS_LOOKED_AT = 20  # validation lists the folders of this many datasets at most


def _utc_offsets(zone: Any) -> set[timedelta]:
    """The zone's offsets from UTC over the coming year (summer and winter)."""
    now = datetime.now(timezone.utc)
    return {(now + timedelta(days=days)).astimezone(zone).utcoffset() or timedelta(0) for days in (0, 91, 182, 273)}


def _folders(settings: CleanerSettings, glob: str) -> list[str]:
    """The folders below the first datasets the pattern finds that ``glob`` matches, relative to their dataset;
    none when they cannot be listed."""
    try:
        fs, _, datasets = find_datasets(settings)
        found = []
        for dataset in datasets[:DATASETS_LOOKED_AT]:
            for path, info in fs.glob(posixpath.join(dataset, glob), detail=True).items():
                if info.get("type") == "directory":
                    found.append(posixpath.relpath(path, dataset))
        return found
    except (OSError, UsageError, ValueError):
        return []


def folder_naming_warnings(settings: CleanerSettings) -> list[ConfigWarning]:
    """What the job's version pattern and time zone read wrong in the folders it targets (see the module)."""
    finder = DateTimeDatasetVersionFinder(settings)
    folders = _folders(settings, finder.glob)
    appends = [name for name in _folders(settings, "*" + APPEND_SUFFIX) if _APPEND_FOLDER.match(name)]
    if appends or (settings.version_glob or "").rstrip("/").endswith(APPEND_SUFFIX):
        example = f" ({appends[0]})" if appends else ""
        if finder.pattern != EXTRACT_ID_PATTERN:
            return [ConfigWarning(f"the version folders are <extract id>_append folders{example}, named "
                                  f"{EXTRACT_ID_PATTERN} in UTC; {finder.pattern!r} does not read them as such",
                                  key=DATETIME_PATTERN_KEY, hint=f"set it to {EXTRACT_ID_PATTERN} and {TIMEZONE_KEY} "
                                                                 "to UTC")]
        offsets = _utc_offsets(finder.zone)
        if offsets != {timedelta(0)}:
            hours = " or ".join(sorted({f"{abs(o.total_seconds()) / 3600:g}" for o in offsets if o}))
            late = "new" if any(o < timedelta(0) for o in offsets) else "old"
            return [ConfigWarning(f"{settings.timezone}, but the version folders are <extract id>_append "
                                  f"folders{example}, which gpy (as Gobblin) names in UTC: each version reads "
                                  f"{hours} hours too {late}, and is deleted that much "
                                  f"{'later' if late == 'new' else 'earlier'} than the lookback says",
                                  key=TIMEZONE_KEY, hint=f"set {TIMEZONE_KEY}=UTC")]
        return []
    if folders and all(finder.version_time(name) is None for name in folders):
        return [ConfigWarning(f"{finder.pattern!r} reads none of the {len(folders)} folder(s) below the datasets "
                              f"found ({folders[0]}, …): no version would ever be deleted", key=DATETIME_PATTERN_KEY,
                              hint="give the pattern the folders are named by")]
    return []
