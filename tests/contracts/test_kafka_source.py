"""SourceContract over the Kafka source, against the session's real broker (noida-db)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gobblin_py.testing import ContractJob, SourceContract

MESSAGES = 6


class TestKafkaSimpleSource(SourceContract):
    """A topic of two partitions; each batch produces six messages, round robin; a message is keyed by its value."""

    source_class = "org.apache.gobblin.source.extractor.extract.kafka.KafkaSimpleSource"
    supports_startpoints = True
    key_columns = ("value",)
    engines = ("local", "spark")

    @pytest.fixture
    def contract_env(self, broker):
        return broker

    def make_job(self, workdir: Path) -> dict[str, str]:
        self.topic = self.env.create_topic(partitions=2)
        return {"kafka.brokers": self.env.bootstrap, "topic.whitelist": self.topic, "bootstrap.with.offset": "earliest",
                "writer.file.path.type": "tablename"}

    def startpoint_datasets(self, job: ContractJob) -> list[str]:
        return [self.topic]

    def startpoint_value(self, job: ContractJob, keys: list) -> tuple[str, str | None]:
        # round robin over two partitions: the records before keys[0] fill each partition's first offsets equally
        return str((len(job.expected) - len(keys)) // 2), None

    def add_data(self, job: ContractJob, batch: int) -> list[bytes]:
        values = [f"{self.topic}:{batch}:{i}".encode() for i in range(MESSAGES)]
        self.env.produce(self.topic, values)
        return values
