"""A topic deleted and created again between two runs, on the suite's real broker: the stored offsets belong to
the old topic, and a run that took them for the new topic's would skip its messages without a word.

The suite's broker gives every topic the all-zero id, so these runs detect the recreation by what is left to
see (the last message read is there no more with its timestamp, or partitions vanished); the topic-id path is
tested with a stub of the broker's metadata answer (test_kafka_topic_ids.py).
"""

from __future__ import annotations

import json

from tests.kafka.helpers import KafkaJob
from tests.support.cli import run_gpy_here


def _events(result, name: str) -> list[dict]:
    return [json.loads(line) for line in result.stderr.splitlines() if f'"{name}"' in line]


def _run(job: KafkaJob):
    """A run in the test's process (what is tested is the plan, not the process)."""
    result = run_gpy_here("run", str(job.file), "--engine", "local")
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    return result


def _recreate(broker, topic: str, partitions: int) -> None:
    broker.fresh_topic(topic, partitions)


def test_a_topic_recreated_with_more_messages_than_the_stored_offset_is_read_from_its_start(tmp_path, broker):
    topic = broker.create_topic(partitions=1)
    broker.produce(topic, [f"old{i}" for i in range(100)])
    job = KafkaJob(tmp_path, broker, topic__whitelist=topic, kafka__deserializer__type="STRING")
    _run(job)
    assert job.offsets(topic) == {0: 100}
    _recreate(broker, topic, 1)
    broker.produce(topic, [f"new{i}" for i in range(150)])
    second = _run(job)
    assert sorted(v for v in job.values(topic) if v.startswith("new")) == sorted(f"new{i}" for i in range(150))
    assert job.offsets(topic) == {0: 150}
    [warned] = _events(second, "kafka_topic_recreated")
    assert warned["level"] == "warning" and warned["topic"] == topic and warned["offsets_lost"] == 0
    assert "partition 0" in warned["evidence"]


def test_a_topic_recreated_with_exactly_the_stored_offset_is_not_taken_for_nothing_new(tmp_path, broker):
    topic = broker.create_topic(partitions=1)
    broker.produce(topic, [f"old{i}" for i in range(100)])
    job = KafkaJob(tmp_path, broker, topic__whitelist=topic, kafka__deserializer__type="STRING")
    _run(job)
    assert job.offsets(topic) == {0: 100}
    job.update(bootstrap__with__offset="latest")
    _recreate(broker, topic, 1)
    broker.produce(topic, [f"new{i}" for i in range(100)])
    second = _run(job)  # under latest, Gobblin's rule for a partition it has not seen: the 100 are skipped, said so
    assert "nothing new to pull" not in second.stdout
    [warned] = _events(second, "kafka_topic_recreated")
    assert warned["offsets_lost"] == 100 and warned["bootstrap"] == "latest"
    assert _events(second, "kafka_planned")[0]["offsets_lost"] == 100
    broker.produce(topic, ["after"])
    third = _run(job)
    assert [v for v in job.values(topic) if not v.startswith("old")] == ["after"]
    assert not _events(third, "kafka_topic_recreated")  # reported once, when it is found


def test_a_topic_recreated_with_fewer_partitions_starts_every_partition_again(tmp_path, broker):
    topic = broker.create_topic(partitions=3)
    broker.produce(topic, [f"old{i}" for i in range(30)])  # 10 a partition
    job = KafkaJob(tmp_path, broker, topic__whitelist=topic, kafka__deserializer__type="STRING")
    _run(job)
    assert job.offsets(topic) == {0: 10, 1: 10, 2: 10}
    _recreate(broker, topic, 1)
    broker.produce(topic, [f"new{i}" for i in range(20)])
    second = _run(job)
    assert sorted(v for v in job.values(topic) if v.startswith("new")) == sorted(f"new{i}" for i in range(20))
    assert job.offsets(topic) == {0: 20}  # the vanished partitions' offsets are not carried any more
    [warned] = _events(second, "kafka_topic_recreated")
    assert "partitions 1, 2" in warned["evidence"]


def test_a_topic_recreated_with_fewer_messages_than_the_stored_offset_is_found_at_once(tmp_path, broker):
    # the stored offset (100) lies beyond the new topic's end (50): its first message, written after the last one
    # read, tells it is another topic; nothing is reported lost, and nothing read twice when it grows past 100
    topic = broker.create_topic(partitions=1)
    broker.produce(topic, [f"old{i}" for i in range(100)])
    job = KafkaJob(tmp_path, broker, topic__whitelist=topic, kafka__deserializer__type="STRING")
    _run(job)
    _recreate(broker, topic, 1)
    broker.produce(topic, [f"new{i}" for i in range(50)])
    second = _run(job)
    [warned] = _events(second, "kafka_topic_recreated")
    assert warned["offsets_lost"] == 0 and "ends at offset 50, before the stored offset 100" in warned["evidence"]
    assert not _events(second, "kafka_offset_out_of_range")
    assert job.offsets(topic) == {0: 50}
    broker.produce(topic, [f"new{i}" for i in range(50, 120)])
    third = _run(job)
    assert not _events(third, "kafka_topic_recreated")
    assert sorted(v for v in job.values(topic) if v.startswith("new")) == sorted(f"new{i}" for i in range(120))


def test_a_shorter_topic_that_cannot_be_told_recreated_is_not_taken_for_one_later(tmp_path, broker):
    # a copy made with its producers' (older) timestamps: run 2 cannot tell, resets per
    # reset.on.offset.out.of.range and reports the 50 it skips; once the topic grows past the old last offset, no
    # later run takes it for recreated and reads those 50 after all
    topic = broker.create_topic(partitions=1)
    broker.produce(topic, [f"old{i}" for i in range(100)])
    job = KafkaJob(tmp_path, broker, topic__whitelist=topic, kafka__deserializer__type="STRING")
    _run(job)
    _recreate(broker, topic, 1)
    for i in range(50):
        broker.produce(topic, [f"copy{i}"], timestamp_ms=1_704_067_200_000 + i)
    second = _run(job)
    assert not _events(second, "kafka_topic_recreated")
    [reset] = _events(second, "kafka_offset_out_of_range")
    assert reset["offsets_lost"] == 50
    broker.produce(topic, [f"new{i}" for i in range(70)])
    third = _run(job)
    assert not _events(third, "kafka_topic_recreated")
    assert [v for v in job.values(topic) if not v.startswith("old")] == [f"new{i}" for i in range(70)]
