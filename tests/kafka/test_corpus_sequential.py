"""Two corpus jobs that put SequentialTestSource before Kafka-family writers, run (copies with local hosts):
testKafkaIngest.pull into a topic of the test broker, streaming-test-kafka.pull to the console."""

from __future__ import annotations

import json
from pathlib import Path

from tests.corpus.harness import local_copy, run_job, system_config
from tests.support.cli import run_gpy
from tests.support.paths import NEEDS_CORPUS

pytestmark = NEEDS_CORPUS


INGEST = "gobblin-modules/gobblin-kafka-08/resource/job-props/testKafkaIngest.pull"
FLAKY = "writer.kafka.producerConfig.flaky."


def test_test_kafka_ingest(broker, tmp_path):
    topic = broker.create_topic(partitions=1)
    job = local_copy(INGEST, tmp_path, {
        "writer.kafka.topic": topic, "writer.kafka.producerConfig.bootstrap.servers": broker.bootstrap})
    # its FlakyKafkaProducer as Gobblin's test sets it for its second run: one send in 2000 fails
    system_config(tmp_path, **{"source.sleepTimePerRecordMillis": "0",  # pace only; the job keeps Gobblin's 10 ms
                               FLAKY + "errorType": "nth", FLAKY + "errorEvery": "2000"})
    run_job(job, tmp_path)
    values = sorted(m.value().decode() for m in broker.read_all(topic))
    # Gobblin's test: numRecordsPerExtract=5 POJO records, each sent as its toString
    assert values == [f"TestRecord(partition=0, sequence={s}, payload=I am a POJO message)" for s in range(1, 6)]


def test_test_kafka_ingest_with_failing_sends_publishes_the_other_task(broker, tmp_path):
    """Gobblin's Kafka08DataWriterIntegrationTest: FlakyKafkaProducer fails every send of partition 0's records;
    under the partial commit policy the other work unit's five records arrive, the failed one's do not."""
    topic = broker.create_topic(partitions=1)
    job = local_copy(INGEST, tmp_path, {
        "writer.kafka.topic": topic, "writer.kafka.producerConfig.bootstrap.servers": broker.bootstrap})
    system_config(tmp_path, **{"source.sleepTimePerRecordMillis": "0", "source.numParallelism": "2",
                               FLAKY + "errorType": "regex", FLAKY + "regexPattern": "partition=0",
                               "job.commit.policy": "partial"})
    result = run_job(job, tmp_path, expect=3)  # committed with a failed task
    assert "5 of 5 messages were not delivered" in result.stdout + result.stderr
    values = {m.value().decode() for m in broker.read_all(topic)}
    assert values == {f"TestRecord(partition=1, sequence={s}, payload=I am a POJO message)" for s in range(6, 11)}


def test_writer_classes_gpy_lacks_are_refused_by_name(tmp_path):
    cases = [("writer.kafka.producerClass", "com.example.MyProducer", "not a producer gpy has"),
             ("writer.kafka.producerClass", "org.apache.gobblin.kafka.writer.OtherKafkaProducer", None),
             # a Gobblin serializer gpy has for values is not one for keys: keys are sent as text or bytes
             ("writer.kafka.producerConfig.key.serializer", "org.apache.gobblin.kafka.serialize.LiAvroSerializer",
              "not a key serializer gpy has")]
    for n, (key, value, _) in enumerate(cases):
        (tmp_path / str(n)).mkdir()
        local_copy(INGEST, tmp_path / str(n), {key: value})
    system_config(tmp_path)
    result = run_gpy("validate", str(tmp_path), "--json", "--sysconfig", str(tmp_path / "gobblin.properties"))
    reports = {Path(r["path"]).parent.name: r for r in json.loads(result.stdout)}
    for n, (key, value, said) in enumerate(cases):
        report = reports[str(n)]
        if said is None:  # a Gobblin class gpy lacks
            assert report["unsupported"] == [f"{key}={value}"], report
        else:
            assert any(f"key '{key}': {value}: {said}" in p for p in report["problems"]), report["problems"]


def test_streaming_test_kafka_prints_its_records(tmp_path):
    # STREAMING runs as bounded batches in gpy: each run prints numRecordsPerExtract (100) records per work unit;
    # the test overrides the job's pace of 1 s per record, which would make it a 100-second run
    job = local_copy("gobblin-example/src/main/resources/streaming-test-kafka.pull", tmp_path,
                     {"source.sleepTimePerRecordMillis": "0"})
    system_config(tmp_path)
    result = run_job(job, tmp_path)
    lines = [line for line in result.stdout.splitlines() if line.startswith("TestRecord(")]
    assert len(lines) == 200 and "TestRecord(partition=1, sequence=101, payload=I am a POJO message)" in lines
