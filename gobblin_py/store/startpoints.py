"""Startpoints: where an operator asks a dataset, or one partition of it, to start at its next run.

An operator sets a startpoint with ``gpy state startpoint set``: ``OLDEST`` (everything the source still has),
``UPCOMING`` (skip what exists now), ``TIMESTAMP`` (records with an event time at or after a time) or ``SPECIFIC``
(a watermark value: an offset, an id, a time). Each has an id and a creation time.

They live in their own store beside the state store, never inside the checkpoints:
``<startpoint store>/<job>/<url-quoted urn>.json`` (default ``<state.store.dir>/_startpoints``), one file per
dataset, each written atomically. The next run fans a dataset's startpoint out to its partitions (a
partition's own startpoint wins) and the source starts there instead of at the checkpointed watermark. A
startpoint is removed only by the commit that consumed it — a step of the dataset's commit sequence,
:class:`StartpointsConsumedStep` — so a failed or crashed run keeps it for the next.
"""

from __future__ import annotations

import enum
import json
import posixpath
import time
import uuid
from collections.abc import Set as AbstractSet
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any
from urllib.parse import quote, unquote

from gobblin_py.io import fs as fsutil
from gobblin_py.sdk.errors import CorruptFileError, UsageError
from gobblin_py.store.folders import require_folder

STORE_DIR_KEY = "gobblin.startpoint.store.dir"
APPLIED_KEY = "startpoint.applied"  # on a work unit: the ids of the startpoints it was planned from
TIMESTAMP_KEY = "startpoint.timestamp"  # on a work unit replayed from a time: records before it are filtered
FILTERED_KEY = "gpy.records.filtered.timestamp"  # on a task state: records the timestamp filter dropped
POINTS_KEY = "startpoint.applied.points"  # on a work unit: the startpoints it was planned from, as JSON by id
SKIPPED_KEY = "startpoint.rows.skipped"  # on one work unit: rows before a time the query left unread
UNKNOWN = "unknown"  # SKIPPED_KEY of a source that did not count them
DATASET = ""  # the partition key of a dataset-level startpoint
# Times are epoch milliseconds from 1970 (Kafka reads a negative time as "latest" or "earliest") to the end of
# year 9999, the last that dates and ISO 8601 write.
MIN_TIME_MS, MAX_TIME_MS = 0, 253_402_300_799_999
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


class StartpointKind(str, enum.Enum):
    """Where to start (Samza's four kinds)."""

    OLDEST = "OLDEST"
    UPCOMING = "UPCOMING"
    TIMESTAMP = "TIMESTAMP"
    SPECIFIC = "SPECIFIC"


@dataclass(frozen=True)
class Startpoint:
    """One requested start position. ``value``: epoch milliseconds for TIMESTAMP, the watermark for SPECIFIC."""

    kind: StartpointKind
    value: str | None = None
    created_ms: int = field(default_factory=lambda: int(time.time() * 1000))
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])

    def __post_init__(self) -> None:
        if self.kind in (StartpointKind.TIMESTAMP, StartpointKind.SPECIFIC) and self.value in (None, ""):
            raise UsageError(f"a {self.kind.value} startpoint needs a value")
        if self.kind is StartpointKind.TIMESTAMP:
            if not str(self.value).lstrip("-").isdigit():
                raise UsageError(f"a TIMESTAMP startpoint's value is epoch milliseconds, not {self.value!r}")
            check_time_ms(int(str(self.value)), str(self.value), "a TIMESTAMP startpoint's time")
        check_time_ms(self.created_ms, str(self.created_ms), "the startpoint's creation time")

    @property
    def timestamp_ms(self) -> int:
        return int(self.value or 0)

    def describe(self) -> str:
        created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.created_ms / 1000))
        if self.kind is StartpointKind.TIMESTAMP:
            at = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(self.timestamp_ms / 1000))
            what = f"TIMESTAMP {at}.{self.timestamp_ms % 1000:03d}Z"
        elif self.kind is StartpointKind.SPECIFIC:
            what = f"SPECIFIC {self.value}"
        else:
            what = self.kind.value
        return f"{what} (id {self.id}, set {created})"

    def position(self) -> str:
        """Where it starts, as people read it: a time, a watermark, the oldest data or what comes next."""
        if self.kind is StartpointKind.TIMESTAMP:
            return human_time(self.timestamp_ms)
        if self.kind is StartpointKind.SPECIFIC:
            return f"watermark {self.value}"
        return "the oldest data" if self.kind is StartpointKind.OLDEST else "what comes after now"

    def human(self) -> str:
        """``2026-11-03T08:00:00Z (TIMESTAMP startpoint bd0f1849930d, set 2026-11-26T04:20:33Z)``."""
        return f"{self.position()} ({self.kind.value} startpoint {self.id}, set {human_time(self.created_ms)})"

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "kind": self.kind.value}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Startpoint:
        value = data.get("value")
        return cls(StartpointKind(data["kind"]), None if value is None else str(value), int(data["created_ms"]),
                   str(data["id"]))


@dataclass
class DatasetStartpoints:
    """The startpoints of one dataset: its own (partition ``""``) and its partitions'."""

    urn: str
    by_partition: dict[str, Startpoint] = field(default_factory=dict)

    def for_partition(self, partition: str) -> Startpoint | None:
        """The partition's own startpoint, else the dataset's (the fan-out), else None."""
        return self.by_partition.get(partition) or self.by_partition.get(DATASET)

    def ids(self) -> set[str]:
        return {sp.id for sp in self.by_partition.values()}


class StartpointStore:
    """Startpoints of every job and dataset on any fsspec filesystem, one JSON file per dataset."""

    def __init__(self, root: str, fs_uri: str | None = None) -> None:
        self.fs, self.root = fsutil.open_fs(root, fs_uri)
        self.url = root

    @classmethod
    def for_job(cls, props: Any) -> StartpointStore:
        """The store a job uses: ``gobblin.startpoint.store.dir``, else ``<state.store.dir>/_startpoints``."""
        root = props.get(STORE_DIR_KEY) or posixpath.join(str(props.get("state.store.dir") or ""), "_startpoints")
        if not props.get(STORE_DIR_KEY) and not props.get("state.store.dir"):
            raise UsageError("state.store.dir is not set: startpoints live beside the state store")
        store = cls(root, props.get("state.store.fs.uri"))
        require_folder(store.fs, store.root, STORE_DIR_KEY if props.get(STORE_DIR_KEY) else "state.store.dir/_startpoints")
        return store

    def _path(self, job: str, urn: str) -> str:
        name = quote(urn, safe="._-") if urn else "default_dataset_urn"
        return posixpath.join(self.root, job, f"{name}.json")

    def display_path(self, job: str, urn: str) -> str:
        """The file of a dataset's startpoints, as a user names it."""
        path = self._path(job, urn)
        return path if fsutil.is_local(self.fs) else self.fs.unstrip_protocol(path)

    def get(self, job: str, urn: str) -> DatasetStartpoints:
        path = self._path(job, urn)
        try:
            data = json.loads(self.fs.cat_file(path).decode("utf-8"))
            return DatasetStartpoints(data["urn"], {p: Startpoint.from_json(s) for p, s in data["partitions"].items()})
        except FileNotFoundError:
            return DatasetStartpoints(urn)
        except (ValueError, KeyError, TypeError, AttributeError, UsageError) as exc:
            raise CorruptFileError(self.display_path(job, urn), f"not a readable startpoint file ({exc}); fix "
                                   f"or remove it (`gpy state startpoint clear --dataset {urn!r}`)") from None

    def put(self, job: str, points: DatasetStartpoints) -> None:
        path = self._path(job, points.urn)
        if not points.by_partition:
            if self.fs.exists(path):
                fsutil.remove(self.fs, path)
            return
        data = {"urn": points.urn, "partitions": {p: s.to_json() for p, s in sorted(points.by_partition.items())}}
        fsutil.atomic_write(self.fs, path, json.dumps(data, indent=1, sort_keys=True).encode("utf-8"))

    def all(self, job: str) -> dict[str, DatasetStartpoints]:
        """Every dataset of ``job`` with startpoints, by URN."""
        out = {}
        for name in fsutil.list_names(self.fs, posixpath.join(self.root, job)):
            if name.endswith(".json"):
                urn = "" if name == "default_dataset_urn.json" else unquote(name[:-5])
                points = self.get(job, urn)
                if points.by_partition:
                    out[points.urn] = points
        return out

    def set(self, job: str, urn: str, partition: str, startpoint: Startpoint) -> None:
        points = self.get(job, urn)
        points.by_partition[partition] = startpoint
        self.put(job, points)

    def clear(self, job: str, urn: str | None = None) -> int:
        """Remove every startpoint of ``job`` (or of one dataset); how many were removed. An unreadable file
        is removed too (and counts as one): clearing is how an operator gets rid of it."""
        folder = posixpath.join(self.root, job)
        names = [n for n in fsutil.list_names(self.fs, folder) if n.endswith(".json")] if urn is None else []
        targets = [urn] if urn is not None else ["" if n == "default_dataset_urn.json" else unquote(n[:-5]) for n in names]
        removed = 0
        for target in targets:
            path = self._path(job, target)
            try:
                removed += len(self.get(job, target).by_partition)
            except CorruptFileError:
                removed += 1
            if self.fs.exists(path):
                fsutil.remove(self.fs, path)
        return removed

    def remove_ids(self, job: str, urn: str, ids: AbstractSet[str]) -> None:
        """Remove the startpoints with these ids (those a commit consumed); others, set since, stay."""
        points = self.get(job, urn)
        kept = {p: s for p, s in points.by_partition.items() if s.id not in ids}
        if len(kept) != len(points.by_partition):
            self.put(job, DatasetStartpoints(urn, kept))


# -- what a source that supports startpoints uses while it plans ---------------------------------------------------

def startpoint_for(state: Any, urn: str, partition: str = DATASET) -> Startpoint | None:
    """The startpoint a source's ``SourceState`` holds for one partition of a dataset (or the dataset's own)."""
    points = getattr(state, "startpoints", {}).get(urn)
    return points.for_partition(partition) if points is not None else None


def mark_applied(unit: Any, startpoint: Startpoint, filtered: bool = True) -> None:
    """Record on a work unit that it was planned from ``startpoint`` (its commit will consume it). ``filtered``:
    the records of a TIMESTAMP startpoint before its time are dropped as they are read (false when the source
    left them unread)."""
    ids = [i for i in (unit.get_prop(APPLIED_KEY) or "").split(",") if i]
    if startpoint.id not in ids:
        unit.set_prop(APPLIED_KEY, ",".join([*ids, startpoint.id]))
    points = json.loads(unit.get_prop(POINTS_KEY) or "{}")
    points[startpoint.id] = startpoint.to_json()
    unit.set_prop(POINTS_KEY, json.dumps(points, sort_keys=True))
    if filtered:
        filter_before_startpoint(unit, startpoint)


def carry_applied(carrier: Any, units: list[Any]) -> None:
    """A work unit that stands for several (a Kafka task of many partitions) carries all their startpoints."""
    applied = sorted({i for unit in units for i in applied_ids(unit)})
    if applied:
        carrier.set_prop(APPLIED_KEY, ",".join(applied))
        points = {k: v for unit in units for k, v in json.loads(unit.get_prop(POINTS_KEY) or "{}").items()}
        carrier.set_prop(POINTS_KEY, json.dumps(points, sort_keys=True))


def used_startpoints(tasks: list[Any]) -> list[dict[str, Any]]:
    """The startpoints a dataset's tasks were planned from, as the summary and the run history show them: kind,
    where (a time in ISO 8601, a watermark), when set, and for a TIMESTAMP startpoint the rows before its time
    that were skipped (left unread by the query, or read and dropped)."""
    points: dict[str, Startpoint] = {}
    for task in tasks:
        for data in json.loads(task.get_prop(POINTS_KEY) or "{}").values():
            point = Startpoint.from_json(data)
            points[point.id] = point
    unread = [task.get_prop(SKIPPED_KEY) for task in tasks]
    skipped = None if UNKNOWN in unread else sum(int(task.get_prop(FILTERED_KEY) or 0) for task in tasks) + sum(
        int(n or 0) for n in unread)
    return [{"id": p.id, "kind": p.kind.value,
             "value": human_time(p.timestamp_ms) if p.kind is StartpointKind.TIMESTAMP else p.value,
             "set": human_time(p.created_ms),
             "rows_skipped": skipped if p.kind is StartpointKind.TIMESTAMP else None}
            for p in sorted(points.values(), key=lambda p: p.created_ms)]


def used_text(used: dict[str, Any]) -> str:
    """One startpoint of :func:`used_startpoints` in a line: ``TIMESTAMP 2026-11-03T08:00:00Z (id …, set …)``."""
    where = f" {used['value']}" if used.get("value") is not None else ""
    skipped = f", {used['rows_skipped']} row(s) before it skipped" if used.get("rows_skipped") is not None else ""
    return f"{used['kind']}{where} (id {used['id']}, set {used['set']}){skipped}"


def human_time(ms: int) -> str:
    """Epoch milliseconds in ISO 8601 UTC, the milliseconds only when there are some."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000))
    return f"{stamp}{f'.{ms % 1000:03d}' if ms % 1000 else ''}Z"


def filter_before_startpoint(unit: Any, startpoint: Startpoint) -> None:
    """Ask a work unit of a dataset replayed from a time to drop the records before it (every unit of the
    dataset, not only the one that carries the startpoint to the commit)."""
    if startpoint.kind is StartpointKind.TIMESTAMP:
        unit.set_prop(TIMESTAMP_KEY, str(startpoint.timestamp_ms))


def applied_ids(unit: Any) -> set[str]:
    """The ids of the startpoints a work unit (or a task state, through its work unit) was planned from."""
    return {i for i in (unit.get_prop(APPLIED_KEY) or "").split(",") if i}


def check_time_ms(ms: int, text: str, what: str) -> int:
    """``ms`` if it is a time a startpoint can hold, else UsageError naming ``what`` and the ``text`` given."""
    if not MIN_TIME_MS <= ms <= MAX_TIME_MS:
        raise UsageError(f"{what} {text!r} is out of range: a time is from 1970-01-01T00:00:00Z (epoch ms "
                         f"{MIN_TIME_MS}) to 9999-12-31T23:59:59.999Z (epoch ms {MAX_TIME_MS})")
    return ms


def parse_time_ms(text: str, what: str = "time") -> int:
    """Epoch milliseconds from digits, or from an ISO 8601 date or time (a time without a zone is UTC), within
    the range a startpoint can hold (UsageError naming ``what`` otherwise)."""
    text = text.strip()
    if text.lstrip("-").isdigit():
        return check_time_ms(int(text), text, what)
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"{what} {text!r}: use epoch milliseconds or ISO 8601 (2024-03-01T09:00:00Z)") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    try:
        ms = (parsed - _EPOCH) // timedelta(milliseconds=1)
    except OverflowError:  # a zone that moves 9999-12-31 past the end of datetime's range
        ms = MAX_TIME_MS + 1
    return check_time_ms(ms, text, what)


def whole_number(text: str, highest: int) -> int | None:
    """``text`` as a whole number from 0 to ``highest``, else None (a startpoint's partition or value)."""
    text = text.strip()
    return int(text) if text.isdigit() and int(text) <= highest else None


def no_partition(source: str, partition: str) -> None:
    """UsageError if a startpoint names a partition of a source that reads none."""
    if partition:
        raise UsageError(f"partition {partition!r}: {source} reads no partitions; set the startpoint for the "
                         "whole dataset (without --partition)")
