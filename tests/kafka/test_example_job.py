"""jobs/kafka_to_parquet.pull as the README runs it, against the test broker (only kafka.brokers rewritten)."""

from __future__ import annotations

import json
import re
import shutil

import pyarrow.parquet as pq

from tests.support.cli import load_script, run_gpy
from tests.support.paths import REPO


def test_kafka_to_parquet_example(tmp_path, broker):
    shutil.copytree(REPO / "jobs", tmp_path / "jobs", ignore=shutil.ignore_patterns("data"))
    job = tmp_path / "jobs" / "kafka_to_parquet.pull"
    job.write_text(re.sub(r"(?m)^kafka\.brokers=.*$", f"kafka.brokers={broker.bootstrap}", job.read_text()))
    sample = load_script("kafka_sample")
    sample.TOPIC = f"events_{tmp_path.name[-12:]}"
    job.write_text(job.read_text().replace("topic.whitelist=events", f"topic.whitelist={sample.TOPIC}"))
    sample.produce(broker.port, 2000)
    first = run_gpy("run", "jobs/kafka_to_parquet.pull", "--engine", "local", cwd=tmp_path)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "records extracted 1999  written 1999" in first.stdout
    published = tmp_path / "work" / "kafka_to_parquet" / "published" / sample.TOPIC
    table = pq.read_table(published)
    assert table.num_rows == 1999
    assert str(table.schema.field("at").type) == "timestamp[ms, tz=UTC]"
    [bad] = [json.loads(line) for f in (tmp_path / "work" / "kafka_to_parquet" / "errors").glob("*.err")
             for line in f.read_text().splitlines()]
    assert bad["topic"] == sample.TOPIC and bad["error"]
    assert "nothing new to pull" in run_gpy("run", "jobs/kafka_to_parquet.pull", "--engine", "local",
                                            cwd=tmp_path).stdout
