"""A recreated topic found by its topic id, where the broker gives one (Apache Kafka does since 2.8).

The suite's broker answers every topic's id as all zeros, so its metadata answer to ``describe_topics`` is stubbed
here with ids that Apache Kafka would give; everything else is the real broker, and the runs are in-process
``gpy run --engine local``.
"""

from __future__ import annotations

import json
from concurrent.futures import Future
from types import SimpleNamespace

from click.testing import CliRunner

from gobblin_py.cli import main
from gobblin_py.connectors.kafka import keys as K
from gobblin_py.connectors.kafka.client import BrokerClient
from gobblin_py.store import FsDatasetStateStore
from tests.kafka.helpers import KafkaJob

FIRST_ID, SECOND_ID = "rzWxQHgnT5mtdVbZB13Q0g", "Xy3a9aZpQ0C3bM0dk1Gi7w"


def _stub_ids(monkeypatch, ids: dict[str, str]) -> None:
    from confluent_kafka.admin import AdminClient

    def describe_topics(self, topics, **kwargs):
        answers = {}
        for name in topics.topic_names:
            future: Future = Future()
            future.set_result(SimpleNamespace(topic_id=ids[name]))
            answers[name] = future
        return answers

    monkeypatch.setattr(AdminClient, "describe_topics", describe_topics)


def _run(job: KafkaJob) -> list[dict]:
    result = CliRunner().invoke(main, ["run", str(job.file), "--engine", "local"])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]


def test_a_new_topic_id_is_a_recreated_topic_and_the_same_id_needs_no_other_evidence(tmp_path, broker, monkeypatch):
    topic = broker.create_topic(partitions=1)
    broker.produce(topic, [f"m{i}" for i in range(5)])
    ids = {topic: FIRST_ID}
    _stub_ids(monkeypatch, ids)
    job = KafkaJob(tmp_path, broker, topic__whitelist=topic, kafka__deserializer__type="STRING")
    _run(job)
    state = FsDatasetStateStore(str(job.state)).get_latest_dataset_state(job.name, topic)
    assert {t.get_prop(K.TOPIC_ID) for t in state.all_task_states()} == {FIRST_ID}

    probed = []
    monkeypatch.setattr(BrokerClient, "first_messages", lambda self, name, starts: probed.append(starts) or {})
    broker.produce(topic, ["m5"])
    events = _run(job)  # the same id: the stored offset holds, no message is read back to check
    assert not [e for e in events if e["event"] == "kafka_topic_recreated"] and probed == []
    assert job.values(topic) == [f"m{i}" for i in range(6)]

    ids[topic] = SECOND_ID  # what Apache Kafka answers once the topic was deleted and created again
    broker.produce(topic, ["m6"])
    events = _run(job)
    [warned] = [e for e in events if e["event"] == "kafka_topic_recreated"]
    assert warned["evidence"] == f"its topic id is {SECOND_ID}, the stored state's {FIRST_ID}"
    assert warned["bootstrap"] == "earliest" and probed == []
    assert sorted(job.values(topic)) == sorted([f"m{i}" for i in range(6)] * 2 + ["m6"])  # from its start again
    state = FsDatasetStateStore(str(job.state)).get_latest_dataset_state(job.name, topic)
    assert {t.get_prop(K.TOPIC_ID) for t in state.all_task_states()} == {SECOND_ID}
