"""Proof by crashing, on Kafka jobs: killed anywhere, rerun, every message is published exactly once."""

from __future__ import annotations

from collections import Counter

from tests.crash.harness import boundary_campaign, check_boundaries
from tests.crash.phases import PhaseRuns
from tests.crash.random_kills import random_campaign
from tests.crash.sizes import size
from tests.kafka.crash import KafkaCrashJob, KafkaToKafkaCrashJob

# each random campaign: nine kills (`make soak`: 12), four drawn over the tasks, four over the commits, one over
# the window; one kill of each stratum landing outside it still leaves the spread check met (tests/crash/sizes.py)
KILLS = size("GPY_KAFKA_CRASH_KILLS", 9, 12)
# tasks on one thread, datasets committed one after another, each logged on its own
ONE_AFTER_ANOTHER = {"job.commit.parallelCommits": "1", "gobblin.runtime.commit.sequence.batch.size": "1",
                     "taskexecutor.threadpool.size": "1"}


def test_kafka_to_parquet_killed_at_every_commit_boundary_and_at_random(tmp_path, broker):
    topics = [broker.create_topic(partitions=2) for _ in range(2)]
    job = KafkaCrashJob(tmp_path / "boundaries", broker=broker, topics=topics)
    covered = boundary_campaign(job)
    assert covered >= 2 * 4, covered  # per topic: before the log, logged, its file moves, its state, done
    check_boundaries(job, covered, {"fs_rename", "dataset_state"}, datasets=())
    # four topics committed one after another, each logged on its own: the commits, renames on local disk, are
    # still a small part of the window beside the tasks, which the instants drawn over the window hardly ever
    # reach, and those drawn over them reach (two topics committed in parallel took 25 to 40 ms, and a kill drawn
    # over them could come after a quicker run's)
    topics = [broker.create_topic(partitions=1) for _ in range(4)]
    job = KafkaCrashJob(tmp_path / "random", broker=broker, topics=topics, extra=ONE_AFTER_ANOTHER)
    random_campaign(job, kills=KILLS, seed=20261123, files_per_run=4).check_spread()


def test_kafka_to_kafka_exactly_once_through_transactions(tmp_path, broker):
    source = broker.create_topic(partitions=2)
    job = KafkaToKafkaCrashJob(tmp_path / "boundaries", broker=broker, topics=[source],
                               target=broker.create_topic(partitions=2))
    covered = boundary_campaign(job)
    assert covered >= 4, covered  # before the log, logged, the transaction, the state, done
    check_boundaries(job, covered, {"dataset_state"}, datasets=())
    # three topics read one after another on one task thread, and committed one after another, each in a
    # transaction of its own
    job = KafkaToKafkaCrashJob(tmp_path / "random", broker=broker,
                               topics=[broker.create_topic(partitions=1) for _ in range(3)],
                               target=broker.create_topic(partitions=2), extra=ONE_AFTER_ANOTHER)
    random_campaign(job, kills=KILLS, seed=20261124, files_per_run=3).check_spread()


def test_a_kill_inside_the_kafka_transaction_leaves_messages_only_read_uncommitted_sees(tmp_path, broker):
    """Runs killed with their messages on the broker in the open transaction (the Kafka writer's
    ``commit.kafka_sent`` phase, as it ends): a read_uncommitted consumer sees those messages; the next run's
    producer takes the same transactional id and aborts it, and a read_committed consumer never sees them and
    sees every record exactly once."""
    source = broker.create_topic(partitions=2)
    target = broker.create_topic(partitions=2)
    job = KafkaToKafkaCrashJob(tmp_path, broker=broker, topics=[source], target=target)
    runs = PhaseRuns(job)
    job.add_files(4)
    runs.run_until_success()
    for _ in range(2):
        before = len(broker.read_all(target, committed_only=False))
        job.add_files(4)
        assert runs.run("commit.kafka_sent:1:60") == "commit.kafka_sent"  # killed as its flush returned
        sent = len(broker.read_all(target, committed_only=False)) - before
        assert sent == 4 * 40, sent  # every message of the run in the log, uncommitted
        runs.run_until_success()
        job.check()  # read_committed: every record once, offsets stored to match
    committed = Counter(m.value() for m in broker.read_all(target))
    everything = Counter(m.value() for m in broker.read_all(target, committed_only=False))
    aborted = everything - committed
    assert sum(aborted.values()) == 2 * 4 * 40 and set(aborted) <= set(committed), aborted
    assert set(committed.values()) == {1}
