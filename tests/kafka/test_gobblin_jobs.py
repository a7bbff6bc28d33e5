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


from tests.conftest import CORPUS, GOBBLIN_DATA, NEEDS_CORPUS, run_gpy


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


STREAMING = CORPUS / "gobblin-example/src/main/resources"


def _streaming_copy(name: str, tmp_path, broker) -> tuple:
    """The corpus file with its broker and producer addresses pointed at the test broker, and a system
    configuration for the state and task folders (which the file leaves to the deployment)."""
    text = (STREAMING / name).read_text().replace("localhost:9092", broker.bootstrap)
    job = tmp_path / name
    job.write_text(text)
    sysconfig = tmp_path / "gobblin.properties"
    sysconfig.write_text(f"state.store.dir={tmp_path}/state\ntask.data.root.dir={tmp_path}/task-data\n")
    return job, sysconfig


@NEEDS_CORPUS
def test_gobblin_streaming_kafka_console_runs_as_bounded_batches(tmp_path, broker):
    if "test" not in broker.admin().list_topics(timeout=10).topics:
        broker.create_topic("test", partitions=2)
    before = len(broker.read_all("test"))
    broker.produce("test", [f"stream-{i}" for i in range(6)])
    job, sysconfig = _streaming_copy("streaming-kafka-console.pull", tmp_path, broker)
    first = run_gpy("run", str(job), "--engine", "local", "--sysconfig", str(sysconfig))
    assert first.returncode == 0, first.stdout + first.stderr[-3000:]
    assert "streaming_runs_as_batch" in first.stderr
    # a partition without a committed offset starts at its beginning, as Gobblin's streaming extractor does
    assert f"records extracted {before + 6}" in first.stdout
    assert all(f"stream-{i}" in first.stdout for i in range(6))  # ByteArrayDeserializer values, printed
    broker.produce("test", ["stream-6"])
    second = run_gpy("run", str(job), "--engine", "local", "--sysconfig", str(sysconfig))
    assert second.returncode == 0 and "records extracted 1 " in second.stdout.replace("written", " written")
    assert "stream-6" in second.stdout and "stream-0" not in second.stdout  # the next batch goes on from there


@NEEDS_CORPUS
def test_gobblin_streaming_kafka_to_kafka_samples_a_tenth_into_the_copy(tmp_path, broker):
    source = "test"
    if source not in broker.admin().list_topics(timeout=10).topics:
        broker.create_topic(source, partitions=2)
    if "test_copied" not in broker.admin().list_topics(timeout=10).topics:
        broker.create_topic("test_copied", partitions=1)
    copied_before = len(broker.read_all("test_copied"))
    broker.produce(source, [f"copy-{i}" for i in range(300)])
    everything = {m.value() for m in broker.read_all(source)}
    job, sysconfig = _streaming_copy("streaming-kafka-kafka.pull", tmp_path, broker)
    result = run_gpy("run", str(job), "--engine", "local", "--sysconfig", str(sysconfig))
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    copied = [m.value() for m in broker.read_all("test_copied")][copied_before:]
    assert set(copied) <= everything  # each copied message is one of the topic's, unchanged
    # converter.sample.ratio=0.10 of 300+ messages: none, or three times the ratio, is not sampling
    assert 0 < len(copied) < 0.3 * len(everything), len(copied)
