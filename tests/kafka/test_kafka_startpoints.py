"""Startpoints, the completeness watermark and timestamp replay on the Kafka source, against the real broker."""

from __future__ import annotations

import json
from collections import Counter

from tests.kafka.helpers import KafkaJob
from tests.support.cli import run_gpy, run_gpy_here

T0 = 1_704_067_200_000  # 2024-01-01T00:00:00Z
HOUR = 3_600_000


def produce_hours(broker, topic: str, partition: int, first: int, count: int) -> None:
    """Messages "p<partition>-<hour>", one per hour from ``first``, stamped with that hour."""
    for hour in range(first, first + count):
        broker.produce(topic, [f"p{partition}-{hour}"], partition=partition, timestamp_ms=T0 + hour * HOUR)


def startpoint(job: KafkaJob, topic: str, *args: str) -> None:
    done = run_gpy_here("state", "startpoint", "set", str(job.file), "--dataset", topic, *args)
    assert done.returncode == 0, done.stderr


def watermark(job: KafkaJob, topic: str, *args: str):
    return run_gpy_here("state", "watermark", str(job.file), "--dataset", topic, *args)


def test_each_startpoint_kind_per_topic_and_per_partition(tmp_path, broker):
    topic = broker.create_topic(partitions=2)
    for partition in (0, 1):
        produce_hours(broker, topic, partition, 0, 5)
    job = KafkaJob(tmp_path, broker, topic__whitelist=topic, kafka__deserializer__type="STRING")
    job.run()
    assert len(job.values()) == 10
    # OLDEST for the whole topic: everything again
    startpoint(job, topic, "--oldest")
    job.run()
    assert len(job.values()) == 20
    # UPCOMING: what is there now is skipped, what comes after is read
    for partition in (0, 1):
        produce_hours(broker, topic, partition, 5, 2)
    startpoint(job, topic, "--upcoming")
    job.run()
    assert len(job.values()) == 20
    produce_hours(broker, topic, 0, 7, 1)
    job.run()
    assert sorted(job.values())[-1] == "p1-4" and "p0-7" in job.values() and "p0-5" not in job.values()
    # SPECIFIC for one partition only: an offset
    startpoint(job, topic, "--partition", "1", "--value", "3")
    job.run()
    again = [v for v in job.values() if v.startswith("p1-")]
    assert sorted(again).count("p1-3") == 3 and sorted(again).count("p1-5") == 1  # offsets 3.. of partition 1 again
    # TIMESTAMP: the broker's offset for the time, and older records dropped
    startpoint(job, topic, "--timestamp", "2024-01-01T03:00:00Z")
    before = Counter(job.values())
    job.run()
    replayed = Counter(job.values()) - before
    assert replayed == Counter([f"p0-{h}" for h in range(3, 8)] + [f"p1-{h}" for h in range(3, 7)])
    listed = run_gpy_here("state", "startpoint", "list", str(job.file), "--json")
    assert json.loads(listed.stdout) == {}  # every startpoint consumed by its commit


def test_the_completeness_watermark_waits_for_a_lagging_partition(tmp_path, broker):
    topic = broker.create_topic(partitions=3)
    produce_hours(broker, topic, 0, 0, 10)  # up to 09:00
    produce_hours(broker, topic, 1, 0, 8)   # up to 07:00
    produce_hours(broker, topic, 2, 0, 3)   # lags: up to 02:00
    job = KafkaJob(tmp_path, broker, topic__whitelist=topic, kafka__deserializer__type="STRING")
    job.run()
    shown = json.loads(watermark(job, topic, "--json").stdout)
    assert shown["watermark_ms"] == T0 + 2 * HOUR  # the minimum over partitions: partition 2 holds it
    assert shown["partitions"] == {"0": T0 + 9 * HOUR, "1": T0 + 7 * HOUR, "2": T0 + 2 * HOUR}
    assert watermark(job, topic, "--at", "2024-01-01T02:00:00Z").returncode == 0
    assert watermark(job, topic, "--at", "2024-01-01T03:00:00Z").returncode == 1  # not yet: exit 1
    produce_hours(broker, topic, 2, 3, 10)  # partition 2 catches up past the others
    job.run()
    assert json.loads(watermark(job, topic, "--json").stdout)["watermark_ms"] == T0 + 7 * HOUR
    assert watermark(job, topic, "--at", "2024-01-01T07:00:00Z").returncode == 0
    text = run_gpy_here("state", "show", str(job.file))
    assert "complete  up to 2024-01-01T07:00:00.000Z (held by partition '1')" in text.stdout


def test_a_timestamp_replay_drops_records_stamped_before_the_time(tmp_path, broker):
    topic = broker.create_topic(partitions=1)
    for hour in (0, 1, 5, 2, 6):  # out of order, as producers' clocks allow
        broker.produce(topic, [f"h{hour}"], partition=0, timestamp_ms=T0 + hour * HOUR)
    job = KafkaJob(tmp_path, broker, topic__whitelist=topic, kafka__deserializer__type="STRING")
    job.run()
    startpoint(job, topic, "--timestamp", "2024-01-01T04:00:00Z")
    before = Counter(job.values())
    job.run()
    assert Counter(job.values()) - before == Counter(["h5", "h6"])  # read from h5's offset; h2 filtered out


def test_failed_and_killed_runs_keep_a_kafka_startpoint(tmp_path, broker):
    topic = broker.create_topic(partitions=2)
    for partition in (0, 1):
        produce_hours(broker, topic, partition, 0, 4)
    job = KafkaJob(tmp_path, broker, topic__whitelist=topic, kafka__deserializer__type="STRING", task__maxretries="0")
    job.run()
    startpoint(job, topic, "--oldest")
    pending = lambda: json.loads(run_gpy_here("state", "startpoint", "list", str(job.file), "--json").stdout)  # noqa: E731
    [point] = pending()[topic].values()
    # a run whose tasks fail (a converter loses records) commits nothing and keeps the startpoint
    job.update(converter__classes="tests.runtime.sample_plugins.DropEveryOther")
    job.run(expect=1)
    assert [p["id"] for p in pending()[topic].values()] == [point["id"]]
    job.update(converter__classes=None)
    # SIGKILLed before its commit is logged, then after: the startpoint stays until a commit consumes it
    for boundary in ("1", "2"):
        killed = run_gpy("run", str(job.file), "--engine", "local", env={"GPY_TEST_CRASH_AT_BOUNDARY": boundary})
        assert killed.returncode == -9, killed.stderr[-2000:]
        assert [p["id"] for p in pending()[topic].values()] == [point["id"]]
    job.run()
    assert pending() == {}
    assert Counter(job.values()) == Counter({f"p{p}-{h}": 2 for p in (0, 1) for h in range(4)})  # replayed once


def test_a_startpoint_for_a_partition_the_topic_lacks_or_a_time_after_its_data_is_refused(tmp_path, broker):
    topic = broker.create_topic(partitions=3)
    for partition in (0, 1, 2):
        produce_hours(broker, topic, partition, 0, 2 + partition)  # the newest: partition 2 at 03:00
    job = KafkaJob(tmp_path, broker, topic__whitelist=topic, kafka__deserializer__type="STRING")
    job.run()
    refused = run_gpy_here("state", "startpoint", "set", str(job.file), "--dataset", topic, "--partition", "99", "--oldest")
    assert refused.returncode == 2 and f"topic {topic} has no partition 99" in refused.stderr
    late = run_gpy_here("state", "startpoint", "set", str(job.file), "--dataset", topic, "--timestamp", "2024-01-01T03:00:01Z")
    assert late.returncode == 2, late.stderr
    assert "after the latest data of dataset" in late.stderr and "2024-01-01T03:00:00" in late.stderr
    late = run_gpy_here("state", "startpoint", "set", str(job.file), "--dataset", topic, "--partition", "0",
                   "--timestamp", "2024-01-01T01:30:00Z")  # partition 0's newest message is at 01:00
    assert late.returncode == 2 and "partition '0'" in late.stderr
    assert json.loads(run_gpy_here("state", "startpoint", "list", str(job.file), "--json").stdout) == {}
    startpoint(job, topic, "--timestamp", "2024-01-01T03:00:00Z")  # the newest message's own time
    startpoint(job, topic, "--partition", "2", "--timestamp", "9999-12-31", "--force")
    assert set(json.loads(run_gpy_here("state", "startpoint", "list", str(job.file), "--json").stdout)[topic]) == {"", "2"}


def test_a_stored_startpoint_no_partition_can_use_is_a_warning_naming_it(tmp_path, broker):
    """A partition startpoint stored while the brokers could not say which partitions the topic has (or before
    the topic was created again with fewer) is never used: each run warns, naming it, instead of keeping it
    quietly forever."""
    from gobblin_py.store.startpoints import Startpoint, StartpointKind, StartpointStore

    topic = broker.create_topic(partitions=1)
    produce_hours(broker, topic, 0, 0, 2)
    job = KafkaJob(tmp_path, broker, topic__whitelist=topic, kafka__deserializer__type="STRING")
    assert run_gpy_here("run", str(job.file), "--engine", "local").returncode == 0
    point = Startpoint(StartpointKind.OLDEST)
    StartpointStore.for_job(job.props).set(job.name, topic, "5", point)
    produce_hours(broker, topic, 0, 2, 1)
    for new in (True, False):  # with new messages to read, then with none
        ran = run_gpy_here("run", str(job.file), "--engine", "local")
        assert ran.returncode == 0, ran.stderr
        events = {e["event"]: e for e in map(json.loads, filter(None, ran.stderr.splitlines())) if "event" in e}
        warned = events["kafka_startpoint_unusable"]
        assert warned["level"] == "warning" and warned["startpoints"] == {"5": point.describe()}
        if new:  # the topic has work this run, none of it from the startpoint
            assert events["startpoints_unused"]["level"] == "warning", events
            assert events["startpoints_unused"]["startpoints"] == {"5": point.describe()}
    assert sorted(job.values()) == ["p0-0", "p0-1", "p0-2"]


def run_here(job: KafkaJob):
    ran = run_gpy_here("run", str(job.file), "--engine", "local")
    assert ran.returncode == 0, ran.stdout + ran.stderr[-3000:]
    return ran


def test_a_timestamp_replay_never_skips_or_drops_a_message_not_read_yet(tmp_path, broker):
    topic = broker.create_topic(partitions=1)
    produce_hours(broker, topic, 0, 0, 5)
    job = KafkaJob(tmp_path, broker, topic__whitelist=topic, kafka__deserializer__type="STRING")
    run_here(job)
    # a time past the stored offset: the messages before it, not read yet, are read all the same
    produce_hours(broker, topic, 0, 5, 5)
    startpoint(job, topic, "--timestamp", "2024-01-01T07:00:00Z")
    run_here(job)
    assert sorted(job.values()) == sorted(f"p0-{h}" for h in range(10))
    # a time after every message (forced): nothing to replay, and what is not read yet is read, not skipped
    produce_hours(broker, topic, 0, 10, 2)
    startpoint(job, topic, "--timestamp", "2024-01-03T00:00:00Z", "--force")
    ran = run_here(job)
    assert '"startpoint_nothing_to_replay"' in ran.stderr
    assert sorted(job.values()) == sorted(f"p0-{h}" for h in range(12))
    # a replay: the message past the stored offset stamped before the time (a late one) is new, and kept
    broker.produce(topic, ["late"], partition=0, timestamp_ms=T0 + HOUR)
    startpoint(job, topic, "--timestamp", "2024-01-01T11:00:00Z")
    run_here(job)
    assert Counter(job.values()) == Counter([f"p0-{h}" for h in range(12)] + ["p0-11", "late"])
    assert json.loads(run_gpy_here("state", "startpoint", "list", str(job.file), "--json").stdout) == {}


def test_a_replayed_partition_filters_only_its_own_messages_in_a_work_unit_of_several(tmp_path, broker):
    # BI_LEVEL packs both partitions in one work unit; partition 0 replays from 03:00, partition 1 reads its new
    # messages, stamped before that, for the first time: none of them is dropped
    topic = broker.create_topic(partitions=2)
    produce_hours(broker, topic, 0, 0, 5)
    job = KafkaJob(tmp_path, broker, topic__whitelist=topic, kafka__deserializer__type="STRING",
                   kafka__workunit__packer__type="BI_LEVEL", workunit__pre__grouping__size__factor="0.5",
                   mr__job__max__mappers="1")
    run_here(job)
    produce_hours(broker, topic, 1, 0, 3)
    startpoint(job, topic, "--partition", "0", "--timestamp", "2024-01-01T03:00:00Z")
    ran = run_here(job)
    assert '"tasks": 1,' in ran.stderr  # one work unit for both partitions
    assert Counter(job.values()) == Counter([f"p0-{h}" for h in range(5)] + ["p0-3", "p0-4"]
                                            + [f"p1-{h}" for h in range(3)])
