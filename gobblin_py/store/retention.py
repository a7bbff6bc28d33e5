"""Retention of a state store: the run files of each dataset older than a lookback are deleted, the state the
next run starts from never.

What Gobblin's ``DatasetCleanerJob`` does with ``TimeBasedDatasetStoreDatasetFinder``: every ``.jst`` file of a
job's folder is a version of its dataset (the file name's stem), timestamped by its modification time, and a
selection policy (``SelectBeforeTimeBasedPolicy`` with ``selection.timeBased.lookbackTime``, possibly combined
with ``NewestKSelectionPolicy``) picks the versions to delete. Unlike Gobblin, a dataset's ``current`` file and
the run file it is a copy of are never deleted, whatever the policy says (Gobblin's cleaner would delete an old
``current``, and the next run would start the dataset from nothing); a dataset with no ``current`` file keeps its
newest run file. Each deletion removes one whole file, so a crash at any point leaves a store every run reads.
"""

from __future__ import annotations

import calendar
import posixpath
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

from gobblin_py.io import fs as fsutil
from gobblin_py.io.crash_points import phase
from gobblin_py.sdk.errors import StateStoreError, UsageError
from gobblin_py.store.store import CURRENT, TABLE_NAME_RE, TABLE_SUFFIX, FsDatasetStateStore, sanitize_job_id

DELETE_PHASE = "retention.delete"  # the crash tests' kill point: around each file deleted
_PERIOD = re.compile(r"^(?:(\d+)y)?(?:(\d+)M)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?$")


@dataclass(frozen=True)
class Lookback:
    """A Joda ``Period`` as Gobblin's time-based selection policies write it: ``1y2M3d4h5m`` (each part optional,
    in this order; ``M`` months, ``m`` minutes)."""

    years: int = 0
    months: int = 0
    days: int = 0
    hours: int = 0
    minutes: int = 0

    @classmethod
    def parse(cls, text: str, key: str) -> Lookback:
        """The period ``text`` holds; UsageError naming ``key`` when it is not one."""
        match = _PERIOD.match(text.strip())
        if not match or not any(match.groups()):
            raise UsageError(f"{key}={text!r}: not a lookback time; write it as Gobblin does, e.g. 30d, 18h, "
                             "1d12h, 30m (y years, M months, d days, h hours, m minutes)")
        return cls(*(int(g or 0) for g in match.groups()))

    def cutoff(self, now: float) -> float:
        """The epoch second ``now`` minus this period (months and years by the calendar, in UTC)."""
        moment = datetime.fromtimestamp(now, timezone.utc)
        month_index = moment.year * 12 + moment.month - 1 - self.years * 12 - self.months
        year, month = divmod(month_index, 12)
        day = min(moment.day, calendar.monthrange(year, month + 1)[1])
        shifted = moment.replace(year=year, month=month + 1, day=day).timestamp()
        return shifted - ((self.days * 24 + self.hours) * 60 + self.minutes) * 60


@dataclass(frozen=True)
class Version:
    """One version of a dataset: where it is, and its time (epoch seconds)."""

    path: str
    time: float


# A selection policy: from a dataset's versions, newest first, the ones it selects (for deletion).
Policy = Callable[[Sequence[Version], float], list[Version]]


def select_before(lookback: Lookback) -> Policy:
    """Gobblin's ``SelectBeforeTimeBasedPolicy``: the versions older than the lookback."""
    return lambda versions, now: [v for v in versions if v.time < lookback.cutoff(now)]


def select_between(min_lookback: Lookback | None, max_lookback: Lookback | None) -> Policy:
    """Gobblin's ``SelectBetweenTimeBasedPolicy``: older than the min lookback and not older than the max one."""
    def select(versions: Sequence[Version], now: float) -> list[Version]:
        newest = min_lookback.cutoff(now) if min_lookback else now
        oldest = max_lookback.cutoff(now) if max_lookback else float("-inf")
        return [v for v in versions if oldest < v.time < newest]
    return select


def newest_k(count: int, exclude: bool) -> Policy:
    """Gobblin's ``NewestKSelectionPolicy``: the ``count`` newest versions, or (``exclude``) all but them."""
    return lambda versions, now: list(versions[count:] if exclude else versions[:count])


def combine(policies: Sequence[Policy], operation: str) -> Policy:
    """Gobblin's ``CombineSelectionPolicy``: what every policy selects (``intersect``) or any does (``union``)."""
    def select(versions: Sequence[Version], now: float) -> list[Version]:
        chosen = [{v.path for v in policy(versions, now)} for policy in policies]
        paths = set.intersection(*chosen) if operation == "intersect" else set.union(*chosen)
        return [v for v in versions if v.path in paths]
    return select


@dataclass(frozen=True)
class StateDeletion:
    """A run file retention deletes: its job, the file, when it was written."""

    job: str
    path: str
    time: float

    def describe(self) -> str:
        when = datetime.fromtimestamp(self.time, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        return f"{self.job}  {self.path}  written {when}"


def _parse(table: str) -> tuple[str, bool] | None:
    """``(stem, is the current file)`` of a state file's name; None for a name not in Gobblin's layout."""
    match = TABLE_NAME_RE.match(table)
    return None if match is None else (match.group(1) or "", match.group(2) == CURRENT)


def _entries(store: FsDatasetStateStore, job_dir: str) -> list[tuple[str, float]]:
    """``(file name, modification time)`` of every state file of a job's folder, one listing."""
    try:
        listed = store.fs.ls(job_dir, detail=True)
    except FileNotFoundError:
        return []
    entries = []
    for entry in listed:
        name = posixpath.basename(entry["name"].rstrip("/"))
        if entry.get("type") == "directory" or name.startswith((".", "_")) or not name.endswith(TABLE_SUFFIX):
            continue
        mtime = entry.get("mtime")
        if mtime is None:
            mtime = store.fs.modified(posixpath.join(job_dir, name)).timestamp()
        entries.append((name, float(mtime)))
    return entries


def _kept_run(store: FsDatasetStateStore, job: str, stem: str, runs: list[tuple[str, float]],
              names: set[str]) -> str | None:
    """The run file a dataset's next run starts from: the one its ``current`` file copies, else its newest."""
    current = f"{stem}-{CURRENT}{TABLE_SUFFIX}" if stem else f"{CURRENT}{TABLE_SUFFIX}"
    if current in names:
        records = store.read_table(job, current)
        if records:
            run_id = sanitize_job_id(records[0][1].job_id)
            return f"{stem}-{run_id}{TABLE_SUFFIX}" if stem else f"{run_id}{TABLE_SUFFIX}"
    return max(runs, key=lambda r: (r[1], r[0]))[0] if runs else None


def plan_state_clean(store: FsDatasetStateStore, policy: Policy, jobs: Iterable[str] | None = None,
                     now: float | None = None) -> list[StateDeletion]:
    """The run files ``policy`` selects in each job's folder (all jobs of the store unless ``jobs``), oldest
    first; never a ``current`` file nor the run file each dataset's next run starts from."""
    now = time.time() if now is None else now
    deletions: list[StateDeletion] = []
    for job in (store.job_names() if jobs is None else jobs):
        job_dir = store.job_dir(job)
        entries = _entries(store, job_dir)
        names = {name for name, _ in entries}
        by_stem: dict[str, list[tuple[str, float, bool]]] = {}
        for name, mtime in entries:
            parsed = _parse(name)
            if parsed is not None:
                by_stem.setdefault(parsed[0], []).append((name, mtime, parsed[1]))
        for stem, tables in by_stem.items():
            files = [(n, t) for n, t, _ in tables]
            runs = [(n, t) for n, t, current in tables if not current]
            protected = {n for n, _, current in tables if current}
            kept = _kept_run(store, job, stem, runs, names)
            if kept is not None:
                protected.add(kept)
            # every file is a version, as in Gobblin (the newest-K policies count the current one too)
            versions = sorted((Version(posixpath.join(job_dir, n), t) for n, t in files),
                              key=lambda v: (v.time, v.path), reverse=True)
            for version in policy(versions, now):
                if posixpath.basename(version.path) not in protected:
                    deletions.append(StateDeletion(job, version.path, version.time))
    return sorted(deletions, key=lambda d: (d.job, d.time, d.path))


def delete_state_files(store: FsDatasetStateStore, deletions: Iterable[StateDeletion]) -> int:
    """Delete the planned run files, one at a time (each its own crash point); returns how many went. A file
    gone meanwhile (another cleaner) is skipped."""
    deleted = 0
    root = posixpath.normpath(store.root)
    for deletion in deletions:
        job_dir = posixpath.normpath(store.job_dir(deletion.job))
        if posixpath.dirname(posixpath.normpath(deletion.path)) != job_dir or not job_dir.startswith(root):
            raise StateStoreError(f"{deletion.path}: not a state file of job {deletion.job!r} under {store.root}")
        with phase(DELETE_PHASE):
            try:
                fsutil.remove(store.fs, deletion.path)
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise StateStoreError(f"cannot delete {store.display_path(deletion.path)}: {exc}") from exc
        deleted += 1
    return deleted
