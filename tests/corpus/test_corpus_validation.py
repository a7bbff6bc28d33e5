"""How many of the 38 real Gobblin job files validate, pinned exactly (the number may only go up), and why
each of the others does not.

A file validates when every class it names has a gpy equivalent and its keys check out (``source.class`` set
among them). ``GOBBLIN_WORK_DIR`` is set, as a Gobblin installation sets it."""

from __future__ import annotations

import json

import pytest

from tests.conftest import CORPUS, NEEDS_CORPUS, REPO, run_gpy

VALID = 15
COVERED = 29  # files whose every class has a gpy equivalent (13 fragments without a source.class,
# and kafka-console.pull, whose Confluent Avro records need source.schema without a schema registry)
# every file that names Gobblin classes without a gpy equivalent (short names), or does not load
UNPORTED = {
    # Hive-bound and vendor connectors: not ported (the copy classes are; the Hive dataset finder is not)
    "gobblin-example/src/main/resources/distcp-hive.pull": ["HiveDatasetFinder"],
    "gobblin-example/src/main/resources/hive-avro-to-orc.pull": ["HiveAvroToOrcConverter", "HiveConvertPublisher",
                                                                 "HiveSource", "HiveQueryWriterBuilder"],
    "gobblin-example/src/main/resources/google-analytics-unsampledreport-to-avro.pull": ["GoogleAnalyticsUnsampledSource"],
    "gobblin-example/src/main/resources/google-web-master.pull": ["GoogleWebMasterSourceDaily",
                                                                  "GoogleWebmasterDayPartitioner"],
    "gobblin-modules/gobblin-zuora/src/main/resources/zuora_sample.pull": ["ZuoraSource"],
    "gobblin-example/src/main/resources/wikipedia.pull": ["WikipediaConverter", "WikipediaSource", "WikipediaPartitioner"],
    "gobblin-example/src/main/resources/wikipedia-console.pull": ["WikipediaConverter", "WikipediaSource"],
    "gobblin-example/src/main/resources/wikipedia-kafka.pull": ["WikipediaConverter", "WikipediaSource"],
    "gobblin-example/src/main/resources/wikipedia-orc.pull": ["WikipediaConverter", "HiveSerDeConverter",
                                                              "WikipediaSource", "HiveWritableHdfsDataWriterBuilder"],
}

pytestmark = NEEDS_CORPUS


@pytest.fixture(scope="module")
def reports():
    # under the deployment's system configuration, as Gobblin's launcher scripts give it (the corpus has none above it)
    result = run_gpy("validate", str(CORPUS), "--json", "--sysconfig", str(REPO / "conf" / "gobblin.properties"),
                     env={"GOBBLIN_WORK_DIR": "/tmp/gobblin-work"})
    return {r["path"].split("gobblin-jobs/", 1)[1]: r for r in json.loads(result.stdout)}


def test_the_number_of_valid_corpus_files_is_pinned(reports):
    valid = sorted(p for p, r in reports.items() if r["ok"])
    assert len(reports) == 38 and len(valid) == VALID, valid
    covered = sorted(p for p, r in reports.items() if not r["error"] and not r["unsupported"])
    assert len(covered) == COVERED, covered
    for path in set(covered) - set(valid) - {"gobblin-example/src/main/resources/kafka-console.pull"}:
        assert any("'source.class': is not set" in p for p in reports[path]["problems"]), path  # no source


def test_each_file_that_does_not_validate_names_what_it_lacks(reports):
    failing = {p: [u["class"].rsplit(".", 1)[-1] for u in r["unported"]] for p, r in reports.items()
               if r["error"] or r["unsupported"]}
    assert failing == UNPORTED
    for path, report in reports.items():
        for item in report["unported"]:
            assert item["hint"], (path, item)
