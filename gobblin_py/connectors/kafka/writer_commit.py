"""Exactly-once Kafka output: staged records produced in one Kafka transaction inside the commit sequence.

``KafkaTransactionPublisher.plan`` turns a dataset's staged files (written by the Kafka writer's tasks) into one
:class:`KafkaTransactionStep` per target topic, which the runtime logs with the dataset's new state before
running it. The step:

1. starts a transactional producer whose ``transactional.id`` is fixed per job, dataset and topic
   (``gpy.<job>.<dataset>.<topic>``); starting it fences and aborts any transaction a crashed run left open;
2. tells whether it has run already: the marker — the run's job id, committed as the offset metadata of
   consumer group ``gpy.commit.<job>.<dataset>`` on the topic's partition 0 *in the same transaction as the
   records* — is there exactly when the transaction committed;
3. if not: produces every staged message, sends the marker to the transaction and commits it.

A run killed anywhere before the commit leaves an aborted (invisible) transaction and its commit log; the next
run finishes the log, producing the records again in a new transaction. Killed after the commit, the marker
says so and the step is skipped. Consumers that read committed messages only (``isolation.level=
read_committed``, librdkafka's and Kafka's Java client's default for transactions) see each record once.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow.ipc as ipc

from gobblin_py.connectors.kafka.writer_settings import kafka_module, load_settings, produce_all
from gobblin_py.io import fs as fsutil
from gobblin_py.io.crash_points import phase
from gobblin_py.sdk.commit import CommitStep
from gobblin_py.sdk.contracts import DataPublisher
from gobblin_py.sdk.errors import GobblinPyError
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.states import State, TaskState, WorkingState

log = get_logger(__name__)

OUTPUT_PATHS_KEY = "writer.final.output.file.paths"


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", text) or "_"


@dataclass
class KafkaTransactionStep(CommitStep):
    """Produce staged messages to one topic in one transaction, with a marker that tells whether it committed."""

    topic: str
    files: list[str]
    fs_uri: str | None
    transactional_id: str
    marker_group: str
    marker: str
    branches: int = 1
    branch: int = 0
    props: dict[str, str] = field(default_factory=dict, repr=False)
    kind: str = "kafka_transaction"

    def __post_init__(self) -> None:
        self._producer: Any = None

    # -- the plugin-step protocol of the commit sequence

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "class": f"{type(self).__module__}:{type(self).__qualname__}",
                "topic": self.topic, "files": self.files, "fs_uri": self.fs_uri,
                "transactional_id": self.transactional_id, "marker_group": self.marker_group, "marker": self.marker,
                "branches": self.branches, "branch": self.branch}

    @classmethod
    def from_json(cls, item: dict[str, Any], props: dict[str, str]) -> KafkaTransactionStep:
        return cls(item["topic"], list(item["files"]), item.get("fs_uri"), item["transactional_id"],
                   item["marker_group"], item["marker"], int(item.get("branches", 1)), int(item.get("branch", 0)),
                   dict(props))

    def describe(self) -> str:
        return f"produce {len(self.files)} staged file(s) to topic {self.topic} in one transaction"

    # -- the step

    def _settings(self):
        return load_settings(State(self.props), self.branches, self.branch)

    def _start(self) -> Any:
        """The transactional producer, started (which fences and aborts what a crashed run left open)."""
        if self._producer is None:
            kafka = kafka_module()
            settings = self._settings()
            config = settings.producer_settings()
            config.update({"transactional.id": self.transactional_id, "enable.idempotence": True, "acks": "all"})
            config.setdefault("transaction.timeout.ms", 900_000)
            producer = kafka.Producer(config)
            producer.init_transactions(settings.commit_timeout_ms / 1000)
            self._producer = producer
        return self._producer

    def _marker_consumer(self) -> Any:
        kafka = kafka_module()
        config = {k: v for k, v in self._settings().producer_settings().items()
                  if k in ("bootstrap.servers", "client.id") or k.startswith(("security.", "sasl.", "ssl."))}
        config.update({"group.id": self.marker_group, "enable.auto.commit": False,
                       "isolation.level": "read_committed"})
        return kafka.Consumer(config)

    def is_completed(self) -> bool:
        kafka = kafka_module()
        self._start()  # first fence: a transaction still open would hide the marker's fate
        consumer = self._marker_consumer()
        try:
            [committed] = consumer.committed([kafka.TopicPartition(self.topic, 0)],
                                             timeout=self._settings().commit_timeout_ms / 1000)
            return committed.metadata == self.marker
        finally:
            consumer.close()

    def execute(self, fresh: bool = False) -> None:
        if not fresh and self.is_completed():
            return  # its transaction committed before (the marker says so): producing again would publish twice
        kafka = kafka_module()
        producer = self._start()
        settings = self._settings()
        timeout = settings.commit_timeout_ms / 1000
        consumer = self._marker_consumer()
        try:
            producer.begin_transaction()
            count = 0
            for path in self.files:
                fs, local = fsutil.open_fs(path, self.fs_uri)
                with fs.open(local, "rb") as stream:
                    for batch in ipc.open_stream(stream):
                        keys = batch.column(0)
                        produce_all(producer, self.topic, keys.to_pylist() if keys.null_count < len(keys) else None,
                                    batch.column(1).to_pylist())
                        count += batch.num_rows
            with phase("commit.kafka_sent"):  # every message on the broker, in the open transaction
                producer.flush(timeout)
            marker = kafka.TopicPartition(self.topic, 0, count, self.marker)
            producer.send_offsets_to_transaction([marker], consumer.consumer_group_metadata(), timeout)
            producer.commit_transaction(timeout)
            log.info("kafka_transaction_committed", topic=self.topic, messages=count, marker=self.marker)
        except kafka.KafkaException as exc:
            try:
                producer.abort_transaction(timeout)
            except kafka.KafkaException:
                pass
            raise GobblinPyError(f"topic {self.topic}: the transaction failed ({exc}); the next run tries again") from None
        finally:
            consumer.close()
            self._producer = None
            producer.flush(1)


class KafkaTransactionPublisher(DataPublisher):
    """Publishes the Kafka writer's staged records exactly once (with the Kafka writer only)."""

    def init(self, job_props: dict[str, str]) -> None:
        self.job_props = job_props
        self.final_dirs: list[str] = []

    def plan(self, task_states: Sequence[TaskState]) -> list[CommitStep]:
        by_topic: dict[tuple[str, int, int], list[str]] = {}
        fs_uris: dict[tuple[str, int, int], str | None] = {}
        urn = ""
        for task in task_states:
            if task.working_state is not WorkingState.SUCCESSFUL:
                continue
            urn = task.dataset_urn
            branches = task.get_prop_as_int("fork.branches", 1) or 1
            for branch in range(branches):
                key = OUTPUT_PATHS_KEY if branches == 1 else f"{OUTPUT_PATHS_KEY}.{branch}"
                files = [p for p in (task.get_prop(key) or "").split(",") if p]
                if not files:
                    continue
                topic = load_settings(task, branches, branch).topic
                by_topic.setdefault((topic, branches, branch), []).extend(files)
                fs_uris[(topic, branches, branch)] = task.get_prop("writer.fs.uri")
        job = self.job_props.get("job.name", "job")
        marker = self.job_props.get("job.id", "")
        if not marker:
            raise GobblinPyError("the Kafka transaction publisher needs the run's job.id")
        steps: list[CommitStep] = []
        self.final_dirs = []
        for (topic, branches, branch), files in sorted(by_topic.items()):
            name = f"{_safe(job)}.{_safe(urn)}.{_safe(topic)}"
            steps.append(KafkaTransactionStep(topic, sorted(files), fs_uris[(topic, branches, branch)],
                                              f"gpy.{name}", f"gpy.commit.{name}", marker, branches, branch,
                                              dict(self.job_props)))
            self.final_dirs.append(f"kafka topic {topic}")
        return steps

    def publish(self, task_states: Sequence[TaskState]) -> list[str]:
        for step in self.plan(task_states):
            step.execute(fresh=True)
        return list(self.final_dirs)
