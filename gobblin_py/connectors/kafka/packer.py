"""Work units from partition plans, packed into MultiWorkUnits as Gobblin's Kafka packers do.

Every partition first becomes a work unit of its own. Then, per ``kafka.workunit.packer.type``:

- ``SINGLE_LEVEL`` (default): a topic's partitions with nothing to read are *squeezed* into one work unit of
  several partitions (one empty task per topic that carries their offsets); the others stay one per partition;
- ``BI_LEVEL``: a topic's partitions are grouped, best fit decreasing, into groups of about
  ``total / containers / workunit.pre.grouping.size.factor`` and each group is squeezed;
- ``CUSTOM``: ``kafka.workunit.packer.customizedType`` names a class whose ``pack(units_by_topic, containers)``
  returns the MultiWorkUnits.

The work units (or groups) are then spread over ``containers`` MultiWorkUnits, heaviest first onto the lightest
(worst fit decreasing, loads as Gobblin weighs them). A work unit's size is its offset count times the
partition's previous average record size (``AVG_RECORD_SIZE``, 1024 bytes when unknown) or average time per
record (``AVG_RECORD_TIME``, geometric means per topic, Gobblin's estimator).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from gobblin_py.connectors.kafka import keys as K
from gobblin_py.connectors.kafka.planning import PartitionPlan
from gobblin_py.connectors.kafka.settings import KafkaSourceSettings
from gobblin_py.sdk.packing import worst_fit_decreasing as _greedy
from gobblin_py.sdk.plugins import instantiate
from gobblin_py.sdk.states import Extract, MultiWorkUnit, WorkUnit
from gobblin_py.sdk.watermarks import MultiLongWatermark, WatermarkInterval
from gobblin_py.store.startpoints import TIMESTAMP_KEY, carry_applied, mark_applied

DEFAULT_AVG_SIZE = 1024.0
EPSILON = 0.01


def estimator(settings: KafkaSourceSettings, plans: list[PartitionPlan]) -> Callable[[PartitionPlan], float]:
    """The size of a partition's work, by ``kafka.workunit.size.estimator.type``."""
    if settings.estimator == "AVG_RECORD_SIZE":
        return lambda p: p.records * (p.previous.avg_size if p.previous and p.previous.avg_size else DEFAULT_AVG_SIZE)
    cap = settings.avg_time_cap
    by_topic: dict[str, list[float]] = {}
    for plan in plans:
        millis = plan.previous.avg_millis if plan.previous else None
        if millis is not None:
            millis = min(millis, cap) if cap > 0 else millis
            by_topic.setdefault(plan.topic, []).append(max(millis, EPSILON))
    topic_avg = {t: _geometric_mean(v) for t, v in by_topic.items()}
    fallback = _geometric_mean(list(topic_avg.values())) if topic_avg else 1.0
    return lambda p: p.records * topic_avg.get(p.topic, fallback)


def _geometric_mean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def partition_unit(plan: PartitionPlan, extract: Extract, size: float, num_partitions: int) -> WorkUnit:
    """The work unit of one partition, with the keys Gobblin's KafkaSource gives it."""
    unit = WorkUnit.create(extract, WatermarkInterval.of(MultiLongWatermark([plan.low]), MultiLongWatermark([plan.high])))
    prev = plan.previous
    values = {
        K.TOPIC: plan.topic, K.PARTITION: plan.partition, K.LEADER_ID: plan.leader_id, K.LEADER: plan.leader,
        K.LOW: plan.low, K.HIGH: plan.high, "dataset.urn": plan.topic, K.NUM_PARTITIONS: num_partitions,
        K.OFFSET_FETCH_TIME: plan.fetched_at, K.ESTIMATED_SIZE: float(size), K.LIMITER_KEYS: "topic.name,partition.id",
        "previousStartFetchEpochTime": prev.times.get(K.START_FETCH_TIME, 0) if prev else 0,
        "previousStopFetchEpochTime": prev.times.get(K.STOP_FETCH_TIME, 0) if prev else 0,
        "previousOffsetFetchEpochTime": prev.times.get(K.OFFSET_FETCH_TIME, 0) if prev else 0,
        "previousLowWatermark": prev.low if prev and prev.low is not None else 0,
        "previousHighWatermark": prev.offset if prev and prev.offset is not None else 0,
        "previousLatestOffset": prev.expected if prev and prev.expected is not None else 0,
    }
    for key, value in values.items():
        unit.set_prop(key, value)
    if plan.lost:
        unit.set_prop(K.OFFSETS_LOST, plan.lost)
    if plan.topic_id:
        unit.set_prop(K.TOPIC_ID, plan.topic_id)
    if plan.last is not None:  # carried: a task that reads nothing of the partition keeps it in its state
        for key, value in zip(K.LAST_MESSAGE, plan.last, strict=True):
            unit.set_prop(K.partition_key(plan.topic, plan.partition, key), value)
    if plan.startpoint is not None:
        mark_applied(unit, plan.startpoint, filtered=plan.replay_end is not None)
    if plan.replay_end is not None and plan.startpoint is not None:
        unit.set_prop(K.REPLAY_SINCE, plan.startpoint.timestamp_ms)
        unit.set_prop(K.REPLAY_END, plan.replay_end)
    return unit


def squeeze(units: list[WorkUnit]) -> WorkUnit:
    """Several partitions of one topic as one work unit: indexed keys, one MultiLongWatermark entry each."""
    carrier = WorkUnit(dict(units[0].properties), units[0].extract)
    for key in (K.LOW, K.HIGH, K.PARTITION, K.LEADER_ID, K.LEADER, *K.INDEXED):
        carrier.remove_prop(key)
    lows, highs = [], []
    total = 0.0
    for index, unit in enumerate(units):
        interval = unit.watermark_interval
        assert interval is not None
        lows.append(MultiLongWatermark.from_json(interval.low_json).values[0])
        highs.append(MultiLongWatermark.from_json(interval.expected_high_json).values[0])
        for key in (K.PARTITION, K.LEADER_ID, K.LEADER, *K.INDEXED):
            value = unit.get_prop(key)
            if value is not None:
                carrier.set_prop(f"{key}.{index}", value)
        for key in K.LAST_MESSAGE:  # named by topic and partition already
            name = K.partition_key(unit.get_prop(K.TOPIC) or "", int(unit.get_prop(K.PARTITION) or 0), key)
            if unit.get_prop(name) is not None:
                carrier.set_prop(name, unit.get_prop(name))
        total += unit.get_prop_as_float(K.ESTIMATED_SIZE, 0.0) or 0.0
        if unit.get_prop(K.OFFSETS_LOST):
            carrier.set_prop(f"{K.OFFSETS_LOST}.{index}", unit.get_prop(K.OFFSETS_LOST))
    carrier.remove_prop(K.OFFSETS_LOST)
    carry_applied(carrier, units)  # every partition's startpoint is consumed
    replayed = [int(t) for unit in units for t in [unit.get_prop(TIMESTAMP_KEY)] if t is not None]
    if replayed:  # a replay of any of its partitions: each filters by its own (kafka.replay.since/end.<i>)
        carrier.set_prop(TIMESTAMP_KEY, min(replayed))
    carrier.watermark_interval = WatermarkInterval.of(MultiLongWatermark(lows), MultiLongWatermark(highs))
    carrier.set_prop(K.ESTIMATED_SIZE, total)
    return carrier


def _size(unit: WorkUnit) -> float:
    return unit.get_prop_as_float(K.ESTIMATED_SIZE, 0.0) or 0.0


def _load(item: WorkUnit | list[WorkUnit]) -> float:
    """Gobblin's load: size × log10(members), a single work unit counting as two."""
    members = item if isinstance(item, list) else [item]
    size = sum(_size(u) for u in members)
    return max(size, EPSILON) * math.log10(max(len(members), 2))


def worst_fit_decreasing(items: list[WorkUnit], containers: int) -> list[WorkUnit]:
    """Heaviest item first onto the currently lightest of ``containers`` MultiWorkUnits; empty ones dropped."""
    bins = _greedy(items, containers, _load, load=_load)
    return [MultiWorkUnit(work_units=members) for members in bins if members]


def single_level(by_topic: dict[str, list[WorkUnit]]) -> list[WorkUnit]:
    items: list[WorkUnit] = []
    for units in by_topic.values():
        empty = [u for u in units if abs(_size(u)) < EPSILON]
        items += [u for u in units if abs(_size(u)) >= EPSILON]
        if empty:
            items.append(squeeze(empty))
    return items


def bi_level(by_topic: dict[str, list[WorkUnit]], containers: int, factor: float) -> list[WorkUnit]:
    total = sum(_size(u) for units in by_topic.values() for u in units)
    share = total / max(1, containers) / factor
    items: list[WorkUnit] = []
    for units in by_topic.values():
        if sum(_size(u) for u in units) < share:
            items.append(squeeze(units))
            continue
        groups: list[list[WorkUnit]] = []
        for unit in sorted(units, key=_size, reverse=True):
            fitting = [g for g in groups if sum(_size(u) for u in g) + _size(unit) <= share]
            if fitting:
                max(fitting, key=lambda g: sum(_size(u) for u in g)).append(unit)
            else:
                groups.append([unit])
        items += [squeeze(g) for g in groups]
    return items


def containers_for(settings: KafkaSourceSettings, total_size: float) -> int:
    """``mr.job.max.mappers``, fewer when ``mr.target.mapper.size`` says the work is small."""
    count = settings.max_mappers
    if settings.target_mapper_size:
        count = min(count, int(total_size / settings.target_mapper_size) + 1)
    return max(1, count)


def pack(settings: KafkaSourceSettings, plans: list[PartitionPlan], now_ms: int, namespace: str = "KAFKA",
         table_type: str = "APPEND_ONLY") -> list[WorkUnit]:
    """The run's MultiWorkUnits for ``plans`` (partitions grouped by topic, in plan order); every work unit's
    extract has ``namespace``, ``table_type`` and the topic as its table."""
    size_of = estimator(settings, plans)
    by_topic: dict[str, list[WorkUnit]] = {}
    counts: dict[str, int] = {}
    for plan in plans:
        counts[plan.topic] = counts.get(plan.topic, 0) + 1
    for plan in plans:
        units = by_topic.setdefault(plan.topic, [])
        # one extract id per work unit of a table and run, a second apart (Gobblin's ExtractFactory)
        extract = Extract.create(table_type, namespace, plan.topic, now_ms + 1000 * len(units))
        units.append(partition_unit(plan, extract, size_of(plan), counts[plan.topic]))
    total = sum(_size(u) for units in by_topic.values() for u in units)
    containers = containers_for(settings, total)
    if settings.packer == "CUSTOM":
        custom = instantiate(settings.packer_class or "", "kafka.workunit.packer.customizedType")
        return list(custom.pack(by_topic, containers))  # type: ignore[attr-defined]
    if settings.packer == "BI_LEVEL":
        items = bi_level(by_topic, containers, settings.pre_grouping_factor)
    else:
        items = single_level(by_topic)
    return worst_fit_decreasing(items, containers)

