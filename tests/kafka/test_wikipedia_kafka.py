"""Gobblin's wikipedia-kafka.pull as it is (the API's root URL and the broker pointed at local ones): the revisions
produced as LinkedIn-Avro messages (LiAvroSerializer with ConfigDrivenMd5SchemaRegistry)."""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
from pathlib import Path

import fastavro

from tests.corpus.harness import local_copy, run_job, system_config
from tests.support.cli import run_gpy
from tests.support.paths import NEEDS_CORPUS

pytestmark = NEEDS_CORPUS

JOB = "gobblin-example/src/main/resources/wikipedia-kafka.pull"
# what Java Avro's Schema.toString() prints for the job's wikipedia.avro.schema: the id's MD5 is of this text
JAVA_SCHEMA = ('{"type":"record","name":"WikipediaArticle","namespace":"example.wikipedia.avro","fields":['
               + ",".join(f'{{"name":"{name}","type":["{kind}","null"]}}' for name, kind in (
                   ("revid", "double"), ("pageid", "double"), ("title", "string"), ("user", "string"),
                   ("anon", "string"), ("userid", "double"), ("timestamp", "string"), ("size", "double"),
                   ("contentformat", "string"), ("contentmodel", "string"), ("content", "string")))
               + "]}")


def test_wikipedia_kafka_produces_li_avro_messages(broker, web_api, tmp_path):
    web_api.add_revisions("Wikipedia:Sandbox", 500, 4, age=dt.timedelta(hours=3))
    topic = broker.fresh_topic("WikipediaExample")  # the job's writer.kafka.topic
    job = local_copy(JOB, tmp_path, {"wikipedia.api.rooturl": web_api.api,
                                     "writer.kafka.producerConfig.bootstrap.servers": broker.bootstrap})
    system_config(tmp_path)
    run_job(job, tmp_path)
    messages = [m.value() for m in broker.read_all(topic)]
    schema = fastavro.parse_schema(json.loads(JAVA_SCHEMA))
    assert {m[:17] for m in messages} == {b"\x00" + hashlib.md5(JAVA_SCHEMA.encode()).digest()}
    rows = [fastavro.schemaless_reader(io.BytesIO(m[17:]), schema, schema) for m in messages]
    assert [r["revid"] for r in rows] == [501.0, 502.0, 503.0]  # the first of the window is where the pull starts
    assert {r["title"] for r in rows} == {"Wikipedia:Sandbox"} and rows[0]["user"] == "Editor4"


def test_another_serializer_or_registry_is_refused_by_name(tmp_path):
    cases = [("writer.kafka.producerConfig.value.serializer", "com.example.MySerializer", "not a serializer gpy has"),
             ("writer.kafka.producerConfig.value.serializer", "org.apache.gobblin.kafka.serialize.OtherSerializer",
              None),
             ("writer.kafka.producerConfig.kafka.schemaRegistry.class",
              "org.apache.gobblin.kafka.schemareg.HttpClientSchemaRegistry", None)]
    for n, (key, value, _) in enumerate(cases):
        (tmp_path / str(n)).mkdir()
        local_copy(JOB, tmp_path / str(n), {key: value})
    system_config(tmp_path)
    result = run_gpy("validate", str(tmp_path), "--json", "--sysconfig", str(tmp_path / "gobblin.properties"))
    reports = {Path(r["path"]).parent.name: r for r in json.loads(result.stdout)}
    for n, (key, value, said) in enumerate(cases):
        report = reports[str(n)]
        if said is None:  # a Gobblin class gpy lacks
            assert f"{key}={value}" in report["unsupported"], report
        else:
            assert any(f"key '{key}': {value}: {said}" in p for p in report["problems"]), report["problems"]
