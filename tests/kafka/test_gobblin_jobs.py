"""Gobblin's own example Kafka jobs (tests/data/gobblin/kafka-*.pull) run by gpy against the test broker.

Only what points at Gobblin's machines is rewritten: ``kafka.brokers``, the filesystem URIs (HDFS → local) and
the folders. Two additions come through a system configuration file (``--sysconfig``, where a Gobblin
deployment keeps such settings): a ``topic.whitelist`` for kafka-hdfs.pull, which pulls every topic and
would otherwise also pull the other tests' topics from the shared broker, and the state and task folders
kafka-console.pull leaves to the system configuration. kafka-console.pull's CONFLUENT_AVRO deserializer is
kept, but gpy consults no schema registry: the job's commented-out Wikipedia schema is given as ``source.schema``.
"""

from __future__ import annotations

import io
import json
import re
import struct

from tests.conftest import GOBBLIN_DATA, run_gpy


def _rewrite(text: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        text, count = re.subn(rf"(?m)^{re.escape(key)}=.*$", f"{key}={value}", text)
        assert count == 1, key
    return text


def test_gobblin_kafka_hdfs_quickstart_runs_as_written(tmp_path, broker):
    topic = broker.create_topic(partitions=2)
    broker.produce(topic, [f"event-{i};" for i in range(10)])
    job = tmp_path / "kafka-hdfs.pull"
    job.write_text(_rewrite((GOBBLIN_DATA / "kafka-hdfs.pull").read_text(), {
        "kafka.brokers": broker.bootstrap, "fs.uri": "file:///", "writer.fs.uri": "file:///",
        "state.store.fs.uri": "file:///", "mr.job.root.dir": f"{tmp_path}/working",
        "state.store.dir": f"{tmp_path}/state-store", "task.data.root.dir": f"{tmp_path}/task-data",
        "data.publisher.final.dir": f"{tmp_path}/job-output", "metrics.log.dir": f"{tmp_path}/metrics",
    }))
    sysconfig = tmp_path / "gobblin.properties"
    sysconfig.write_text(f"topic.whitelist={topic}\n")
    result = run_gpy("run", str(job), "--engine", "local", "--sysconfig", str(sysconfig))
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    files = sorted((tmp_path / "job-output" / topic).glob("part.*.txt"))
    assert len(files) == 2  # one per partition, no delimiter: Gobblin's quick start concatenates the messages
    assert sorted(f.read_text() for f in files) == ["event-0;event-2;event-4;event-6;event-8;",
                                                     "event-1;event-3;event-5;event-7;event-9;"]
    again = run_gpy("run", str(job), "--engine", "local", "--sysconfig", str(sysconfig))
    assert again.returncode == 0 and "nothing new to pull" in again.stdout


def _wikipedia_schema() -> dict:
    line = next(l for l in (GOBBLIN_DATA / "kafka-console.pull").read_text().splitlines()
                if l.startswith("#schemaRegistry.schema.value="))
    return json.loads(line.split("=", 1)[1])


def test_gobblin_kafka_console_runs_with_the_schema_in_the_job(tmp_path, broker):
    import fastavro

    schema = _wikipedia_schema()
    topic = "WikipediaExample"
    if topic not in broker.admin().list_topics(timeout=10).topics:
        broker.create_topic(topic, partitions=1)
    articles = [{"pageid": float(i), "title": f"Page {i}", "user": "ann", "anon": None, "userid": 7.0,
                 "timestamp": "2024-01-01T00:00:00Z", "size": 100.0 + i, "contentformat": "text/x-wiki",
                 "contentmodel": "wikitext", "content": f"text {i}"} for i in range(3)]
    framed = []
    for article in articles:  # Confluent's wire format: magic byte 0, a 4-byte schema id, the Avro record
        out = io.BytesIO()
        fastavro.schemaless_writer(out, fastavro.parse_schema(schema), article)
        framed.append(b"\x00" + struct.pack(">i", 1) + out.getvalue())
    broker.produce(topic, framed)
    text = (GOBBLIN_DATA / "kafka-console.pull").read_text()
    text = _rewrite(text, {"kafka.brokers": broker.bootstrap})
    text += f"\nsource.schema={json.dumps(schema)}\n"
    job = tmp_path / "kafka-console.pull"
    job.write_text(text)
    sysconfig = tmp_path / "gobblin.properties"
    sysconfig.write_text(f"state.store.dir={tmp_path}/state\ntask.data.root.dir={tmp_path}/task-data\n")
    result = run_gpy("run", str(job), "--engine", "local", "--sysconfig", str(sysconfig))
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    printed = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert [p["title"] for p in printed][-3:] == ["Page 0", "Page 1", "Page 2"]
    assert printed[-1]["size"] == 102.0 and printed[-1]["anon"] is None
    assert "kafka.schema.registry.url" in result.stderr  # said once: no registry is consulted
