"""How many of the 38 real Gobblin job files validate, and why each of the others does not.

A file validates when every class it names has a gpy equivalent and its keys check out (``source.class`` set
among them). Every key naming a Gobblin class counts, not only the plugin keys: ``job.class``, any key ending in
``.class``, ``.classes`` or ``Class``, a Kafka producer's serializers. ``GOBBLIN_WORK_DIR`` is set, as a Gobblin
installation sets it. The numbers live in one place, the paragraph scripts/update_corpus_count.py writes in
docs/migrating/index.md; which files validate is pinned by tests/corpus/test_corpus_runs.py (it runs each)."""

from __future__ import annotations

import json

import pytest

from tests.support.cli import load_script, run_gpy

# every file that names Gobblin classes without a gpy equivalent (short names), or does not load
from tests.support.paths import CORPUS, NEEDS_CORPUS, REPO

UNPORTED = {
    # vendor connectors: not ported
    "gobblin-example/src/main/resources/google-analytics-unsampledreport-to-avro.pull": ["GoogleAnalyticsUnsampledSource"],
    "gobblin-example/src/main/resources/google-web-master.pull": ["GoogleWebMasterSourceDaily",
                                                                  "GoogleWebmasterDayPartitioner"],
    "gobblin-modules/gobblin-zuora/src/main/resources/zuora_sample.pull": ["ZuoraSource"],
}

pytestmark = NEEDS_CORPUS


@pytest.fixture(scope="module")
def reports():
    # under the deployment's system configuration, as Gobblin's launcher scripts give it (the corpus has none above it)
    result = run_gpy("validate", str(CORPUS), "--json", "--sysconfig", str(REPO / "conf" / "gobblin.properties"),
                     env={"GOBBLIN_WORK_DIR": "/tmp/gobblin-work"})
    return {r["path"].split("gobblin-jobs/", 1)[1]: r for r in json.loads(result.stdout)}


def test_the_migration_page_gives_the_numbers_of_a_fresh_validation(reports):
    count = load_script("update_corpus_count")
    numbers = count.counts(reports)
    assert numbers["files"] == 38 and numbers["naming"] == 26
    page = count.PAGE.read_text()
    assert count.paragraph(reports) in page, f"{count.PAGE}'s corpus count is stale: run scripts/update_corpus_count.py"
    covered = [p for p, r in reports.items() if not r["error"] and not r["unsupported"] and not r["ok"]]
    mysql = "gobblin-example/src/main/resources/mysql-state-store-retention.pull"
    for path in set(covered) - {mysql}:
        assert any("'source.class': is not set" in p for p in reports[path]["problems"]), path  # no source
    # a retention job of a MySQL state store: it runs (tests/sql/test_mysql_state_retention.py) once given its
    # password; the file's is encrypted with a master key that is not on this machine
    [problem] = reports[mysql]["problems"]
    assert ("key 'state.store.db.password': ENC(…) cannot be decrypted: encrypt.key.loc /export/home/app/clusterMasterKey "
            "is not found") in problem


def test_each_file_that_does_not_validate_names_what_it_lacks(reports):
    failing = {p: [u["class"].rsplit(".", 1)[-1] for u in r["unported"]] for p, r in reports.items()
               if r["error"] or r["unsupported"]}
    assert failing == UNPORTED
    for path, report in reports.items():
        for item in report["unported"]:
            assert item["hint"], (path, item)
