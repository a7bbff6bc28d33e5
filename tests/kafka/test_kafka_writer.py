"""Kafka to Kafka through the Kafka writer: at least once by default, exactly once with the transaction publisher."""

from __future__ import annotations

import pytest

from tests.kafka.helpers import KafkaJob


@pytest.mark.parametrize("publisher", ["org.apache.gobblin.publisher.NoopPublisher", "KafkaTransactionPublisher"])
def test_kafka_to_kafka_keeps_keys_and_values(tmp_path, broker, publisher):
    source = broker.create_topic(partitions=3)
    target = broker.create_topic(partitions=2)
    keys = [f"k{i % 7}".encode() for i in range(300)]
    broker.produce(source, [f"v{i}" for i in range(300)], keys=keys)
    job = KafkaJob(tmp_path, broker, topic__whitelist=source,
                   source__kafka__metadata__columns="key",
                   writer__builder__class="org.apache.gobblin.kafka.writer.KafkaDataWriterBuilder",
                   writer__kafka__topic=target, writer__kafka__keyed="true", writer__kafka__keyField="kafka_key",
                   writer__kafka__producerConfig__bootstrap__servers=broker.bootstrap,
                   data__publisher__type=publisher)
    result = job.run()
    assert "records extracted 300  written 300" in result.stdout
    got = broker.read_all(target)
    assert sorted((m.key(), m.value()) for m in got) == sorted(zip(keys, (f"v{i}".encode() for i in range(300))))
    # messages of one key stay in one partition, in order
    by_key: dict[bytes, set[int]] = {}
    for message in got:
        by_key.setdefault(message.key(), set()).add(message.partition())
    assert all(len(parts) == 1 for parts in by_key.values())
    assert "nothing new to pull" in job.run().stdout
    assert len(broker.read_all(target)) == 300
    if publisher == "KafkaTransactionPublisher":
        assert f"published kafka topic {target}" in result.stdout
        assert not list((tmp_path / "state" / "_commit_sequences").rglob("*.json"))


def test_the_writer_needs_brokers_and_a_topic(tmp_path, broker):
    source = broker.create_topic(partitions=1)
    job = KafkaJob(tmp_path, broker, topic__whitelist=source,
                   writer__builder__class="KafkaDataWriterBuilder",
                   data__publisher__type="org.apache.gobblin.publisher.NoopPublisher")
    broker.produce(source, ["x"])
    result = job.run(expect=2)  # refused before any work
    assert "key 'writer.kafka.topic': is not set" in result.stderr
    job.update(writer__kafka__topic="out")
    result = job.run(expect=2)
    assert "key 'writer.kafka.producerConfig.bootstrap.servers': is not set" in result.stderr
    assert job.offsets(source) == {}  # nothing committed
