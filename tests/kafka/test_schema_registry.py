"""Confluent Avro through a schema registry: records framed as Confluent's serializers frame them (magic byte 0,
a 4-byte schema id, the Avro record) read with the subject's latest schema, and written the same way.

The records are produced with confluent-kafka's own ``AvroSerializer`` and checked against its own
``AvroDeserializer`` (the reference), through the tests' stand-in registry (tests/kafka/registry.py).
"""

from __future__ import annotations

import json
import struct
import uuid

import pyarrow as pa
import pytest

from gobblin_py.sdk.errors import PermanentError
from tests.kafka.helpers import KafkaJob
from tests.kafka.registry import incompatibilities

V1 = {"type": "record", "name": "Order", "namespace": "shop",
      "fields": [{"name": "id", "type": "long"}, {"name": "note", "type": ["null", "string"], "default": None}]}
V2 = {**V1, "fields": [*V1["fields"], {"name": "amount", "type": ["null", "double"], "default": None}]}
# the same record with "note" now a long: V2's reader cannot read it
CLASH = {**V1, "fields": [{"name": "id", "type": "long"}, {"name": "note", "type": "long"}]}
# a field added without a default: it reads nothing V1 wrote (not BACKWARD), but V1 reads what it writes (FORWARD)
REQUIRED = {**V1, "fields": [*V1["fields"], {"name": "amount", "type": "double"}]}


def serializer(registry, schema: dict, subject_of=None):
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer

    client = SchemaRegistryClient({"url": registry.url})
    strategy = subject_of or (lambda ctx, name: f"{ctx.topic}-value")
    return AvroSerializer(client, json.dumps(schema), conf={"auto.register.schemas": True,
                                                            "subject.name.strategy": strategy})


def produce(broker, registry, topic: str, schema: dict, records: list[dict], subject_of=None) -> None:
    from confluent_kafka.serialization import MessageField, SerializationContext

    encode = serializer(registry, schema, subject_of)
    broker.produce(topic, [encode(r, SerializationContext(topic, MessageField.VALUE)) for r in records], partition=0)


def reference(registry, topic: str, values: list[bytes]) -> list[dict]:
    """What confluent-kafka's own AvroDeserializer reads, with the subject's latest schema as the reader's."""
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroDeserializer

    client = SchemaRegistryClient({"url": registry.url})
    latest = client.get_latest_version(f"{topic}-value").schema.schema_str
    decode = AvroDeserializer(client, latest)
    return [decode(v, None) for v in values]


def decoder_of(registry, subject: str):
    from gobblin_py.connectors.kafka.registry import RegistryAvroDeserializer
    from gobblin_py.connectors.kafka.registry_http import RegistryHttp

    return RegistryAvroDeserializer(RegistryHttp(registry.url, 10, "kafka.schema.registry.timeout.seconds"), subject,
                                    None, 10)


def registry_job(tmp_path, broker, registry, topic: str) -> KafkaJob:
    return KafkaJob(tmp_path, broker, topic__whitelist=topic, kafka__deserializer__type="CONFLUENT_AVRO",
                    kafka__schema__registry__url=registry.url, source__kafka__metadata__columns="offset")


def test_a_compatible_schema_change_mid_topic_adds_columns_null_for_older_records(tmp_path, broker, schema_registry):
    topic = broker.create_topic(partitions=1)
    produce(broker, schema_registry, topic, V1, [{"id": 1, "note": "a"}, {"id": 2, "note": None}])
    produce(broker, schema_registry, topic, V2, [{"id": 3, "note": "c", "amount": 9.5}])
    broker.produce(topic, [b"\x01not framed", None], partition=0)  # undecodable: counted, stepped over
    produce(broker, schema_registry, topic, V1, [{"id": 4, "note": "d"}])
    before = len(schema_registry.requests)
    job = registry_job(tmp_path, broker, schema_registry, topic)
    job.run()
    table = job.table(topic).sort_by("kafka_offset")
    assert table.schema.names == ["id", "note", "amount", "kafka_offset"]
    assert table.drop(["kafka_offset"]).to_pylist() == [
        {"id": 1, "note": "a", "amount": None}, {"id": 2, "note": None, "amount": None},
        {"id": 3, "note": "c", "amount": 9.5}, {"id": 4, "note": "d", "amount": None}]
    assert table.column("kafka_offset").to_pylist() == [0, 1, 2, 5]
    asked = schema_registry.requests[before:]
    # each schema id asked for once, the subject's latest version once: the rest is cached
    by_id = [r for r in asked if r.startswith("GET /schemas/ids/")]
    assert len(by_id) == len(set(by_id)) == 2
    assert asked.count(f"GET /subjects/{topic}-value/versions/latest") == 1
    values = [m.value() for m in broker.read_all(topic)]
    framed = [v for v in values if v and v[:1] == b"\x00"]
    assert reference(schema_registry, topic, framed) == table.drop(["kafka_offset"]).to_pylist()
    assert job.offsets(topic) == {0: 6}


def test_an_incompatible_schema_fails_the_task_naming_topic_partition_and_offset(tmp_path, broker, schema_registry):
    topic = broker.create_topic(partitions=1)
    produce(broker, schema_registry, topic, V1, [{"id": 1, "note": "a"}, {"id": 2, "note": "b"}])
    # a producer writing under another subject: the topic's subject still says V1 is the latest
    produce(broker, schema_registry, topic, CLASH, [{"id": 3, "note": 7}], subject_of=lambda ctx, name: "other-value")
    job = registry_job(tmp_path, broker, schema_registry, topic)
    result = job.run(expect=1)
    assert f"topic {topic} partition 0 at offset 2" in result.stderr + result.stdout
    assert "cannot be read with" in result.stderr + result.stdout
    assert job.offsets(topic) == {}  # nothing committed: the next run starts over
    assert job.table(topic).num_rows == 0


def test_the_registry_decoder_sets_apart_unframed_values_and_fails_on_unknown_ids(schema_registry):
    from confluent_kafka.serialization import MessageField, SerializationContext

    from gobblin_py.connectors.kafka.deserializers import UnreadableMessage

    topic = "orders_unit"
    encode = serializer(schema_registry, V1)
    good = encode({"id": 5, "note": "x"}, SerializationContext(topic, MessageField.VALUE))
    decoder = decoder_of(schema_registry, f"{topic}-value")
    decoder.load_schema(empty=False)
    values = pa.array([good, None, b"\x00\x00\x00", b"\x05" + good[1:], good + b"\x00", good], pa.binary())
    batch, bad = decoder.decode(values)
    assert batch.to_pylist() == [{"id": 5, "note": "x"}] * 2
    assert [i for i, _ in bad] == [1, 2, 3, 4]
    assert "tombstone" in bad[0][1] and "magic byte" in bad[2][1] and "left after the record" in bad[3][1]
    with pytest.raises(UnreadableMessage) as raised:
        decoder.decode(pa.array([good, b"\x00" + struct.pack(">i", 999) + good[5:]], pa.binary()))
    assert raised.value.index == 1 and "schema id 999" in str(raised.value)


def test_an_empty_work_unit_needs_no_subject(schema_registry):
    decoder = decoder_of(schema_registry, "never-registered-value")
    decoder.load_schema(empty=True)
    assert decoder.schema == pa.schema([])
    with pytest.raises(PermanentError, match="never-registered-value"):
        decoder_of(schema_registry, "never-registered-value").load_schema(empty=False)


@pytest.mark.parametrize("level, new, compatible", [
    ("BACKWARD", V2, True),  # a field added with a default: V2 reads what V1 wrote
    ("BACKWARD", REQUIRED, False),
    ("BACKWARD", CLASH, False),  # "note" a long now: V1's strings cannot be read as one
    ("FORWARD", REQUIRED, True),
    ("FULL", REQUIRED, False),
    ("NONE", CLASH, True),
])
def test_the_stand_in_refuses_what_the_subjects_level_refuses_as_confluents_client_sees_it(schema_registry, level,
                                                                                          new, compatible):
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
    from confluent_kafka.schema_registry.error import SchemaRegistryError

    client = SchemaRegistryClient({"url": schema_registry.url})
    subject = f"levels_{uuid.uuid4().hex[:8]}-value"
    client.register_schema(subject, Schema(json.dumps(V1), "AVRO"))
    client.set_compatibility(subject, level)
    assert client.get_compatibility(subject) == level
    assert client.test_compatibility(subject, Schema(json.dumps(new), "AVRO")) is compatible
    if compatible:
        client.register_schema(subject, Schema(json.dumps(new), "AVRO"))
        assert client.get_versions(subject) == [1, 2]
        return
    with pytest.raises(SchemaRegistryError) as refused:
        client.register_schema(subject, Schema(json.dumps(new), "AVRO"))
    assert refused.value.http_status_code == 409 and refused.value.error_code == 409
    assert f'incompatible with an earlier schema for subject "{subject}"' in refused.value.error_message
    assert client.get_versions(subject) == [1]  # nothing added


def test_a_transitive_level_checks_every_earlier_version_not_only_the_latest():
    assert incompatibilities("BACKWARD", json.dumps(V1), [json.dumps(CLASH), json.dumps(V2)]) == []
    [why] = incompatibilities("BACKWARD_TRANSITIVE", json.dumps(V1), [json.dumps(CLASH), json.dumps(V2)])
    assert why == ("BACKWARD: the new schema cannot read data written with an earlier one: reader union lacking "
                   "writer type long at /fields/1/type")  # "note", a long in CLASH


def test_a_schema_the_subjects_level_refuses_fails_the_writers_run_naming_the_subject(tmp_path, broker,
                                                                                        schema_registry):
    source = broker.create_topic(partitions=1)
    target = broker.create_topic(partitions=1)
    broker.produce(source, [json.dumps({"id": 1, "name": "a"})], partition=0)
    subject = f"{target}-value"
    # the topic's earlier writers wrote "id" as a string: the job's long cannot read their records
    schema_registry.register(subject, {"type": "record", "name": target, "fields": [{"name": "id", "type": "string"}]})
    schema_registry.set_compatibility("BACKWARD", subject)
    writer = KafkaJob(tmp_path, broker, topic__whitelist=source, kafka__deserializer__type="JSON",
                      source__schema="id:int64,name:string", writer__builder__class="KafkaDataWriterBuilder",
                      writer__kafka__topic=target, writer__kafka__producerConfig__bootstrap__servers=broker.bootstrap,
                      writer__kafka__producerConfig__value__serializer="io.confluent.kafka.serializers.KafkaAvroSerializer",
                      writer__kafka__producerConfig__schema__registry__url=schema_registry.url,
                      data__publisher__type="org.apache.gobblin.publisher.NoopPublisher")
    result = writer.run(expect=1)
    said = result.stdout + result.stderr
    assert f"writer.kafka.topic={target}: Confluent Avro (subject {subject})" in said, said[-3000:]
    assert "incompatible with an earlier schema" in said and "(HTTP 409)" in said
    assert "Traceback" not in said
    assert broker.read_all(target) == [] and len(schema_registry.subjects[subject]) == 1  # nothing produced, added


@pytest.mark.parametrize("publisher", ["org.apache.gobblin.publisher.NoopPublisher", "KafkaTransactionPublisher"])
def test_the_kafka_writer_produces_confluent_avro_read_back_by_both(tmp_path, broker, schema_registry, publisher):
    source = broker.create_topic(partitions=1)
    target = broker.create_topic(partitions=1)
    rows = [{"id": i, "name": f"n{i}" if i % 3 else None} for i in range(20)]
    broker.produce(source, [json.dumps(r) for r in rows], partition=0)
    writer = KafkaJob(tmp_path / "write", broker, topic__whitelist=source, kafka__deserializer__type="JSON",
                      source__schema="id:int64,name:string",
                      writer__builder__class="org.apache.gobblin.kafka.writer.KafkaDataWriterBuilder",
                      writer__kafka__topic=target, writer__kafka__producerConfig__bootstrap__servers=broker.bootstrap,
                      writer__kafka__producerConfig__value__serializer="io.confluent.kafka.serializers.KafkaAvroSerializer",
                      writer__kafka__producerConfig__schema__registry__url=schema_registry.url,
                      data__publisher__type=publisher)
    writer.run()
    values = [m.value() for m in broker.read_all(target)]
    assert all(v[:1] == b"\x00" for v in values) and len(values) == 20
    assert sorted(reference(schema_registry, target, values), key=lambda r: r["id"]) == rows
    if publisher != "KafkaTransactionPublisher":  # the values are the same either way: read back once
        return
    reader = registry_job(tmp_path / "read", broker, schema_registry, target)
    reader.run()
    assert reader.table(target).drop(["kafka_offset"]).sort_by("id").to_pylist() == rows


def test_the_avro_serializer_needs_a_registry(tmp_path, broker, schema_registry):
    source = broker.create_topic(partitions=1)
    job = KafkaJob(tmp_path, broker, topic__whitelist=source,
                   writer__builder__class="KafkaDataWriterBuilder", writer__kafka__topic="out",
                   writer__kafka__producerConfig__bootstrap__servers=broker.bootstrap,
                   writer__kafka__producerConfig__value__serializer="io.confluent.kafka.serializers.KafkaAvroSerializer",
                   data__publisher__type="org.apache.gobblin.publisher.NoopPublisher")
    result = job.run(expect=2)
    assert "writer.kafka.producerConfig.schema.registry.url" in result.stderr


def test_confluent_avro_needs_a_registry_or_the_writer_schema():
    from gobblin_py.connectors.kafka.settings import KafkaSourceSettings
    from gobblin_py.sdk.settings import SettingsError

    def problems(**props: str) -> list[str]:
        base = {"kafka.brokers": "localhost:9092", "kafka.deserializer.type": "CONFLUENT_AVRO"}
        try:
            KafkaSourceSettings.load({**base, **props})
        except SettingsError as exc:
            return [str(p) for p in exc.problems]
        return []

    assert any("kafka.schema.registry.url" in p for p in problems())
    assert problems(**{"kafka.schema.registry.url": "http://localhost:8081"}) == []
    assert problems(**{"source.schema": json.dumps(V1)}) == []
    assert any("not an http(s) URL" in p for p in problems(**{"kafka.schema.registry.url": "localhost:8081"}))
