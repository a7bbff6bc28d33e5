"""What a job's source can do with a startpoint: checked when an operator sets one, and again when a run loads
the stored ones (a file written by hand or by an older gpy), before any work.

A startpoint must be of a kind the source supports (its ``startpoint_kinds``:
:class:`~gobblin_py.sdk.startpoints.StartpointSource`); name a partition only where the source has partitions
(Kafka: a partition number); and a ``SPECIFIC`` value must be a watermark of the source's type: a Kafka offset, a
file modification time, a value of the SQL table's watermark type. A source plugin — gpy's own sources too —
checks its own (:class:`~gobblin_py.sdk.startpoints.ChecksStartpoints`); one without it is held to the kind only.
And it must name a dataset of the job: one with state, or one the source plans now.

When an operator sets one, the source's data is asked too (:func:`check_against_data`): a partition the dataset
does not have is refused, and so is a ``TIMESTAMP`` after the latest data, unless forced — such a startpoint
replays nothing: the run goes on from the checkpoint, as without it, which is seldom what was meant. A source
says what its data holds (:class:`~gobblin_py.sdk.startpoints.ReportsNewestEvent`): the newest event time of the
dataset's (or partition's) data, None when it cannot tell (Kafka: its last messages' timestamps; SQL: ``MAX`` of
the event column; files without an event column: the newest modification time), and a
:class:`~gobblin_py.sdk.errors.UsageError` for a partition it does not have; where it cannot tell, no data is
later than now, or than the newest event time committed.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.startpoints import ChecksStartpoints, ReportsNewestEvent, StartpointSource
from gobblin_py.store.startpoints import DatasetStartpoints, Startpoint, StartpointKind, StartpointStore, human_time


def check_startpoint(source: type, props: Mapping[str, str], urn: str, partition: str, point: Startpoint) -> None:
    """Raise UsageError unless the source of class ``source`` can start dataset ``urn`` (partition ``partition``,
    "" for the whole dataset) at ``point``."""
    supported = source.startpoint_kinds if isinstance(source, StartpointSource) else frozenset()
    if point.kind.value not in supported:
        raise UsageError(f"source.class={source.__name__} cannot start at a {point.kind.value} startpoint (it supports "
                         f"{', '.join(sorted(supported)) or 'none'})")
    if isinstance(source, ChecksStartpoints):
        source.check_startpoint(props, urn, partition, point)


def check_against_data(source: type, props: Mapping[str, str], urn: str, partition: str, point: Startpoint,
                       committed_ms: int | None, force: bool = False, ask_source: bool = True) -> None:
    """Raise UsageError when the source's data says no: a partition the dataset does not have, or a TIMESTAMP after
    the latest data (unless ``force``). ``committed_ms``: the newest event time committed for the dataset (or the
    partition), None when none was; ``ask_source``: False when the source is known to be unable to answer."""
    timed = point.kind is StartpointKind.TIMESTAMP
    newest = None
    if ask_source and (partition or timed) and isinstance(source, ReportsNewestEvent):
        newest = source.newest_event_ms(props, urn, partition)
    if not timed or force:
        return
    if newest is not None:
        latest, what = newest, "its newest record's time"
    else:
        latest, what = int(time.time() * 1000), "now: the source cannot say more"
    if committed_ms is not None and committed_ms > latest:
        latest, what = committed_ms, "the newest event time committed"
    if point.timestamp_ms > latest:
        where = f"dataset {urn!r}" + (f" partition {partition!r}" if partition else "")
        raise UsageError(f"--timestamp {human_time(point.timestamp_ms)} is after the latest data of {where} "
                         f"({human_time(latest)}, {what}): it would replay nothing (the next run would go on from "
                         "where the dataset stands, as without it); check the time, use --upcoming to skip to "
                         "what comes next, or give --force to set it anyway")


def check_stored(source: type, props: Mapping[str, str], store: StartpointStore, job: str,
                 points: Mapping[str, DatasetStartpoints]) -> None:
    """Check every stored startpoint of ``job``; the first that does not fit the source stops the run, naming
    its file."""
    for urn, dataset in sorted(points.items()):
        for partition, point in sorted(dataset.by_partition.items()):
            try:
                check_startpoint(source, props, urn, partition, point)
            except UsageError as exc:
                where = f" partition {partition!r}" if partition else ""
                raise UsageError(f"{store.display_path(job, urn)}: startpoint {point.id} of dataset {urn!r}{where}: "
                                 f"{exc}; remove it with `gpy state startpoint clear --dataset {urn!r}` (or set "
                                 "another)") from None



def check_dataset_known(job: str, urn: str, known: list[str]) -> None:
    """Raise UsageError unless ``urn`` is one of the job's datasets (``known``: those with state and those its
    source plans now), listing them and the closest name."""
    if urn in known:
        return
    close = [name for name in known if name and urn.endswith("." + name)]  # a namespace put before the name
    if not close:
        import difflib  # only for this error's hint: not imported by every run

        close = difflib.get_close_matches(urn, known, n=1, cutoff=0.6)
    shown = ", ".join(repr(name) for name in known[:20]) + (f" and {len(known) - 20} more" if len(known) > 20 else "")
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise UsageError(f"job {job} has no dataset {urn!r}: its datasets (with state, or planned by its source "
                     f"now) are {shown or 'none yet'}{hint}")
