"""A run of the Kafka source that plans nothing says why: a whitelist no topic on the brokers passes (nothing at
all: exit 4 under job.fail.on.empty), or no new offsets once the topic was pulled (nothing new, no warning)."""

from __future__ import annotations

from tests.kafka.helpers import KafkaJob


def test_a_whitelist_matching_no_topic_is_named(tmp_path, broker):
    job = KafkaJob(tmp_path, broker, topic__whitelist="no-such-topic-anywhere")
    first = job.run()
    assert first.returncode == 0, first.stderr
    assert "passes topic.whitelist=no-such-topic-anywhere" in first.stdout
    assert "warning: the job's first run found nothing at all to pull" in first.stdout
    job.update(job__fail__on__empty="true")
    failing = job.run(expect=4)
    assert failing.returncode == 4 and "passes topic.whitelist=no-such-topic-anywhere" in failing.stderr


def test_a_pulled_topic_without_new_offsets_is_nothing_new(tmp_path, broker):
    topic = broker.create_topic(partitions=2)
    broker.produce(topic, ["a", "b", "c"])
    job = KafkaJob(tmp_path, broker, topic__whitelist=topic, job__fail__on__empty="true")
    assert job.run().returncode == 0
    again = job.run()
    assert again.returncode == 0, again.stderr
    assert f"nothing new to pull: no new offsets in 2 partition(s) of topic {topic}" in again.stdout
    assert "warning" not in again.stdout
