"""Every corpus job that validates, run: a copy with local hosts and folders (tests/corpus/harness.py), its
output checked against what Gobblin's own tests of those classes expect."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path
from zoneinfo import ZoneInfo

import fastavro
import pyarrow.parquet as pq
import pytest

from gobblin_py.sdk.watermarks import LongWatermark
from gobblin_py.store import FsDatasetStateStore
from tests.copy.files import LOG_ENTRIES, log_data_tar_gz
from tests.corpus.harness import local_copy, run_job, system_config
from tests.support.cli import run_gpy
from tests.support.paths import CORPUS, GOBBLIN_DATA, NEEDS_CORPUS

pytestmark = NEEDS_CORPUS

EXAMPLES = "gobblin-example/src/main/resources/"
# fill-in templates (placeholders such as <table name>, no source.class): nothing to run
NO_SOURCE = [
    *(f"gobblin-core/src/main/resources/{db}/{kind}.pull" for db in ("mysql", "sqlserver")
      for kind in ("table_append", "table_full", "table_full_no_primary_keys_no_delta_columns", "table_inc")),
    *(f"gobblin-salesforce/src/main/resources/stand-alone/{kind}.pull" for kind in ("table_append", "table_full",
                                                                                  "table_inc")),
]
TEST_SOURCE_JOBS = {
    "gobblin-test/resource/job-conf/GobblinTest1.pull": "org.apache.gobblin.test1",
    "gobblin-test/resource/job-conf/GobblinTest2.pull": "org.apache.gobblin.test2",
    "gobblin-test/resource/job-conf/GobblinTest3.pull": "org.apache.gobblin.test3",
    "gobblin-test/resource/mr-job-conf/GobblinMRTest.pull": "org.apache.gobblin.MRTest",
    "gobblin-runtime/src/test/resources/mr-job-conf/GobblinMRTest.pull": "org.apache.gobblin.MRTest",
}
# run elsewhere, beside their servers: avro-to-mysql.pull in tests/sql/test_corpus_avro_to_mysql.py, kafka-hdfs.pull
# in tests/kafka/test_gobblin_jobs.py, testKafkaIngest.pull and streaming-test-kafka.pull in
# tests/kafka/test_corpus_sequential.py, streaming-kafka-console.pull, streaming-kafka-kafka.pull and
# kafka-console.pull (with the tests' schema registry) in tests/kafka/test_gobblin_jobs.py; wikipedia.pull and wikipedia-console.pull in tests/sources/test_wikipedia.py,
# wikipedia-orc.pull there too, wikipedia-kafka.pull in tests/kafka/test_wikipedia_kafka.py; state-store-retention.pull in tests/state/test_retention_job.py;
# hive-avro-to-orc.pull and distcp-hive.pull beside the Hive metastore in tests/tables/test_hive_corpus_jobs.py
COPY = "gobblin-test-harness/resource/dataManagement/copy/job-props/copy.pull"
RUN = [*TEST_SOURCE_JOBS, EXAMPLES + "example-parquet.pull", EXAMPLES + "simplejson.pull",
       EXAMPLES + "avro-to-mysql.pull", EXAMPLES + "hdfs-monthly-to-hdfs-daily.pull", EXAMPLES + "kafka-hdfs.pull",
       EXAMPLES + "streaming-test-kafka.pull", "gobblin-modules/gobblin-kafka-08/resource/job-props/testKafkaIngest.pull",
       EXAMPLES + "streaming-kafka-console.pull", EXAMPLES + "streaming-kafka-kafka.pull", EXAMPLES + "kafka-console.pull", COPY,
       EXAMPLES + "wikipedia.pull", EXAMPLES + "wikipedia-console.pull", EXAMPLES + "wikipedia-kafka.pull",
       EXAMPLES + "wikipedia-orc.pull", EXAMPLES + "state-store-retention.pull", EXAMPLES + "hive-avro-to-orc.pull",
       EXAMPLES + "distcp-hive.pull"]
REPO_CONF = Path(__file__).resolve().parents[2] / "conf" / "gobblin.properties"
NOT_VALID_BUT_COVERED = [EXAMPLES + "mysql-state-store-retention.pull"]  # its ENC(…) password: run by
# tests/sql/test_mysql_state_retention.py with the password given plain


def test_every_valid_corpus_job_is_run_here():
    # under the deployment's system configuration (the corpus has none above it), as the validation count is
    result = run_gpy("validate", str(CORPUS), "--json", "--sysconfig", str(REPO_CONF),
                     env={"GOBBLIN_WORK_DIR": "/tmp/gobblin-work"})
    reports = {r["path"].split("gobblin-jobs/", 1)[1]: r for r in json.loads(result.stdout)}
    assert {p for p, r in reports.items() if r["ok"]} == set(RUN)
    assert {p for p, r in reports.items() if not r["error"] and not r["unsupported"]} == \
        set(NO_SOURCE) | set(RUN) | set(NOT_VALID_BUT_COVERED)


@pytest.mark.parametrize("name", NO_SOURCE)
def test_templates_without_a_source_are_refused_naming_source_class(name, tmp_path):
    job = local_copy(name, tmp_path)
    system_config(tmp_path)
    result = run_job(job, tmp_path, expect=2)
    assert "source.class" in result.stderr and "is not set" in result.stderr


def read_avro(paths: list[Path]) -> list[dict]:
    rows = []
    for path in paths:
        with open(path, "rb") as stream:
            rows.extend(fastavro.reader(stream))
    return rows


@pytest.mark.parametrize("name", sorted(TEST_SOURCE_JOBS))
def test_gobblin_test_jobs(name, tmp_path):
    job = local_copy(name, tmp_path)
    system_config(tmp_path)
    folder = Path(next(v for k, v in (line.split("=", 1) for line in job.read_text().splitlines() if "=" in line)
                       if k == "source.files").split(",")[0]).parent
    (tmp_path / folder).mkdir(parents=True)
    for suffix in ("0", "1"):  # the jobs' relative paths, read from the working folder as in Gobblin
        shutil.copy(GOBBLIN_DATA / "testsource" / "test.avro.0", tmp_path / folder / f"test.avro.{suffix}")
    result = run_job(job, tmp_path, cwd=tmp_path)
    namespace = TEST_SOURCE_JOBS[name].replace(".", "/")
    for table in ("TestTable1", "TestTable2"):
        files = sorted((tmp_path / "job-output" / namespace / table).rglob("*.avro"))
        rows = read_avro(files)
        assert len(rows) == 1000  # TestExtractor's expected count; RowCountPolicy passes
        assert rows[0] == {"name": "Alyssa", "favorite_number": 256, "favorite_color": "yellow"}
    assert "RowCountPolicy (OPTIONAL): PASSED in 2 task(s)" in result.stdout


def test_example_parquet(tmp_path):
    job = local_copy(EXAMPLES + "example-parquet.pull", tmp_path)
    system_config(tmp_path)
    run_job(job, tmp_path)
    files = sorted((tmp_path / "job-output" / "TestDB" / "TestTable").rglob("*.parquet"))  # the source's extract
    table = pq.read_table(files[0]).to_pylist() + pq.read_table(files[1]).to_pylist()
    assert sorted((r["partition"], r["sequence"]) for r in table) == \
        [(0, s) for s in range(1, 101)] + [(1, s) for s in range(101, 201)]
    assert {r["payload"] for r in table} == {"I am an Avro message"}
    state = FsDatasetStateStore(str(tmp_path / "state-store")).get_latest_dataset_state("ExampleParquetWriter", "")
    assert sorted(t.actual_high_watermark(LongWatermark).value for t in state.all_task_states()) == [101, 201]


def test_simplejson_without_files_has_nothing_to_do_and_with_one_makes_avro(tmp_path):
    job = local_copy(EXAMPLES + "simplejson.pull", tmp_path)
    system_config(tmp_path)
    assert "nothing new to pull" in run_job(job, tmp_path).stdout  # Gobblin: no files listed, no work units
    data = tmp_path / "users.json"
    data.write_text('{"name": "Alyssa", "favorite_number": 256, "favorite_color": "yellow"}\n'
                    '{"name": "Ben", "favorite_number": 7, "favorite_color": "red"}\n')
    job = local_copy(EXAMPLES + "simplejson.pull", tmp_path, {"source.filebased.files.to.pull": f"file://{data}"})
    run_job(job, tmp_path)
    rows = read_avro(sorted((tmp_path / "job-output" / "org" / "apache" / "gobblin" / "example" / "simplejson"
                             / "ExampleTable").rglob("*.avro")))
    assert rows == [{"name": "Alyssa", "favorite_number": 256, "favorite_color": "yellow"},
                    {"name": "Ben", "favorite_number": 7, "favorite_color": "red"}]


# -- hdfs-monthly-to-hdfs-daily

EVENT = {"type": "record", "name": "Event", "fields": [{"name": "id", "type": "int"}, {"name": "change_dt", "type": "long"}]}
ZURICH = ZoneInfo("Europe/Zurich")


def write_month(root: Path, month: str, days: list[int], first_id: int) -> None:
    year, mon = (int(p) for p in month.split("/"))
    rows = [{"id": first_id + i, "change_dt": int(dt.datetime(year, mon, day, 12, tzinfo=ZURICH).timestamp() * 1000)}
            for i, day in enumerate(days)]
    folder = root / "monthly" / month
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "part-0.avro", "wb") as out:
        fastavro.writer(out, EVENT, rows)


def test_hdfs_monthly_to_hdfs_daily(tmp_path):
    data = tmp_path / "data" / "monthly_partitioned" / "job_output" / "dataset"
    write_month(data, "2015/01", [5], 1)            # the min watermark's month: never read, as in Gobblin
    write_month(data, "2015/02", [1, 1, 14], 10)
    write_month(data, "2015/03", [31], 20)
    job = local_copy(EXAMPLES + "hdfs-monthly-to-hdfs-daily.pull", tmp_path,
                     {"source.filebased.data.directory": str(data)})
    system_config(tmp_path)
    run_job(job, tmp_path)
    daily = tmp_path / "job-output" / "dataset" / "daily"
    by_day = {str(p.parent.relative_to(daily)): sorted(r["id"] for r in read_avro([p])) for p in daily.rglob("*.avro")}
    found: dict[str, list[int]] = {}
    for day, ids in by_day.items():
        found.setdefault(day, []).extend(ids)
    assert {d: sorted(i) for d, i in found.items()} == {"2015/02/01": [10, 11], "2015/02/14": [12], "2015/03/31": [20]}
    with open(next(daily.rglob("*.avro")), "rb") as stream:
        assert fastavro.reader(stream).codec == "snappy"
    write_month(data, "2015/02", [2], 30)  # late file in a committed partition: not picked up (Gobblin's rule)
    (data / "monthly" / "2015" / "02" / "part-0.avro").rename(data / "monthly" / "2015" / "02" / "part-1.avro")
    write_month(data, "2015/04", [8], 40)
    run_job(job, tmp_path)  # April joins the existing tree file by file (TimePartitionedDataPublisher)
    ids = sorted(r["id"] for r in read_avro(list(daily.rglob("*.avro"))))
    assert ids == [10, 11, 12, 20, 40]


def test_copy_unpacks_the_log_archive_and_a_second_run_copies_nothing(tmp_path):
    """Gobblin's CopyIntegrationTest: the job file as it is (its folders relative to the working folder, as the
    test runs it), an archive with the entries of Gobblin's LogData.tar.gz, the two text files published."""
    job = local_copy(COPY, tmp_path)
    system_config(tmp_path)
    log_data_tar_gz(tmp_path / "gobblin-test-harness/resource/dataManagement/copy/data/LogData.tar.gz")
    run_job(job, tmp_path, cwd=tmp_path)  # its last line has no separator: read as a key, as Gobblin's test reads it
    published = tmp_path / "job-output"
    assert (published / "LogData/sub1/sub2/text1.txt").read_text() == "text1"
    assert (published / "LogData/sub1/sub2/text2.txt").read_text() == "text2"
    files = {str(p.relative_to(published)): p.read_bytes() for p in published.rglob("*") if p.is_file()}
    assert files == LOG_ENTRIES
    assert "nothing new to pull" in run_job(job, tmp_path, cwd=tmp_path).stdout
    assert {str(p.relative_to(published)) for p in published.rglob("*") if p.is_file()} == set(LOG_ENTRIES)
