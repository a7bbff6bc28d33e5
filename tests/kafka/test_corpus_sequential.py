"""Two corpus jobs that put SequentialTestSource before Kafka-family writers, run (copies with local hosts):
testKafkaIngest.pull into a topic of the test broker, streaming-test-kafka.pull to the console."""

from __future__ import annotations


from tests.conftest import NEEDS_CORPUS
from tests.corpus.harness import local_copy, run_job, system_config

pytestmark = NEEDS_CORPUS


def test_test_kafka_ingest(broker, tmp_path):
    topic = broker.create_topic(partitions=1)
    job = local_copy("gobblin-modules/gobblin-kafka-08/resource/job-props/testKafkaIngest.pull", tmp_path, {
        "writer.kafka.topic": topic, "writer.kafka.producerConfig.bootstrap.servers": broker.bootstrap})
    system_config(tmp_path, **{"source.sleepTimePerRecordMillis": "0"})  # pace only; the job keeps Gobblin's 10 ms
    run_job(job, tmp_path)
    values = sorted(m.value().decode() for m in broker.read_all(topic))
    # Gobblin's test: numRecordsPerExtract=5 POJO records, each sent as its toString
    assert values == [f"TestRecord(partition=0, sequence={s}, payload=I am a POJO message)" for s in range(1, 6)]


def test_streaming_test_kafka_prints_its_records(tmp_path):
    # STREAMING runs as bounded batches in gpy: each run prints numRecordsPerExtract (100) records per work unit;
    # the test overrides the job's pace of 1 s per record, which would make it a 100-second run
    job = local_copy("gobblin-example/src/main/resources/streaming-test-kafka.pull", tmp_path,
                     {"source.sleepTimePerRecordMillis": "0"})
    system_config(tmp_path)
    result = run_job(job, tmp_path)
    lines = [line for line in result.stdout.splitlines() if line.startswith("TestRecord(")]
    assert len(lines) == 200 and "TestRecord(partition=1, sequence=101, payload=I am a POJO message)" in lines
