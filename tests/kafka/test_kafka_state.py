"""Offsets in Gobblin's layout, both ways; the packers; the Spark engine."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from gobblin_py.connectors.kafka import keys as K
from gobblin_py.connectors.kafka.packer import pack
from gobblin_py.connectors.kafka.planning import PartitionPlan, Previous
from gobblin_py.connectors.kafka.settings import KafkaSourceSettings
from gobblin_py.store import FsDatasetStateStore
from gobblin_py.sdk.run_states import DatasetState
from gobblin_py.sdk.states import Extract, MultiWorkUnit, RunningState, TaskState, WorkingState, WorkUnit
from gobblin_py.sdk.watermarks import MultiLongWatermark, WatermarkInterval
from tests.kafka.helpers import KafkaJob


def gobblin_job_state(job: str, topic: str, offsets: list[int]) -> DatasetState:
    """What Gobblin's KafkaSource leaves by default: one job-level state (URN ""), a squeezed work unit whose
    partitions carry indexed keys and MultiLongWatermarks."""
    unit = WorkUnit.create(Extract.create("APPEND_ONLY", "KAFKA", topic),
                           WatermarkInterval.of(MultiLongWatermark([0] * len(offsets)), MultiLongWatermark(offsets)))
    unit.set_prop(K.TOPIC, topic)
    for index in range(len(offsets)):
        unit.set_prop(f"{K.PARTITION}.{index}", index)
        unit.set_prop(f"{K.LEADER_ID}.{index}", 0)
        unit.set_prop(f"previousLatestOffset.{index}", 0)
    state = DatasetState(job, "job_Gobblin_1", dataset_urn="", state=RunningState.COMMITTED, task_count=1)
    task = TaskState("job_Gobblin_1", "task_Gobblin_1_0", unit)
    task.working_state = WorkingState.COMMITTED
    task.set_actual_high_watermark(MultiLongWatermark(offsets))
    task.set_prop(K.partition_key(topic, 0, K.AVG_RECORD_MILLIS), "0.5")
    state.add_task_state(task)
    return state


def test_a_gobblin_job_state_is_continued_and_ours_keeps_gobblins_keys(tmp_path, broker):
    topic = broker.create_topic(partitions=2)
    broker.produce(topic, [f"m{i}" for i in range(10)])  # 5 per partition
    job = KafkaJob(tmp_path, broker, name="Legacy", topic__whitelist=topic)
    FsDatasetStateStore(str(job.state)).persist_dataset_state(gobblin_job_state("Legacy", topic, [3, 4]), "")
    job.run()
    assert sorted(job.values(topic)) == [b"m6", b"m8", b"m9"]  # partition 0 from offset 3, partition 1 from 4
    assert job.offsets(topic) == {0: 5, 1: 5}
    state = FsDatasetStateStore(str(job.state)).get_latest_dataset_state("Legacy", topic)
    for task in state.all_task_states():
        unit = task.workunit
        assert unit.get_prop(K.TOPIC) == topic and unit.get_prop("dataset.urn") == topic
        assert unit.watermark_interval.to_json_string().startswith('{"low.watermark.to.json":{"values":[')
        assert task.properties["workunit.state.actual.high.water.mark"] == '{"values":[5]}'
        pid = int(unit.get_prop(K.PARTITION))
        assert unit.get_prop_as_int(K.LOW) == (3 if pid == 0 else 4) and unit.get_prop_as_int(K.HIGH) == 5
        assert unit.get_prop_as_int("previousHighWatermark") == (3 if pid == 0 else 4)
        assert unit.extract.namespace == "KAFKA" and unit.extract.table_type == "APPEND_ONLY"
        assert task.get_prop(K.partition_key(topic, pid, K.RECORD_COUNT)) in ("2", "1")
        assert int(task.get_prop(K.partition_key(topic, pid, K.MAX_TIMESTAMP))) > 1_700_000_000_000


def plan(topic: str, partition: int, low: int, high: int, avg_size: float | None = None) -> PartitionPlan:
    previous = Previous(offset=low, low=0, expected=low, avg_size=avg_size)
    return PartitionPlan(topic, partition, low, high, "1", "h:9092", 0, previous)


def settings(**props: str) -> KafkaSourceSettings:
    return KafkaSourceSettings.load({"kafka.brokers": "h:9092", **{k.replace("__", "."): v for k, v in props.items()}})


def test_single_level_squeezes_idle_partitions_and_spreads_the_rest():
    plans = [plan("a", 0, 0, 1000), plan("a", 1, 5, 5), plan("a", 2, 7, 7), plan("b", 0, 0, 10, avg_size=10_000),
             plan("b", 1, 0, 400)]
    packed = pack(settings(mr__job__max__mappers="2"), plans, 0)
    assert len(packed) == 2 and all(isinstance(m, MultiWorkUnit) for m in packed)
    units = [u for m in packed for u in m.work_units]
    squeezed = [u for u in units if u.get_prop(f"{K.PARTITION}.0") is not None]
    assert len(squeezed) == 1
    [idle] = squeezed
    assert idle.watermark_interval.to_json() == {"low.watermark.to.json": {"values": [5, 7]},
                                                 "expected.watermark.to.json": {"values": [5, 7]}}
    assert idle.get_prop(K.PARTITION) is None and idle.get_prop(K.LOW) is None
    assert K.partitions_of(idle) == [1, 2]
    sizes = {(u.get_prop(K.TOPIC), u.get_prop(K.PARTITION)): u.get_prop_as_float(K.ESTIMATED_SIZE) for u in units}
    assert sizes[("a", "0")] == 1000 * 1024 and sizes[("b", "0")] == 10 * 10_000
    # the heaviest (a/0) alone on one container, the others together
    loads = sorted(len(m.work_units) for m in packed)
    assert loads == [1, 3]


def test_the_last_message_read_and_the_topic_id_ride_along_in_squeezed_work_units():
    """Idle partitions keep, through the empty work unit they share, what finds a recreated topic next run."""
    plans = [plan("a", 0, 0, 10), plan("a", 1, 5, 5), plan("a", 2, 7, 7)]
    for p in plans:
        p.last, p.topic_id = (p.low - 1, 1_700_000_000_000 + p.partition), "rzWxQHgnT5mtdVbZB13Q0g"
    units = [u for m in pack(settings(), plans, 0) for u in m.work_units]
    [idle] = [u for u in units if u.get_prop(f"{K.PARTITION}.0") is not None]
    for pid, offset in ((1, 4), (2, 6)):
        assert idle.get_prop(K.partition_key("a", pid, K.LAST_OFFSET)) == str(offset)
        assert idle.get_prop(K.partition_key("a", pid, K.LAST_TIMESTAMP)) == str(1_700_000_000_000 + pid)
    assert {u.get_prop(K.TOPIC_ID) for u in units} == {"rzWxQHgnT5mtdVbZB13Q0g"}


def test_bi_level_groups_partitions_of_a_topic_and_squeezes_every_group():
    plans = [plan("a", p, 0, 100) for p in range(6)] + [plan("b", 0, 0, 10)]
    packed = pack(settings(kafka__workunit__packer__type="BI_LEVEL", mr__job__max__mappers="2"), plans, 0)
    units = [u for m in packed for u in m.work_units]
    assert all(u.get_prop(K.PARTITION) is None for u in units)  # always indexed keys
    covered = sorted((u.get_prop(K.TOPIC), p) for u in units for p in K.partitions_of(u))
    assert covered == [("a", p) for p in range(6)] + [("b", 0)]
    assert len([u for u in units if u.get_prop(K.TOPIC) == "a"]) >= 2


@pytest.mark.spark
def test_spark_engine_pulls_a_topic(tmp_path, broker, spark):
    from gobblin_py.cli import main

    topic = broker.create_topic(partitions=3)
    broker.produce(topic, [f"s{i}" for i in range(3000)])
    job = KafkaJob(tmp_path, broker, topic__whitelist=topic, kafka__deserializer__type="STRING")
    result = CliRunner().invoke(main, ["run", str(job.file), "--engine", "spark", "--master", "local[2]"])
    assert result.exit_code == 0, result.output
    assert sorted(job.values(topic)) == sorted(f"s{i}" for i in range(3000))
    assert job.offsets(topic) == {0: 1000, 1: 1000, 2: 1000}
