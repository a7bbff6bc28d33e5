"""Where each partition starts and ends this run: stored offsets, bootstrap and out-of-range rules (Gobblin's).

A partition's work is ``[start, latest)``: ``latest`` is the partition's last stable offset when the run is
planned, so a run is a bounded batch that leaves what arrives meanwhile for the next run. ``start`` is

1. the latest offset when the topic is in ``topics.move.to.latest.offset`` (or it says ``all``);
2. without a stored offset, per ``bootstrap.with.offset``: ``latest``, ``earliest``, ``offset_lookback``
   (``latest - kafka.offset.lookback``), or ``skip`` (no work unit, nothing stored); for a partition added to a
   topic the job already pulls, the messages this skips are reported as lost;
3. the stored offset (the previous run's actual high watermark) when ``earliest <= stored <= latest``;
4. otherwise per ``reset.on.offset.out.of.range``: ``earliest``, ``latest``, ``nearest`` (earliest when the stored
   offset fell below the range, latest when it is beyond it), or ``skip`` (stored offset kept, nothing pulled).

A topic deleted and created again since the stored offsets were read (:mod:`.recreated` finds it) has no stored
offset: its partitions start per rule 2, with a warning and the messages skipped counted as lost.

Stored offsets are read from every previous task state of the job, Gobblin's layouts included: per-topic
datasets (``dataset.urn`` = topic) win over a job-level state (URN ``""``) that Gobblin writes by default.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gobblin_py.connectors.kafka import keys as K
from gobblin_py.connectors.kafka.settings import KafkaSourceSettings
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.run_states import SourceState
from gobblin_py.sdk.states import WorkUnitState
from gobblin_py.sdk.watermarks import MultiLongWatermark
from gobblin_py.store.startpoints import DatasetStartpoints, Startpoint, StartpointKind

log = get_logger(__name__)


@dataclass
class Previous:
    """What the previous runs left for one partition."""

    offset: int | None = None  # the actual high watermark: the next offset to read
    low: int | None = None
    expected: int | None = None
    leader_id: str | None = None
    leader: str | None = None
    times: dict[str, int] = field(default_factory=dict)  # offsetFetch/startFetch/stopFetchEpochTime
    avg_millis: float | None = None
    avg_size: float | None = None
    topic_id: str | None = None  # the topic's id when the offsets were read, where the broker gave one
    last_offset: int | None = None  # the last message read of the partition, ever: its offset
    last_timestamp: int | None = None  # … and its timestamp

    @property
    def complete(self) -> bool:
        """Gobblin uses a stored offset only when actual, low and expected high watermarks are all there."""
        return self.offset is not None and self.low is not None and self.expected is not None


def _values(data: object) -> list[int] | None:
    try:
        return list(MultiLongWatermark.from_json(data).values)
    except (ValueError, TypeError):
        return None


def previous_partitions(state: SourceState) -> dict[tuple[str, int], Previous]:
    """Every partition's stored position, from the latest state of each dataset (topic URNs over ``""``)."""
    found: dict[tuple[str, int], Previous] = {}
    datasets = state.previous_workunit_states_by_urn()
    for urn in sorted(datasets, key=lambda u: (u != "", u)):  # the job-level state first: topic states win
        for unit in datasets[urn]:
            _read_unit(unit, urn, found)
    return found


def _read_unit(unit: WorkUnitState, urn: str, found: dict[tuple[str, int], Previous]) -> None:
    topic = unit.get_prop(K.TOPIC)
    partitions = K.partitions_of(unit)
    interval = unit.workunit.watermark_interval
    if not topic or not partitions or interval is None:
        return
    low, expected = _values(interval.low_json), _values(interval.expected_high_json)
    actual = _values(unit.actual_high_watermark())
    if actual is None or low is None or expected is None:
        raise UsageError(f"dataset {urn!r}: a stored work unit of topic {topic} has no readable MultiLongWatermark "
                         "(was it written by another source?); reset the dataset's state")
    if not len(partitions) == len(actual) == len(low) == len(expected):
        raise UsageError(f"dataset {urn!r}: a stored work unit of topic {topic} names {len(partitions)} partitions "
                         f"but holds {len(actual)} offsets; the state is inconsistent: reset the dataset's state")
    for i, pid in enumerate(partitions):
        entry = found.setdefault((topic, pid), Previous())
        # -1 means "absent" in Gobblin's watermarks
        entry.offset = actual[i] if actual[i] != -1 else entry.offset
        entry.low = low[i] if low[i] != -1 else entry.low
        entry.expected = expected[i] if expected[i] != -1 else entry.expected
        entry.leader_id = unit.get_prop(f"{K.LEADER_ID}.{i}") or unit.get_prop(K.LEADER_ID) or entry.leader_id
        entry.leader = unit.get_prop(f"{K.LEADER}.{i}") or unit.get_prop(K.LEADER) or entry.leader
        for key in (K.OFFSET_FETCH_TIME, K.START_FETCH_TIME, K.STOP_FETCH_TIME):
            entry.times[key] = K.indexed_long(unit, key, i)
        entry.topic_id = unit.get_prop(K.TOPIC_ID) or entry.topic_id
        last = [_whole(unit.get_prop(K.partition_key(topic, pid, key))) for key in (K.LAST_OFFSET, K.LAST_TIMESTAMP)]
        if last[0] is not None and last[1] is not None:
            entry.last_offset, entry.last_timestamp = last
        for attr, what in (("avg_millis", K.AVG_RECORD_MILLIS), ("avg_size", K.AVG_RECORD_SIZE)):
            value = unit.get_prop(K.partition_key(topic, pid, what))
            if value is not None:
                try:
                    setattr(entry, attr, float(value))
                except ValueError:
                    pass


def _whole(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


@dataclass
class PartitionPlan:
    """One partition's work this run: read ``[low, high)``; ``low == high`` carries the offset unchanged."""

    topic: str
    partition: int
    low: int
    high: int
    leader_id: str
    leader: str
    fetched_at: int
    previous: Previous | None
    lost: int = 0
    changed: bool = True  # False: nothing to read and the stored offset stays: the topic may sit this run out
    startpoint: Startpoint | None = None  # the operator's startpoint this plan starts from
    topic_id: str | None = None  # the topic's id now, where the broker gives one
    last: tuple[int, int] | None = None  # the last message read before: (offset, timestamp), kept in the state
    replay_end: int | None = None  # a replay from a time: messages from this offset on are read for the first time

    @property
    def records(self) -> int:
        return max(0, self.high - self.low)


def plan_partition(settings: KafkaSourceSettings, topic: str, partition: int, earliest: int, latest: int,
                   previous: Previous | None, topic_pulled: bool = False) -> tuple[int, int, int] | None:
    """``(start, high, lost)`` for one partition, or None when bootstrap says skip (no work unit at all).

    ``topic_pulled``: the job stored offsets of other partitions of the topic. A partition without one is then
    new to a topic the job already pulls, and the messages it holds before where it starts (all of them under
    ``bootstrap.with.offset=latest``, Gobblin's rule) are never read: they count as lost, with a warning."""
    decided = _plan(settings, topic, partition, earliest, latest, previous)
    stored = previous.offset if previous is not None and previous.complete else None
    if decided is None or stored is not None or not topic_pulled or decided[0] <= earliest:
        return decided
    start, high, _ = decided
    log.warning("kafka_new_partition_skipped", topic=topic, partition=partition, earliest=earliest, latest=latest,
                start=start, offsets_lost=start - earliest, bootstrap=settings.bootstrap,
                note="a partition added to the topic starts where bootstrap.with.offset says: the messages it held "
                     "before are not pulled (bootstrap.with.offset=earliest pulls them)")
    return start, high, start - earliest


def _plan(settings: KafkaSourceSettings, topic: str, partition: int, earliest: int, latest: int,
          previous: Previous | None) -> tuple[int, int, int] | None:
    stored = previous.offset if previous is not None and previous.complete else None
    if settings.moves_to_latest(topic):
        lost = latest - stored if stored is not None and stored < latest else 0
        return latest, latest, lost
    if stored is None:
        mode = settings.bootstrap
        if mode == "skip":
            return None
        if mode == "latest":
            return latest, latest, 0
        if mode == "earliest":
            return earliest, latest, 0
        start = latest - settings.lookback
        if earliest <= start <= latest:
            return start, latest, 0
        return _out_of_range(settings, topic, partition, start, earliest, latest, stored=False)
    if earliest <= stored <= latest:
        return stored, latest, 0
    return _out_of_range(settings, topic, partition, stored, earliest, latest, stored=True)


def _out_of_range(settings: KafkaSourceSettings, topic: str, partition: int, offset: int, earliest: int,
                  latest: int, stored: bool) -> tuple[int, int, int]:
    policy = settings.reset
    if policy == "skip":
        log.warning("kafka_offset_out_of_range", topic=topic, partition=partition, offset=offset, earliest=earliest,
                    latest=latest, action="kept; nothing pulled (reset.on.offset.out.of.range=skip)")
        return offset, offset, 0
    if policy == "nearest":
        start = earliest if offset < earliest else latest
    else:
        start = earliest if policy == "earliest" else latest
    # offsets that will never be read: from the stored one (or the range's start, when it lay beyond the end)
    lost = max(0, start - (offset if offset < earliest else earliest)) if stored else 0
    log.warning("kafka_offset_out_of_range", topic=topic, partition=partition, offset=offset, earliest=earliest,
                latest=latest, start=start, offsets_lost=lost, policy=policy,
                note="the stored offset fell out of retention" if offset < earliest else
                "the stored offset is beyond the partition's end (was the topic recreated?)")
    return start, latest, lost


def start_at(startpoint: Startpoint, earliest: int, latest: int, at_time: int | None) -> int:
    """Where a partition starts for an operator's startpoint (clamped into what the partition still has)."""
    if startpoint.kind is StartpointKind.OLDEST:
        return earliest
    if startpoint.kind is StartpointKind.UPCOMING:
        return latest
    if startpoint.kind is StartpointKind.TIMESTAMP:
        return latest if at_time is None or at_time < 0 else min(max(at_time, earliest), latest)
    try:
        wanted = int(str(startpoint.value))
    except ValueError:
        raise UsageError(f"startpoint {startpoint.id}: {startpoint.value!r} is not a Kafka offset") from None
    return min(max(wanted, earliest), latest)


def _nothing_to_replay(topic: str, partition: int, point: Startpoint, stored: int | None, at_time: int | None) -> bool:
    """Whether a TIMESTAMP startpoint finds nothing to replay in a partition that has a stored offset: no message
    at or after its time before that offset. The partition then goes on from its stored offset, as without it: a
    replay never skips a message not read yet (--upcoming and --value skip ahead)."""
    if point.kind is not StartpointKind.TIMESTAMP or stored is None:
        return False
    if at_time is not None and 0 <= at_time < stored:
        return False
    log.warning("startpoint_nothing_to_replay", topic=topic, partition=partition, startpoint=point.describe(),
                offset=stored, note="no message read so far is at or after the time: nothing to replay; the partition "
                "goes on from its stored offset and no message not yet read is skipped")
    return True


def plan_topic(settings: KafkaSourceSettings, topic: str, partitions: list, offsets: dict[int, tuple[int, int]],
               previous: dict[tuple[str, int], Previous], fetched_at: int,
               startpoints: DatasetStartpoints | None = None, times: dict[int, int] | None = None,
               recreated: str | None = None, topic_id: str | None = None) -> list[PartitionPlan]:
    """The plans of one topic's partitions; empty when the topic has nothing to read and nothing to store.

    A startpoint (``startpoints``, with ``times``: the offsets of a TIMESTAMP startpoint's time) replaces where a
    partition would start. ``recreated``: why the topic is not the one its offsets were stored for (see
    :mod:`.recreated`): every partition then starts per ``bootstrap.with.offset``, as one never seen does, and the
    messages that skips count as lost."""
    topic_view = _Topic(settings, topic, offsets, previous, fetched_at, startpoints, times or {}, recreated,
                        any(prev.complete for (name, _), prev in previous.items() if name == topic))
    plans = [plan for info in partitions if (plan := _partition_plan(topic_view, info)) is not None]
    seen = {info.partition for info in partitions}
    _warn_unusable_startpoints(topic, startpoints, seen)
    # partitions stored before that the topic no longer has: their offsets are carried, unchanged (unless the topic
    # was recreated: they were the old topic's)
    for (name, pid), prev in sorted(previous.items()):
        if name == topic and pid not in seen and prev.complete and plans and not recreated:
            assert prev.offset is not None  # (complete)
            plans.append(PartitionPlan(topic, pid, prev.offset, prev.offset, prev.leader_id or "-1", prev.leader or "",
                                       fetched_at, prev, changed=False))
    for plan in plans:
        plan.topic_id = topic_id
        if not recreated:
            _reuse_last_message(plan, offsets)
    if recreated:
        log.warning("kafka_topic_recreated", topic=topic, evidence=recreated, bootstrap=settings.bootstrap,
                    partitions=len(plans), offsets_lost=sum(p.lost for p in plans),
                    note="the topic was deleted and created again since the last run: its stored offsets were the "
                         "old topic's; every partition starts per bootstrap.with.offset, as a new one does")
    if not any(p.changed for p in plans):
        return []
    return plans


@dataclass(frozen=True)
class _Topic:
    """What planning one topic knows: its settings, offsets, stored state, startpoints and whether it was pulled."""

    settings: KafkaSourceSettings
    name: str
    offsets: dict[int, tuple[int, int]]
    previous: dict[tuple[str, int], Previous]
    fetched_at: int
    startpoints: DatasetStartpoints | None
    times: dict[int, int]
    recreated: str | None
    pulled: bool  # a partition of it was pulled before


def _partition_plan(topic: _Topic, info: Any) -> PartitionPlan | None:
    """The plan of one partition (``info``: its id, leader id and leader), or None when it is not pulled."""
    name, pid = topic.name, info.partition
    prev = topic.previous.get((name, pid))
    known = prev.offset if prev is not None and prev.complete and not topic.recreated else None
    leader = (str(info.leader_id), info.leader, topic.fetched_at, prev)
    if pid not in topic.offsets:
        log.warning("kafka_offsets_unavailable", topic=name, partition=pid,
                    action="offset kept; pulled next run" if known is not None else "not pulled this run")
        return PartitionPlan(name, pid, known, known, *leader, changed=False) if known is not None else None
    earliest, latest = topic.offsets[pid]
    point = topic.startpoints.for_partition(str(pid)) if topic.startpoints is not None else None
    at_time = topic.times.get(pid)
    if point is not None and not _nothing_to_replay(name, pid, point, known, at_time):
        start = start_at(point, earliest, latest, at_time)
        log.info("kafka_startpoint", topic=name, partition=pid, startpoint=point.describe(), offset=start)
        return PartitionPlan(name, pid, start, latest, *leader, startpoint=point,
                             replay_end=(latest if known is None else known)
                             if point.kind is StartpointKind.TIMESTAMP else None)
    if topic.recreated:
        decided = _plan(topic.settings, name, pid, earliest, latest, None)
        if decided is None:
            return None
        return PartitionPlan(name, pid, decided[0], decided[1], *leader, max(0, decided[0] - earliest))
    decided = plan_partition(topic.settings, name, pid, earliest, latest, prev, topic.pulled)
    if decided is None:
        return None
    start, high, lost = decided
    changed = point is not None or not (known is not None and start == known == high)
    return PartitionPlan(name, pid, start, high, *leader, lost, changed,
                         startpoint=point)  # (a startpoint with nothing to replay)


def _warn_unusable_startpoints(topic: str, startpoints: DatasetStartpoints | None, seen: set[int]) -> None:
    """Warn of startpoints set for partitions the topic does not have."""
    if startpoints is None:
        return
    absent = sorted(p for p in startpoints.by_partition if p and not (p.isdigit() and int(p) in seen))
    if absent:
        log.warning("kafka_startpoint_unusable", topic=topic, partitions=len(seen),
                    startpoints={p: startpoints.by_partition[p].describe() for p in absent},
                    note="the topic has no such partition: no run can start from it; remove it with "
                         "`gpy state startpoint clear`")


def _reuse_last_message(plan: PartitionPlan, offsets: dict[int, tuple[int, int]]) -> None:
    """Carry the last message read before into ``plan`` when it still says something of the partition."""
    last = plan.previous
    if last is None or last.last_offset is None or last.last_timestamp is None:
        return
    # a partition reset to before the last message read, which it no longer holds (its stored offset was beyond its
    # end), reuses that offset: the message says nothing of the partition any more
    held = last.last_offset < offsets.get(plan.partition, (0, last.last_offset + 1))[1]
    if held or plan.low > last.last_offset:
        plan.last = (last.last_offset, last.last_timestamp)
