"""The real Gobblin job files (shared/corpus/gobblin-jobs): pinned load outcomes, so regressions show.

The corpus lives beside the repository (``<clone>/../shared/corpus``); the tests are skipped without it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gobblin_py.jobconf import ConfigError, load_job, load_jobs
from gobblin_py.jobconf.hocon import parse_hocon_file, resolve
from tests.support.paths import CORPUS, NEEDS_CORPUS

pytestmark = NEEDS_CORPUS

# Every .pull file that loads, with its number of keys (without job.config.path). The counts equal the
# "keys" column of spec §8.3, which was produced by an independent parser.
LOADS = {
    "gobblin-core/src/main/resources/mysql/table_append.pull": 12,
    "gobblin-core/src/main/resources/mysql/table_full.pull": 13,
    "gobblin-core/src/main/resources/mysql/table_full_no_primary_keys_no_delta_columns.pull": 11,
    "gobblin-core/src/main/resources/mysql/table_inc.pull": 13,
    "gobblin-core/src/main/resources/sqlserver/table_append.pull": 12,
    "gobblin-core/src/main/resources/sqlserver/table_full.pull": 13,
    "gobblin-core/src/main/resources/sqlserver/table_full_no_primary_keys_no_delta_columns.pull": 11,
    "gobblin-core/src/main/resources/sqlserver/table_inc.pull": 13,
    "gobblin-example/src/main/resources/avro-to-mysql.pull": 27,
    "gobblin-example/src/main/resources/distcp-hive.pull": 20,
    "gobblin-example/src/main/resources/example-parquet.pull": 21,
    "gobblin-example/src/main/resources/google-analytics-unsampledreport-to-avro.pull": 37,
    "gobblin-example/src/main/resources/google-web-master.pull": 41,
    "gobblin-example/src/main/resources/hdfs-monthly-to-hdfs-daily.pull": 30,
    "gobblin-example/src/main/resources/hive-avro-to-orc.pull": 15,
    "gobblin-example/src/main/resources/kafka-console.pull": 14,
    "gobblin-example/src/main/resources/kafka-hdfs.pull": 24,
    "gobblin-example/src/main/resources/mysql-state-store-retention.pull": 13,
    "gobblin-example/src/main/resources/simplejson.pull": 20,
    "gobblin-example/src/main/resources/state-store-retention.pull": 6,
    "gobblin-example/src/main/resources/streaming-kafka-console.pull": 12,
    "gobblin-example/src/main/resources/streaming-kafka-kafka.pull": 17,
    "gobblin-example/src/main/resources/streaming-test-kafka.pull": 11,
    "gobblin-example/src/main/resources/wikipedia-console.pull": 12,
    "gobblin-example/src/main/resources/wikipedia-kafka.pull": 18,
    "gobblin-example/src/main/resources/wikipedia-orc.pull": 16,
    "gobblin-example/src/main/resources/wikipedia.pull": 15,
    "gobblin-modules/gobblin-kafka-08/resource/job-props/testKafkaIngest.pull": 16,
    "gobblin-modules/gobblin-zuora/src/main/resources/zuora_sample.pull": 44,
    "gobblin-runtime/src/test/resources/mr-job-conf/GobblinMRTest.pull": 17,
    "gobblin-salesforce/src/main/resources/stand-alone/table_append.pull": 8,
    "gobblin-salesforce/src/main/resources/stand-alone/table_full.pull": 8,
    "gobblin-salesforce/src/main/resources/stand-alone/table_inc.pull": 8,
    "gobblin-test/resource/job-conf/GobblinTest1.pull": 17,
    "gobblin-test/resource/job-conf/GobblinTest2.pull": 17,
    "gobblin-test/resource/job-conf/GobblinTest3.pull": 17,
    "gobblin-test/resource/mr-job-conf/GobblinMRTest.pull": 17,
    # its last line has no separator: one more key, `workunit.retry.enabled-false` (java.util.Properties' reading)
    "gobblin-test-harness/resource/dataManagement/copy/job-props/copy.pull": 14,
}

# Every .pull file that loads with a warning: (line, text that the warning must quote).
WARNS = {
    "gobblin-test-harness/resource/dataManagement/copy/job-props/copy.pull": (39, "workunit.retry.enabled-false"),
}

# Templates are HOCON: all of them parse; resolving one on its own needs the listed value from the job.
TEMPLATES_NEEDING = {
    "gobblin-example/src/main/resources/githubjsontoparquet.template": "work.dir",
    "gobblin-example/src/main/resources/service-azkaban-hello-world.template": None,
    "gobblin-example/src/main/resources/wikipedia.template": "titles",
    "gobblin-kubernetes/gobblin-service/base-cluster/flowconfig-templates/distcp.template":
        "gobblin.flow.input.dataset.descriptor.path",
    "gobblin-runtime/src/main/resources/templates/csv-kafka.template": "job.work.dir",
    "gobblin-runtime/src/main/resources/templates/distcp.template": "from",
    "gobblin-runtime/src/main/resources/templates/gobblin-kafka.template": "output",
    "gobblin-runtime/src/main/resources/templates/hello-world.template": "gobblin.workDir",
    "gobblin-runtime/src/main/resources/templates/hiveDistcp.template": "hive.dataset.copy.target.table.prefixReplacement",
    "gobblin-runtime/src/main/resources/templates/incremental-avro.template": "to",
    "gobblin-runtime/src/main/resources/templates/kafka-hdfs.template": "job.work.dir",
    "gobblin-runtime/src/main/resources/templates/kafka-to-kafka.template": "inputTopics",
    "gobblin-runtime/src/main/resources/templates/service-azkaban-hello-world.template": None,
    "gobblin-runtime/src/test/resources/gobblin/runtime/instance/SimpleHelloWorldJob.template": "numHellos",
    "gobblin-runtime/src/test/resources/templates/distcp-ng-hive.template": None,
    "gobblin-runtime/src/test/resources/templates/distcp-ng.template": None,
    "gobblin-runtime/src/test/resources/templates/performanceTest.template": None,
    "gobblin-runtime/src/test/resources/templates/test-multitemplate-with-inheritance.template": None,
    "gobblin-runtime/src/test/resources/templates/test-overwrite.template": None,
    "gobblin-runtime/src/test/resources/templates/test.template": None,
    "gobblin-runtime/src/test/resources/templates/textFileBasedSourceTest.template": None,
    "gobblin-service/src/test/resources/template_catalog/multihop/jobTemplates/distcp-push-hdfs-to-adl.template":
        "team.name",
    "gobblin-service/src/test/resources/template_catalog/multihop/jobTemplates/distcp-push-hdfs-to-gridfs.template":
        "dataset.name",
    "gobblin-service/src/test/resources/template_catalog/multihop/jobTemplates/distcp.template":
        "gobblin.flow.edge.input.dataset.descriptor.path",
    "gobblin-service/src/test/resources/template_catalog/multihop/jobTemplates/hdfs-convert-to-json-and-encrypt.template":
        "team.name",
    "gobblin-service/src/test/resources/template_catalog/multihop/jobTemplates/hdfs-retention.template":
        "gobblin.flow.edge.input.dataset.descriptor.path",
    "gobblin-service/src/test/resources/template_catalog/templates/job1.template": None,
    "gobblin-service/src/test/resources/template_catalog/templates/job2.template": None,
    "gobblin-service/src/test/resources/template_catalog/templates/job3.template": None,
    "gobblin-service/src/test/resources/template_catalog/templates/job4.template": None,
}


def _relative(path: str) -> str:
    return Path(path).resolve().relative_to(CORPUS.resolve()).as_posix()


@pytest.fixture(scope="module")
def pull_results():
    pulls = sorted(CORPUS.rglob("*.pull"))
    return {_relative(r.path): r for r in load_jobs(pulls, env={})}


def test_every_pull_file_is_pinned(pull_results):
    assert sorted(pull_results) == sorted(LOADS)


def test_pinned_files_load_with_the_expected_number_of_keys(pull_results):
    counts = {name: len(r.config) - 1 for name, r in pull_results.items() if r.ok and r.config is not None}
    assert counts == LOADS
    for name, result in pull_results.items():
        if result.ok:
            assert result.config["job.config.path"] == str(CORPUS / name)


def test_pinned_files_warn_naming_line_and_text(pull_results):
    for name, (line, text) in WARNS.items():
        result = pull_results[name]
        assert result.ok and result.config[text] == ""
        assert any(f"line {line} of copy.pull has no key/value separator (`{text}`)" in w for w in result.config.warnings)


def test_selected_values(pull_results):
    ga = pull_results["gobblin-example/src/main/resources/google-analytics-unsampledreport-to-avro.pull"].config
    assert ga["extract.namespace"] == "GoogleAnayticsTest"  # same-file ${source.entity}
    assert ga["data.publisher.final.dir"] == "${env:GOBBLIN_WORK_DIR}"  # unset variable stays verbatim
    assert ga["source.csv_file.skip_top_rows_regex"] == '"?#.*'
    assert ga["converter.csv_to_json.custom_order"] == "0,1,3,4,5,6,7,8,9,10"
    assert ga["source.google_analytics.report.segments"] == "sessions::condition::ga:dimension1=~Member"
    mysql = pull_results["gobblin-example/src/main/resources/avro-to-mysql.pull"].config
    assert mysql["state.store.fs.uri"] == mysql["source.filebased.fs.uri"] == "file://localhost/"
    assert mysql.get_bool("jdbc.publisher.replace_table") is True
    simple = pull_results["gobblin-example/src/main/resources/simplejson.pull"].config
    assert simple["source.conn.password"] == "" and simple.get_list("source.filebased.files.to.pull") == []
    web = pull_results["gobblin-example/src/main/resources/google-web-master.pull"].config
    assert web["job.schedule"] == "0 0 18 ? * Sunday" and web.get_int("task.maxretries") == 0
    kafka = pull_results["gobblin-modules/gobblin-kafka-08/resource/job-props/testKafkaIngest.pull"].config
    assert kafka["writer.kafka.topic"] == "{$topic}"


def test_environment_is_used_for_env_references():
    path = CORPUS / "gobblin-example/src/main/resources/hdfs-monthly-to-hdfs-daily.pull"
    assert load_job(path, env={"GOBBLIN_WORK_DIR": "/work"})["metrics.log.dir"] == "/work/metrics"


@pytest.mark.parametrize("name", sorted(TEMPLATES_NEEDING))
def test_templates_parse_and_need_the_pinned_value(name):
    tree = parse_hocon_file(str(CORPUS / name))
    needed = TEMPLATES_NEEDING[name]
    if needed is None:
        resolve(tree, {})
    else:
        with pytest.raises(ConfigError) as info:
            resolve(tree, {})
        assert info.value.key == needed


def test_every_template_is_pinned():
    assert sorted(p.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("*.template")) == sorted(TEMPLATES_NEEDING)
