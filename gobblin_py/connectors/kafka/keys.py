"""Property names a Kafka work unit and task state carry, as Gobblin's KafkaSource and KafkaExtractor write them.

A work unit of one partition has the plain keys (``partition.id``); a work unit of several partitions of one
topic (a squeezed one) has them indexed by the partition's place in the work unit (``partition.id.0``, …), and
its watermarks are ``MultiLongWatermark`` lists in the same order.
"""

from __future__ import annotations

from gobblin_py.sdk.states import State
from gobblin_py.sdk.watermarks import PARTITION_KEY, partition_ids

TOPIC = "topic.name"
PARTITION = PARTITION_KEY
LEADER_ID = "leader.id"
LEADER = "leader.hostandport"
LOW = "workunit.low.water.mark"
HIGH = "workunit.high.water.mark"
NUM_PARTITIONS = "numTopicPartitions"
ESTIMATED_SIZE = "estimated.workunit.size"
LIMITER_KEYS = "limiter.report.key.list"
OFFSET_FETCH_TIME = "offsetFetchEpochTime"
START_FETCH_TIME = "startFetchEpochTime"
STOP_FETCH_TIME = "stopFetchEpochTime"
PREVIOUS = ("previousStartFetchEpochTime", "previousStopFetchEpochTime", "previousLowWatermark",
            "previousHighWatermark", "previousOffsetFetchEpochTime", "previousLatestOffset")
# gpy: a partition replayed from a time (a TIMESTAMP startpoint): its messages below the end offset (those read
# before) stamped before the time are dropped; the others, read for the first time, are all kept
REPLAY_SINCE = "kafka.replay.since"
REPLAY_END = "kafka.replay.end"
INDEXED = (*PREVIOUS, OFFSET_FETCH_TIME, REPLAY_SINCE, REPLAY_END)  # kept per partition by a squeezed work unit
UNDECODABLE_COUNT = "error.message.undecodable.count"
ERROR_PARTITION_COUNT = "error.partition.count"
OFFSETS_LOST = "kafka.offsets.lost"  # gpy: offsets never read (out of range, or a new partition's start)
TOPIC_ID = "kafka.topic.id"  # gpy: the topic's id, where the broker gives one (a recreated topic has another)

# gpy's per-partition facts in a task state, by topic and partition id (next to Gobblin's avg.record.millis)
AVG_RECORD_MILLIS = "avg.record.millis"
AVG_RECORD_SIZE = "avg.record.size"
RECORD_COUNT = "record.count"
MAX_TIMESTAMP = "max.record.timestamp"
# the last message ever read of the partition: its offset and timestamp (a recreated topic has another one there)
LAST_OFFSET = "last.record.offset"
LAST_TIMESTAMP = "last.record.timestamp"
LAST_MESSAGE = (LAST_OFFSET, LAST_TIMESTAMP)


def partition_key(topic: str, partition: int, what: str) -> str:
    """``<topic>.<partition id>.<what>`` (Gobblin's ``<topic>.<pid>.avg.record.millis`` form)."""
    return f"{topic}.{partition}.{what}"


def partitions_of(state: State) -> list[int]:
    """The partition ids of a work unit: ``partition.id.0``, ``partition.id.1``, … or the single ``partition.id``."""
    return partition_ids(state.get_prop)


def indexed_long(state: State, key: str, index: int, default: int = 0) -> int:
    """``key`` of the partition at ``index``: the plain key when present, else ``key.<index>`` (Gobblin's lookup)."""
    for name in (key, f"{key}.{index}"):
        value = state.get_prop(name)
        if value is not None:
            try:
                return int(float(value))
            except ValueError:
                return default
    return default
