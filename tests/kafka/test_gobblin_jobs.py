"""Gobblin's own example Kafka jobs (tests/data/gobblin/kafka-*.pull) run by gpy against the test broker.

Only what points at Gobblin's machines is rewritten: ``kafka.brokers``, the filesystem URIs (HDFS → local) and
the folders. Two additions come through a system configuration file (``--sysconfig``, where a Gobblin
deployment keeps such settings): a ``topic.whitelist`` for kafka-hdfs.pull, which pulls every topic and
would otherwise also pull the other tests' topics from the shared broker, and the state and task folders
kafka-console.pull leaves to the system configuration. kafka-console.pull reads Confluent Avro through the
tests' schema registry (tests/kafka/registry.py): only its ``kafka.schema.registry.url`` is pointed there.
"""

from __future__ import annotations

import json
import re

from tests.support.cli import run_gpy_here
from tests.support.paths import CORPUS, GOBBLIN_DATA, NEEDS_CORPUS


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
    lineage = tmp_path / "lineage.jsonl"  # OpenLineage events, through the client's file transport
    sysconfig.write_text(f"topic.whitelist={topic}\nopenlineage.transport.type=file\n"
                         f"openlineage.transport.log_file_path={lineage}\nopenlineage.transport.append=true\n")
    result = run_gpy_here("run", str(job), "--engine", "local", "--sysconfig", str(sysconfig))
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    files = sorted((tmp_path / "job-output" / topic).glob("part.*.txt"))
    assert len(files) == 2  # one per partition, no delimiter: Gobblin's quick start concatenates the messages
    assert sorted(f.read_text() for f in files) == ["event-0;event-2;event-4;event-6;event-8;",
                                                     "event-1;event-3;event-5;event-7;event-9;"]
    # its metrics file, where metrics.log.dir and metrics.reporting.file.suffix=txt put it in Gobblin
    job_id = re.search(r"job_GobblinKafkaHDFSQuickStart_\d+", result.stdout).group(0)
    metrics = tmp_path / "metrics" / f"gobblin.metrics.{job_id}" / f"gobblin.metrics.{job_id}.txt.metrics.log"
    lines = [json.loads(line) for line in metrics.read_text().splitlines()]
    written = {m["tags"].get("taskId", m["tags"].get("datasetUrn", "job")): m["value"] for m in lines
               if m["name"] == "gobblin.writer.records.written"}
    assert written[topic] == written["job"] == 10 and len(written) == 2 + 2  # job, topic, one task per partition
    assert [e["name"] for e in lines if e["type"] == "event"][-2:] == ["FullJobExecutionTimer", "JobStateEvent"]
    start, end = [json.loads(line) for line in lineage.read_text().splitlines()]
    assert (start["eventType"], end["eventType"]) == ("START", "COMPLETE")
    [read] = end["inputs"]
    assert (read["namespace"], read["name"]) == (f"kafka://{broker.bootstrap}", topic)
    assert read["inputFacets"]["gpy_kafka_offsets"]["partitions"] == [{"partition": 0, "from": 0, "to": 5},
                                                                       {"partition": 1, "from": 0, "to": 5}]
    assert read["inputFacets"]["inputStatistics"]["rowCount"] == 10
    assert [o["name"] for o in end["outputs"]] == [str(tmp_path / "job-output" / topic)]
    again = run_gpy_here("run", str(job), "--engine", "local", "--sysconfig", str(sysconfig))
    assert again.returncode == 0 and "nothing new to pull" in again.stdout
    assert len(list((tmp_path / "metrics").iterdir())) == 2  # one file per run


def _wikipedia_schema() -> dict:
    line = next(l for l in (GOBBLIN_DATA / "kafka-console.pull").read_text().splitlines()
                if l.startswith("#schemaRegistry.schema.value="))
    return json.loads(line.split("=", 1)[1])


@NEEDS_CORPUS
def test_gobblin_kafka_console_reads_confluent_avro_through_the_schema_registry(tmp_path, broker, schema_registry):
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    topic = broker.fresh_topic("WikipediaExample")  # the job's topic.whitelist
    articles = [{"pageid": float(i), "title": f"Page {i}", "user": "ann", "anon": None, "userid": 7.0,
                 "timestamp": "2024-01-01T00:00:00Z", "size": 100.0 + i, "contentformat": "text/x-wiki",
                 "contentmodel": "wikitext", "content": f"text {i}"} for i in range(3)]
    # framed as Confluent's KafkaAvroSerializer frames them, the schema registered under WikipediaExample-value
    encode = AvroSerializer(SchemaRegistryClient({"url": schema_registry.url}), json.dumps(_wikipedia_schema()),
                            conf={"subject.name.strategy": lambda ctx, name: f"{ctx.topic}-value"})
    broker.produce(topic, [encode(a, SerializationContext(topic, MessageField.VALUE)) for a in articles])
    job = tmp_path / "kafka-console.pull"
    job.write_text(_rewrite((CORPUS / "gobblin-example/src/main/resources/kafka-console.pull").read_text(),
                            {"kafka.brokers": broker.bootstrap, "kafka.schema.registry.url": schema_registry.url}))
    sysconfig = tmp_path / "gobblin.properties"
    sysconfig.write_text(f"state.store.dir={tmp_path}/state\ntask.data.root.dir={tmp_path}/task-data\n")
    result = run_gpy_here("run", str(job), "--engine", "local", "--sysconfig", str(sysconfig))
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    printed = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert printed[-3:] == articles


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
    first = run_gpy_here("run", str(job), "--engine", "local", "--sysconfig", str(sysconfig))
    assert first.returncode == 0, first.stdout + first.stderr[-3000:]
    assert "streaming_runs_as_batch" in first.stderr
    # a partition without a committed offset starts at its beginning, as Gobblin's streaming extractor does
    assert f"records extracted {before + 6}" in first.stdout
    assert all(f"stream-{i}" in first.stdout for i in range(6))  # ByteArrayDeserializer values, printed
    broker.produce("test", ["stream-6"])
    second = run_gpy_here("run", str(job), "--engine", "local", "--sysconfig", str(sysconfig))
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
    result = run_gpy_here("run", str(job), "--engine", "local", "--sysconfig", str(sysconfig))
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    copied = [m.value() for m in broker.read_all("test_copied")][copied_before:]
    assert set(copied) <= everything  # each copied message is one of the topic's, unchanged
    # converter.sample.ratio=0.10 of 300+ messages: none, or three times the ratio, is not sampling
    assert 0 < len(copied) < 0.3 * len(everything), len(copied)
