"""A Kafka job in a temporary folder: its job file, a run through the real CLI, what it published and stored."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tests.support.cli import run_gpy


class KafkaJob:
    """``topic.whitelist`` and the other keys given; output under ``root``; runs with ``--engine local``."""

    def __init__(self, root: Path, broker, name: str = "KafkaJob", **props: str) -> None:
        self.root = root
        self.name = name
        self.final = root / "published"
        self.state = root / "state"
        self.file = root / f"{name}.pull"
        self.props = {
            "job.name": name,
            "source.class": "org.apache.gobblin.source.extractor.extract.kafka.KafkaSimpleSource",
            "kafka.brokers": broker.bootstrap,
            "bootstrap.with.offset": "earliest",
            "writer.output.format": "PARQUET",
            "writer.file.path.type": "tablename",
            "writer.staging.dir": str(root / "staging"),
            "writer.output.dir": str(root / "output"),
            "data.publisher.final.dir": str(self.final),
            "state.store.dir": str(self.state),
            "task.maxretries": "0",
        }
        self.update(**props)

    def update(self, **props: str) -> None:
        for key, value in props.items():
            key = key.replace("__", ".")
            if value is None:
                self.props.pop(key, None)
            else:
                self.props[key] = value
        self.root.mkdir(parents=True, exist_ok=True)
        self.file.write_text("".join(f"{k}={v}\n" for k, v in self.props.items()))

    def run(self, *args: str, expect: int | None = 0):
        result = run_gpy("run", str(self.file), "--engine", "local", *args)
        if expect is not None:
            assert result.returncode == expect, result.stdout + result.stderr[-4000:]
        return result

    def table(self, topic: str | None = None) -> pa.Table:
        root = self.final / topic if topic else self.final
        files = sorted(root.rglob("*.parquet"))
        if not files:
            return pa.table({})
        return pa.concat_tables([pq.read_table(f) for f in files], promote_options="default")

    def values(self, topic: str | None = None) -> list:
        table = self.table(topic)
        return table.column("value").to_pylist() if table.num_rows else []

    def state_json(self) -> dict:
        result = run_gpy("state", "show", str(self.file), "--json")
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    def offsets(self, topic: str) -> dict[int, int]:
        """The stored next offset of each partition of ``topic`` (from its dataset's latest state)."""
        from gobblin_py.connectors.kafka import keys as K
        from gobblin_py.sdk.watermarks import MultiLongWatermark
        from gobblin_py.store import FsDatasetStateStore

        state = FsDatasetStateStore(str(self.state)).get_latest_dataset_state(self.name, topic)
        found = {}
        for task in state.all_task_states() if state is not None else []:
            actual = task.actual_high_watermark(MultiLongWatermark).values
            found.update(dict(zip(K.partitions_of(task), actual)))
        return found
