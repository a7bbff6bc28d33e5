"""Tasks in parallel threads take turns fetching partitions, so librdkafka holds one partition's messages at a time."""

from __future__ import annotations

from gobblin_py.connectors.kafka import keys as K
from gobblin_py.store import FsDatasetStateStore
from tests.kafka.helpers import KafkaJob


def fetch_windows(job: KafkaJob, topic: str) -> list[tuple[int, int]]:
    state = FsDatasetStateStore(str(job.state)).get_latest_dataset_state(job.name, topic)
    return sorted((int(task.get_prop(f"{K.START_FETCH_TIME}.0")), int(task.get_prop(f"{K.STOP_FETCH_TIME}.0")))
                  for task in state.all_task_states())


def test_partitions_on_two_threads_are_fetched_one_after_the_other_by_default(tmp_path, broker):
    topic = broker.create_topic(partitions=3)
    broker.produce(topic, [f"m{i}" for i in range(3000)])
    job = KafkaJob(tmp_path, broker, name="Turns", topic__whitelist=topic, taskexecutor__threadpool__size="2")
    job.run()
    assert len(job.values(topic)) == 3000
    windows = fetch_windows(job, topic)
    assert len(windows) == 3
    assert all(stop <= start for (_, stop), (start, _) in zip(windows, windows[1:])), windows


def test_source_kafka_fetch_parallelism_lets_partitions_be_fetched_at_once(tmp_path, broker):
    topic = broker.create_topic(partitions=2)
    broker.produce(topic, [f"m{i}" for i in range(2000)])
    job = KafkaJob(tmp_path, broker, name="AtOnce", topic__whitelist=topic, taskexecutor__threadpool__size="2",
                   source__kafka__fetch__parallelism="2", source__kafka__socketTimeoutMillis="3000")
    job.run()
    assert len(job.values(topic)) == 2000
    (_, first_stop), (second_start, _) = fetch_windows(job, topic)
    assert second_start < first_stop  # both connect and fetch at once: the first fetch alone takes longer
