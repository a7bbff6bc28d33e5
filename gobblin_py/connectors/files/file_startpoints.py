"""Where a file dataset starts for an operator's startpoint: the snapshot a run plans from, and which files it
pulls again as a replay.

``OLDEST`` forgets the snapshot, ``UPCOMING`` takes every listed file into it, ``SPECIFIC`` (a modification time)
keeps the files modified before it and takes in those listed before it. ``TIMESTAMP`` replays: it pulls again the
files pulled before whose records may reach the time, and never skips a file not pulled yet —

- without ``source.event.time.column``, a file's modification time stands for its records' time: the files
  pulled before and modified at or after the time are pulled again, whole;
- with it, the files pulled before from the earliest committed work unit whose records reach the time (the
  replay pairs of :mod:`gobblin_py.store.progress`; every file pulled before when there are none), and their
  records before the time are dropped.

A time after every file pulled before (after every record committed) has nothing to replay: the dataset goes on
from its snapshot, with a warning. Files not pulled yet are pulled whole either way: no record of theirs is
dropped for its time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gobblin_py.connectors.files.file_settings import SNAPSHOT_SEPARATOR
from gobblin_py.sdk.logs import get_logger
from gobblin_py.store.progress import replay_low
from gobblin_py.store.startpoints import Startpoint, StartpointKind, parse_time_ms

log = get_logger(__name__)


@dataclass
class Start:
    """The snapshot to plan from, and the snapshot entries of the files pulled again whose records before the
    startpoint's time are dropped."""

    snapshot: set[str]
    filtered: set[str] = field(default_factory=set)


def entry_mtime(entry: str) -> int:
    """The modification time a snapshot entry ``<path>:::<mtime ms>`` records (0 where it records none)."""
    try:
        return int(entry.rsplit(SNAPSHOT_SEPARATOR, 1)[1])
    except (IndexError, ValueError):
        return 0


def start(point: Startpoint, seen: set[str], listed: dict[str, int], previous: Any, urn: str,
          event_column: str | None) -> Start:
    """Where dataset ``urn`` starts for ``point``: ``seen`` is its snapshot, ``listed`` its files now (snapshot
    entry → modification time), ``previous`` its latest state."""
    if point.kind is StartpointKind.OLDEST:
        return Start(set())
    if point.kind is StartpointKind.UPCOMING:
        return Start(seen | set(listed))
    # a listed file's own modification time decides: some snapshots (AvroFileSource's) record none
    mtime = lambda entry: listed.get(entry, entry_mtime(entry))  # noqa: E731
    if point.kind is StartpointKind.SPECIFIC:
        at = parse_time_ms(str(point.value), "startpoint value")
        return Start({e for e in seen if mtime(e) < at} | {e for e, m in listed.items() if m < at})
    since: int | None = point.timestamp_ms
    if event_column:
        found, low = replay_low(previous, "", point.timestamp_ms)
        since = None if not found else (int(low) if low is not None else -1)  # -1: no pairs, every file again
    kept = seen if since is None else {e for e in seen if mtime(e) < since}
    again = (seen - kept) & set(listed)
    if not again:
        log.warning("startpoint_nothing_to_replay", dataset=urn, startpoint=point.describe(),
                    note="no file pulled before holds a record at or after the time (without "
                         "source.event.time.column: none was modified at or after it): nothing to replay; the files "
                         "not pulled yet are pulled as usual")
    return Start(kept, again if event_column else set())
