"""What a job's source can do with a startpoint: checked when an operator sets one, and again when a run loads
the stored ones (a file written by hand or by an older gpy), before any work.

A startpoint must be of a kind the source supports (its ``startpoint_kinds``); name a partition only where
the source has partitions (Kafka: a partition number); and a ``SPECIFIC`` value must be a watermark of the
source's type: a Kafka offset, a file modification time, a value of the SQL table's watermark type. A source
plugin checks its own with a class method ``check_startpoint(props, urn, partition, startpoint)`` that raises
:class:`~gobblin_py.sdk.errors.UsageError`; one without it is held to the kind only.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping

from gobblin_py.sdk.errors import UsageError
from gobblin_py.store.hadoop_io import INT_MAX, LONG_MAX
from gobblin_py.store.startpoints import DatasetStartpoints, Startpoint, StartpointKind, StartpointStore, parse_time_ms

Check = Callable[[Mapping[str, str], str, str, Startpoint], None]


def _whole(text: str, highest: int) -> int | None:
    """``text`` as a whole number from 0 to ``highest``, else None."""
    text = text.strip()
    return int(text) if text.isdigit() and int(text) <= highest else None


def _no_partition(source: str, partition: str) -> None:
    if partition:
        raise UsageError(f"partition {partition!r}: {source} reads no partitions; set the startpoint for the "
                         "whole dataset (without --partition)")


def _kafka(props: Mapping[str, str], urn: str, partition: str, point: Startpoint) -> None:
    if partition and _whole(partition, INT_MAX) is None:
        raise UsageError(f"partition {partition!r} is not a Kafka partition number (0, 1, 2 …)")
    if point.kind is StartpointKind.SPECIFIC and _whole(str(point.value), LONG_MAX) is None:
        raise UsageError(f"value {point.value!r} is not a Kafka offset (a whole number from 0 to {LONG_MAX})")


def _files(props: Mapping[str, str], urn: str, partition: str, point: Startpoint) -> None:
    _no_partition("FileBasedSource", partition)
    if point.kind is StartpointKind.SPECIFIC:
        try:
            parse_time_ms(str(point.value), "value")
        except UsageError as exc:
            raise UsageError(f"value {point.value!r} is not a file modification time, the watermark of "
                             f"FileBasedSource: {exc}") from None


def _sql(props: Mapping[str, str], urn: str, partition: str, point: Startpoint) -> None:
    from gobblin_py.connectors.sql import keys as K
    from gobblin_py.connectors.sql.settings import entity_key
    from gobblin_py.connectors.sql.watermarks import SIMPLE, TIMESTAMP, parse_value, watermark_type

    _no_partition("QueryBasedSource", partition)
    if point.kind is not StartpointKind.SPECIFIC:
        return
    configured = watermark_type(props.get(entity_key(props, urn, K.WATERMARK_TYPE)))
    value = str(point.value)
    try:
        if configured is not None:  # the zone only moves CURRENTDAY-n, which is valid in any zone
            parsed = parse_value(value, configured, "value", dt.timezone.utc)
        else:  # the column decides at the run: a whole number or a time
            try:
                parsed = parse_value(value, SIMPLE, "value", dt.timezone.utc)
            except UsageError:
                parsed = parse_value(value, TIMESTAMP, "value", dt.timezone.utc)
        if not -LONG_MAX - 1 <= parsed <= LONG_MAX:
            raise UsageError(f"value={value}: beyond a watermark's range (a Java long)")
    except UsageError as exc:
        raise UsageError(f"value {value!r} is not a watermark of table {urn} "
                         f"({configured or 'a whole number or a time'}): {exc}") from None


# gpy's sources that take startpoints, by class path (their subclasses too)
_BUILT_IN: dict[str, Check] = {
    "gobblin_py.connectors.kafka.source.KafkaSimpleSource": _kafka,
    "gobblin_py.connectors.files.filebased.FileBasedSource": _files,
    "gobblin_py.connectors.sql.source.QueryBasedSource": _sql,
}


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
        return
    for cls in source.__mro__:
        check = _BUILT_IN.get(f"{cls.__module__}.{cls.__qualname__}")
        if check is not None:
            check(props, urn, partition, point)
            return


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
