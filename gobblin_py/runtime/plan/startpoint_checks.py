"""What a job's source can do with a startpoint: checked when an operator sets one, and again when a run loads
the stored ones (a file written by hand or by an older gpy), before any work.

A startpoint must be of a kind the source supports (its ``startpoint_kinds``); name a partition only where
the source has partitions (Kafka: a partition number); and a ``SPECIFIC`` value must be a watermark of the
source's type: a Kafka offset, a file modification time, a value of the SQL table's watermark type. A source
plugin — gpy's own sources too — checks its own with a class method ``check_startpoint(props, urn, partition,
startpoint)`` that raises :class:`~gobblin_py.sdk.errors.UsageError`; one without it is held to the kind only.
And it must name a dataset of the job: one with state, or one the source plans now.
"""

from __future__ import annotations

from collections.abc import Mapping

from gobblin_py.sdk.errors import UsageError
from gobblin_py.store.startpoints import DatasetStartpoints, Startpoint, StartpointStore


def check_startpoint(source: type, props: Mapping[str, str], urn: str, partition: str, point: Startpoint) -> None:
    """Raise UsageError unless the source of class ``source`` can start dataset ``urn`` (partition ``partition``,
    "" for the whole dataset) at ``point``."""
    supported = set(getattr(source, "startpoint_kinds", ()) or ())
    if point.kind.value not in supported:
        raise UsageError(f"source.class={source.__name__} cannot start at a {point.kind.value} startpoint (it supports "
                         f"{', '.join(sorted(supported)) or 'none'})")
    own = getattr(source, "check_startpoint", None)
    if callable(own):
        own(props, urn, partition, point)


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
