"""Proof by crashing, on Kafka jobs: killed anywhere, rerun, every message is published exactly once."""

from __future__ import annotations

import os

from tests.crash.harness import boundary_campaign, check_boundaries, random_campaign
from tests.kafka.crash import KafkaCrashJob, KafkaToKafkaCrashJob

KILLS = int(os.environ.get("GPY_KAFKA_CRASH_KILLS", "12"))


def test_kafka_to_parquet_killed_at_every_commit_boundary_and_at_random(tmp_path, broker):
    topics = [broker.create_topic(partitions=2) for _ in range(2)]
    job = KafkaCrashJob(tmp_path / "boundaries", broker=broker, topics=topics)
    covered = boundary_campaign(job)
    assert covered >= 2 * 4, covered  # per topic: before the log, logged, its file moves, its state, done
    check_boundaries(job, covered, {"fs_rename", "dataset_state"}, datasets=())
    topics = [broker.create_topic(partitions=2) for _ in range(2)]
    job = KafkaCrashJob(tmp_path / "random", broker=broker, topics=topics)
    # two topics' commits are a sliver of the window: the boundary campaign above aims at each of their steps
    random_campaign(job, kills=KILLS, seed=20261123).check_spread(share=0, in_commits=False)


def test_kafka_to_kafka_exactly_once_through_transactions(tmp_path, broker):
    source = broker.create_topic(partitions=2)
    job = KafkaToKafkaCrashJob(tmp_path / "boundaries", broker=broker, topics=[source],
                               target=broker.create_topic(partitions=2))
    covered = boundary_campaign(job)
    assert covered >= 4, covered  # before the log, logged, the transaction, the state, done
    check_boundaries(job, covered, {"dataset_state"}, datasets=())
    source = broker.create_topic(partitions=2)
    job = KafkaToKafkaCrashJob(tmp_path / "random", broker=broker, topics=[source],
                               target=broker.create_topic(partitions=2))
    random_campaign(job, kills=KILLS, seed=20261124).check_spread(share=0)  # a kill in tasks, one in commits
