"""PublisherContract over the publishers: BaseDataPublisher, TimePartitionedDataPublisher (time-partitioned output
joining existing date folders), JdbcPublisher on SQLite, and the Kafka transaction publisher on the session's
broker — each killed at every commit boundary in turn."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from pathlib import Path

import pyarrow as pa
import pytest

from gobblin_py.testing import ContractJob, PublisherContract


class TestBaseDataPublisher(PublisherContract):
    publisher_class = "org.apache.gobblin.publisher.BaseDataPublisher"
    engines = ("local", "spark")


DAYS = (dt.datetime(2024, 3, 1, 9, tzinfo=dt.timezone.utc), dt.datetime(2024, 3, 2, 23, tzinfo=dt.timezone.utc))


class TestTimePartitionedDataPublisher(PublisherContract):
    """Output partitioned by day: every batch holds rows of both days, so later runs add to existing folders."""

    publisher_class = "org.apache.gobblin.publisher.TimePartitionedDataPublisher"
    engines = ("local",)

    def publisher_props(self, workdir: Path) -> dict[str, str]:
        return {"writer.partitioner.class": "TimeBasedWriterPartitioner", "writer.partition.columns": "at",
                "writer.partition.pattern": "yyyy/MM/dd", "writer.partition.timezone": "UTC"}

    def input_batch(self, batch: int) -> pa.RecordBatch:
        base = super().input_batch(batch)
        at = [DAYS[i % 2] + dt.timedelta(minutes=batch) for i in range(base.num_rows)]
        return base.append_column("at", pa.array(at, pa.timestamp("ms", "UTC")))

    def test_new_files_join_existing_date_folders(self, publisher_job: ContractJob) -> None:
        def files_per_day() -> dict[str, int]:
            days: dict[str, int] = {}
            for path in publisher_job.final.rglob("*.parquet"):
                day = path.parent.relative_to(publisher_job.final).as_posix()[-10:]
                days[day] = days.get(day, 0) + 1
            return days

        assert publisher_job.run().exit_code == 0
        first = files_per_day()
        assert set(first) == {"2024/03/01", "2024/03/02"}
        self.add(publisher_job)
        assert publisher_job.run().exit_code == 0
        assert files_per_day() == {day: count + 1 for day, count in first.items()}  # one more file in each
        self.check(publisher_job)


class TestJdbcPublisherOnSqlite(PublisherContract):
    """The JDBC writer's staging tables published into one final table, in one transaction with a marker."""

    publisher_class = "org.apache.gobblin.publisher.JdbcPublisher"
    engines = ("local",)

    @pytest.fixture
    def contract_env(self, tmp_path):
        path = tmp_path / "target.db"
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE contract_rows (id BIGINT NOT NULL, name TEXT, amount DOUBLE PRECISION)")
        return path

    def publisher_props(self, workdir: Path) -> dict[str, str]:
        return {"writer.builder.class": "org.apache.gobblin.writer.JdbcWriterBuilder", "writer.destination.type": "SQLITE",
                "jdbc.publisher.url": f"jdbc:sqlite:{self.env}", "jdbc.publisher.table_name": "contract_rows"}

    def published_keys(self, job: ContractJob) -> list[int]:
        with sqlite3.connect(self.env) as conn:
            return [row[0] for row in conn.execute("SELECT id FROM contract_rows")]


class TestKafkaTransactionPublisher(PublisherContract):
    """Rows as JSON messages produced in one Kafka transaction per dataset and topic (read_committed)."""

    publisher_class = "KafkaTransactionPublisher"
    engines = ("local",)

    @pytest.fixture
    def contract_env(self, broker):
        return broker

    def publisher_props(self, workdir: Path) -> dict[str, str]:
        self.topic = self.env.create_topic(partitions=2)
        return {"writer.builder.class": "org.apache.gobblin.kafka.writer.KafkaDataWriterBuilder",
                "writer.kafka.topic": self.topic, "writer.kafka.producerConfig.bootstrap.servers": self.env.bootstrap}

    def published_keys(self, job: ContractJob) -> list[int]:
        return [json.loads(m.value())["id"] for m in self.env.read_all(self.topic)]
