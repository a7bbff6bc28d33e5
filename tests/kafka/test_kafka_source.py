"""The Kafka source end to end through `gpy run` against a real broker: offsets as watermarks, bounded runs,
new partitions and topics, bootstrap and out-of-range rules, undecodable messages."""

from __future__ import annotations

import json
import time

import pytest

from tests.kafka.helpers import KafkaJob


def test_three_partitions_of_100000_messages_to_parquet_then_nothing_new(tmp_path, broker):
    topic = broker.create_topic(partitions=3)
    broker.produce(topic, [f"{i:06d}" + "x" * 90 for i in range(100_000)])
    job = KafkaJob(tmp_path, broker, topic__whitelist=topic,
                   source__kafka__metadata__columns="partition,offset,timestamp")
    first = job.run()
    assert "records extracted 100000  written 100000" in first.stdout
    table = job.table(topic)
    assert table.num_rows == 100_000
    assert sorted(v[:6] for v in table.column("value").to_pylist()) == [f"{i:06d}".encode() for i in range(100_000)]
    pairs = set(zip(table.column("kafka_partition").to_pylist(), table.column("kafka_offset").to_pylist()))
    assert len(pairs) == 100_000
    assert job.offsets(topic) == broker.end_offsets(topic) == {0: 33334, 1: 33333, 2: 33333}
    [dataset] = job.state_json()["datasets"]
    assert dataset["urn"] == topic and dataset["state"] == "COMMITTED"
    for task in dataset["tasks"]:
        assert task["actual_high_watermark"] == task["expected_high_watermark"]
        assert task["low_watermark"] == {"values": [0]}

    again = job.run()
    assert "nothing new to pull" in again.stdout
    assert job.table(topic).num_rows == 100_000


def test_messages_produced_during_a_run_are_left_for_the_next_run(tmp_path, broker):
    topic = broker.create_topic(partitions=2)
    broker.produce(topic, [f"m{i}" for i in range(10)])
    job = KafkaJob(tmp_path, broker, topic__whitelist=topic,
                   converter__classes="tests.kafka.plugins.ProduceWhileRunning",
                   test__produce__count="7", test__produce__marker=str(tmp_path / "produced"))
    job.run()
    assert sorted(job.values(topic)) == sorted(f"m{i}".encode() for i in range(10))
    assert job.offsets(topic) == {0: 5, 1: 5}
    assert broker.end_offsets(topic) == {0: 12, 1: 12}  # the late ones are in Kafka, not in this run
    job.run()
    late = [v for v in job.values(topic) if v.startswith(b"late")]
    assert sorted(late) == sorted(f"late-{p}-{i}".encode() for p in (0, 1) for i in range(7))
    assert job.offsets(topic) == {0: 12, 1: 12}


def test_new_partitions_and_new_topics_matching_the_whitelist_are_picked_up(tmp_path, broker):
    prefix = f"orders_{int(time.time() * 1000)}"
    first = broker.create_topic(f"{prefix}_eu", partitions=2)
    broker.produce(first, ["a", "b", "c", "d"])
    job = KafkaJob(tmp_path, broker, topic__whitelist=f"{prefix}_.*", topic__blacklist=f"{prefix}_skip.*")
    job.run()
    assert sorted(job.values()) == [b"a", b"b", b"c", b"d"]

    broker.add_partitions(first, 3)
    broker.produce(first, ["e"], partition=2)
    second = broker.create_topic(f"{prefix}_us", partitions=1)
    broker.produce(second, ["f", "g"])
    skipped = broker.create_topic(f"{prefix}_skip_me", partitions=1)
    broker.produce(skipped, ["never"])
    result = job.run()
    assert sorted(job.values()) == [b"a", b"b", b"c", b"d", b"e", b"f", b"g"]
    assert job.offsets(first) == {0: 2, 1: 2, 2: 1}
    assert job.offsets(second) == {0: 2}
    assert f"dataset {second}: COMMITTED" in result.stdout and skipped not in result.stdout


def _events(result, name: str) -> list[dict]:
    return [json.loads(line) for line in result.stderr.splitlines() if f'"{name}"' in line]


def _lost_in_state(job: KafkaJob, topic: str) -> dict[int, int]:
    """``kafka.offsets.lost`` of each partition, as the topic's latest state keeps it."""
    from gobblin_py.connectors.kafka import keys as K
    from gobblin_py.store import FsDatasetStateStore

    state = FsDatasetStateStore(str(job.state)).get_latest_dataset_state(job.name, topic)
    found = {}
    for task in state.all_task_states():
        partitions = K.partitions_of(task)
        for index, pid in enumerate(partitions):
            value = task.get_prop(f"{K.OFFSETS_LOST}.{index}") or task.get_prop(K.OFFSETS_LOST)
            if value is not None:
                found[pid] = int(value)
    return found


def test_a_partition_added_under_bootstrap_latest_reports_the_messages_it_skips(tmp_path, broker):
    """Gobblin's rule: a new partition starts at its latest offset. What it held then is never read: the run
    warns, naming the topic and partition, and counts it as offsets lost (the plan's summary, the state)."""
    topic = broker.create_topic(partitions=2)
    broker.produce(topic, ["before0", "before1"])
    job = KafkaJob(tmp_path, broker, topic__whitelist=topic, bootstrap__with__offset="latest")
    first = job.run()
    assert job.values(topic) == [] and job.offsets(topic) == {0: 1, 1: 1}
    assert _events(first, "kafka_planned")[0]["offsets_lost"] == 0  # a new topic starts at latest: expected
    assert not _events(first, "kafka_new_partition_skipped")

    broker.add_partitions(topic, 4)
    broker.produce(topic, [f"early{i}" for i in range(5)], partition=2)
    broker.produce(topic, ["early-3"], partition=3)
    broker.produce(topic, ["next0"], partition=0)
    second = job.run()
    assert job.values(topic) == [b"next0"]  # Gobblin's rule stands
    assert job.offsets(topic) == {0: 2, 1: 1, 2: 5, 3: 1}
    warned = sorted((e["topic"], e["partition"], e["offsets_lost"], e["earliest"], e["latest"])
                    for e in _events(second, "kafka_new_partition_skipped"))
    assert warned == [(topic, 2, 5, 0, 5), (topic, 3, 1, 0, 1)]
    assert all(e["level"] == "warning" for e in _events(second, "kafka_new_partition_skipped"))
    assert _events(second, "kafka_planned")[0]["offsets_lost"] == 6
    assert _lost_in_state(job, topic) == {2: 5, 3: 1}

    third = job.run()  # the skipped messages are reported once, when they are skipped
    assert not _events(third, "kafka_new_partition_skipped")


@pytest.mark.parametrize("mode, lookback, expected", [
    ("earliest", None, ["0", "1", "2", "3", "4"]),
    ("latest", None, []),
    ("offset_lookback", "2", ["3", "4"]),
    ("offset_lookback", "50", ["0", "1", "2", "3", "4"]),  # out of range: reset (nearest) to the earliest
    ("skip", None, []),
])
def test_bootstrap_with_offset(tmp_path, broker, mode, lookback, expected):
    topic = broker.create_topic(partitions=1)
    broker.produce(topic, [str(i) for i in range(5)])
    job = KafkaJob(tmp_path, broker, topic__whitelist=topic, bootstrap__with__offset=mode,
                   kafka__offset__lookback=lookback)
    job.run()
    assert job.values(topic) == [v.encode() for v in expected]
    broker.produce(topic, ["5"])
    job.run()
    if mode == "skip":  # never pulled, nothing stored
        assert job.values(topic) == [] and job.offsets(topic) == {}
    else:
        assert job.values(topic) == [v.encode() for v in expected] + [b"5"]
        assert job.offsets(topic) == {0: 6}


def _wait_for_retention(broker, topic: str, earliest: int) -> None:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "gpy-tests"})
    try:
        deadline = time.time() + 30
        while consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)[0] < earliest:
            assert time.time() < deadline, "retention did not delete the old records"
            time.sleep(0.1)
    finally:
        consumer.close()


@pytest.mark.parametrize("policy, expected, lost", [
    ("nearest", ["new0", "new1", "new2"], 6),
    ("earliest", ["new0", "new1", "new2"], 6),
    ("latest", [], 9),
    ("skip", [], 0),
])
def test_reset_on_offset_out_of_range_after_retention_deleted_records(tmp_path, broker, policy, expected, lost):
    topic = broker.create_topic(partitions=1, retention_ms="60000")
    job = KafkaJob(tmp_path, broker, topic__whitelist=topic, reset__on__offset__out__of__range=policy)
    job.run()  # an empty partition: its offset 0 is stored
    assert job.offsets(topic) == {0: 0}
    old = int(time.time() * 1000) - 3_600_000
    broker.produce(topic, [f"old{i}" for i in range(6)], timestamp_ms=old)  # gone before anyone reads them
    _wait_for_retention(broker, topic, 6)
    broker.produce(topic, ["new0", "new1", "new2"])
    result = job.run()
    assert job.values(topic) == [v.encode() for v in expected]
    if policy == "skip":
        assert job.offsets(topic) == {0: 0}
        assert "kafka_offset_out_of_range" in result.stderr
    else:
        assert job.offsets(topic) == {0: 9}
        logged = [json.loads(line) for line in result.stderr.splitlines() if "kafka_offset_out_of_range" in line]
        assert logged and logged[0]["offsets_lost"] == lost and logged[0]["earliest"] == 6


def test_undecodable_messages_go_to_the_error_file_and_offsets_move_past_them(tmp_path, broker):
    topic = broker.create_topic(partitions=1)
    messages = [b'{"id": 1, "name": "a"}', b"not json", b'{"id": 2, "name": "b"}', None, b'{"id": "x"}',
                b'{\n  "id": 3,\n  "name": "c"\n}']
    broker.produce(topic, messages)
    errors = tmp_path / "errors"
    job = KafkaJob(tmp_path, broker, topic__whitelist=topic, kafka__deserializer__type="JSON",
                   source__schema="id:int64,name:string", qualitychecker__row__err__file=str(errors))
    result = job.run()
    assert job.table(topic).to_pylist() == [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}, {"id": 3, "name": "c"}]
    assert job.offsets(topic) == {0: 6}
    [err_file] = errors.glob("KafkaDeserializer-*.err")
    bad = [json.loads(line) for line in err_file.read_text().splitlines()]
    assert [(b["topic"], b["partition"], b["offset"]) for b in bad] == [(topic, 0, 1), (topic, 0, 3), (topic, 0, 4)]
    import base64

    assert base64.b64decode(bad[0]["value"]) == b"not json" and bad[1]["value"] is None
    assert "row policy KafkaDeserializer (ERR_FILE): 3 row(s) failed" in result.stdout
    [dataset] = job.state_json()["datasets"]
    assert dataset["tasks"][0]["records_extracted"] == 3


def test_json_schema_inferred_per_batch_and_unified_per_task(tmp_path, broker):
    topic = broker.create_topic(partitions=1)
    broker.produce(topic, [json.dumps({"id": i, "amount": 1}) for i in range(3)]
                   + [json.dumps({"id": 3, "amount": 2.5, "note": "late field"})])
    job = KafkaJob(tmp_path, broker, topic__whitelist=topic, kafka__deserializer__type="JSON",
                   source__kafka__batch__rows="2", source__kafka__metadata__columns="offset,key")
    job.run()
    table = job.table(topic)
    assert table.schema.field("amount").type == "double" and table.schema.field("note").type == "string"
    assert table.column("amount").to_pylist() == [1.0, 1.0, 1.0, 2.5]
    assert table.column("note").to_pylist() == [None, None, None, "late field"]
    assert table.column("kafka_offset").to_pylist() == [0, 1, 2, 3]


def test_a_dead_broker_fails_before_any_work_naming_kafka_brokers(tmp_path, broker):
    from tests.support.net import free_port

    job = KafkaJob(tmp_path, broker, kafka__brokers=f"127.0.0.1:{free_port()}", topic__whitelist="x",
                   source__kafka__socketTimeoutMillis="1500", source__kafka__fetchTimeoutMillis="500")
    result = job.run(expect=1)
    [line] = [l for l in result.stderr.splitlines() if l.startswith("gpy: error:")]
    assert "kafka.brokers=127.0.0.1:" in line and "no broker answered" in line
    assert not job.state.exists() or not list(job.state.rglob("*.jst"))


def test_reading_json_with_every_metadata_column_and_bad_messages_never_imports_pandas(tmp_path, broker):
    """pyarrow imports pandas (half a second or more) the first time a Python value reaches ``pa.array``,
    ``pa.scalar`` or a compute function: the Kafka source builds its columns without them."""
    topic = broker.create_topic(partitions=1)
    broker.produce(topic, [b'{"id": 1}', b"not json", b'{"id": 2}'])
    witness = tmp_path / "pandas"
    job = KafkaJob(tmp_path, broker, topic__whitelist=topic, kafka__deserializer__type="JSON",
                   source__schema="id:int64", qualitychecker__row__err__file=str(tmp_path / "errors"),
                   source__kafka__metadata__columns="key,partition,offset,timestamp,topic",
                   converter__classes="tests.kafka.plugins.PandasWitness", test__pandas__witness=str(witness))
    job.run()
    rows = job.table(topic).to_pylist()
    assert [(r["id"], r["kafka_partition"], r["kafka_offset"], r["kafka_topic"]) for r in rows] == [
        (1, 0, 0, topic), (2, 0, 2, topic)]
    assert all(r["kafka_timestamp"] is not None and r["kafka_key"] is None for r in rows)
    assert set(witness.read_text().split("\n")[:-1]) == {"not imported"}
