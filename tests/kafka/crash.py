"""The crash harness of tests/crash on Kafka jobs: SIGKILLed anywhere, rerun, every message published once.

``KafkaCrashJob`` pulls a few topics into Parquet; ``KafkaToKafkaCrashJob`` copies a topic into another through
the Kafka writer and the transaction publisher. Messages carry unique ids; new ones arrive between runs.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field

import pyarrow.parquet as pq

from tests.crash.harness import CrashJob

MESSAGES_PER_BATCH = 40


@dataclass
class KafkaCrashJob(CrashJob):
    """Topics ``<prefix>_0`` … pulled to Parquet; ``add_files(n)`` produces n batches of messages."""

    broker: object = None
    topics: list[str] = field(default_factory=list)
    produced: dict[str, list[str]] = field(default_factory=dict)
    extra: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.final = self.root / "published"
        self.state = self.root / "state"
        self.job_file = self.root / "crash.pull"
        self.root.mkdir(parents=True, exist_ok=True)
        for topic in self.topics:
            self.produced.setdefault(topic, [])
        props = {
            "job.name": "KafkaCrash",
            "source.class": "gobblin_py.connectors.kafka.KafkaSimpleSource",
            "kafka.brokers": self.broker.bootstrap,
            "topic.whitelist": ",".join(self.topics),
            "bootstrap.with.offset": "earliest",
            "source.kafka.metadata.columns": "partition,offset",
            "writer.file.path.type": "tablename",
            "writer.staging.dir": f"{self.root}/staging",
            "writer.output.dir": f"{self.root}/output",
            "data.publisher.final.dir": str(self.final),
            "state.store.dir": str(self.state),
            "task.maxretries": "0",
            "job.lock.timeout.seconds": "600",
            **self.extra,
        }
        self.job_file.write_text("".join(f"{k}={v}\n" for k, v in props.items()))

    def add_files(self, count: int) -> None:
        for _ in range(count):
            topic = self.topics[self.files_written % len(self.topics)]
            values = [f"{topic}:{self.files_written}:{i}" for i in range(MESSAGES_PER_BATCH)]
            self.broker.produce(topic, values)
            self.produced[topic] += values
            self.files_written += 1

    def published(self) -> dict[str, list]:
        found: dict[str, list] = {t: [] for t in self.topics}
        for topic in self.topics:
            for path in (self.final / topic).rglob("*.parquet"):
                found[topic] += pq.read_table(path).to_pylist()
        return found

    def rows_expected(self) -> int:
        return sum(map(len, self.produced.values()))

    def stored_offsets(self, topic: str) -> dict[int, int]:
        from gobblin_py.connectors.kafka import keys as K
        from gobblin_py.store import FsDatasetStateStore
        from gobblin_py.sdk.watermarks import MultiLongWatermark

        state = FsDatasetStateStore(str(self.state)).get_latest_dataset_state("KafkaCrash", topic)
        offsets = {}
        for task in state.all_task_states() if state is not None else []:
            assert task.working_state.value == "COMMITTED"
            offsets.update(zip(K.partitions_of(task), task.actual_high_watermark(MultiLongWatermark).values))
        return offsets

    def check(self) -> None:
        shown = subprocess.run([sys.executable, "-m", "gobblin_py.cli", "state", "show", str(self.job_file), "--json"],
                               capture_output=True, text=True, timeout=120)
        assert shown.returncode == 0, shown.stderr
        for topic, rows in self.published().items():
            values = [r["value"].decode() for r in rows]
            duplicates = len(values) - len(set(values))
            assert duplicates == 0, f"{topic}: {duplicates} messages published twice"
            assert sorted(values) == sorted(self.produced[topic]), f"{topic}: messages missing"
            offsets = self.stored_offsets(topic)
            for partition, end in offsets.items():  # the state says exactly what was published
                published = sorted(r["kafka_offset"] for r in rows if r["kafka_partition"] == partition)
                assert published == list(range(end)), f"{topic}[{partition}]: state and published data disagree"
            assert sum(offsets.values()) == len(values)
        assert not list((self.state / "_commit_sequences").rglob("*.json")), "a commit sequence was left behind"


@dataclass
class KafkaToKafkaCrashJob(KafkaCrashJob):
    """One topic copied into ``target`` through the Kafka writer, exactly once (transactions)."""

    target: str = ""

    def __post_init__(self) -> None:
        self.extra = {
            **self.extra,
            "source.kafka.metadata.columns": "",
            "writer.builder.class": "org.apache.gobblin.kafka.writer.KafkaDataWriterBuilder",
            "writer.kafka.topic": self.target,
            "writer.kafka.producerConfig.bootstrap.servers": self.broker.bootstrap,
            "data.publisher.type": "gobblin_py.connectors.kafka.writer_commit.KafkaTransactionPublisher",
        }
        super().__post_init__()

    def check(self) -> None:
        copied = [m.value().decode() for m in self.broker.read_all(self.target)]
        duplicates = len(copied) - len(set(copied))
        assert duplicates == 0, f"{duplicates} messages produced twice to {self.target}"
        expected = sorted(v for values in self.produced.values() for v in values)
        assert sorted(copied) == expected, f"{len(set(expected) - set(copied))} messages never produced"
        stored = sum(sum(self.stored_offsets(t).values()) for t in self.topics)
        assert stored == len(copied), "the stored offsets and the produced messages disagree"
        assert not list((self.state / "_commit_sequences").rglob("*.json")), "a commit sequence was left behind"

