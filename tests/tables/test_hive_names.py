"""Gobblin's Hive registration without a metastore: names (HiveRegistrationPolicyBase's rules), partitions from
folders, Hive types from Arrow's, and the job files refused before any work, naming the key."""

from __future__ import annotations

import re
import time

import pyarrow as pa
import pytest

from gobblin_py.connectors.hive.layout import location_uri, partition_of
from gobblin_py.connectors.hive.policy import HiveNameError, checked, table_names
from gobblin_py.connectors.hive.registration import PartitionSpec, TableSpec, same_location
from gobblin_py.connectors.hive.schema import hive_type
from gobblin_py.connectors.hive.settings import HiveRegistrationSettings, props_of
from gobblin_py.connectors.hive.step import HiveRegisterStep, MetastoreAddress
from gobblin_py.runtime.commit.commit_sequence import CommitSequence
from gobblin_py.sdk.errors import GobblinPyError
from tests.support.cli import run_gpy_here
from tests.support.jobs import Job, run_local

BASE = {"hive.metastore.uri": "thrift://127.0.0.1:9083", "data.publisher.final.dir": "/data"}


def settings(**keys: str) -> HiveRegistrationSettings:
    return HiveRegistrationSettings.load({**BASE, **{k.replace("_", "."): v for k, v in keys.items()}})


@pytest.mark.parametrize(("name", "expected"), [
    ("PageViewEvent", "pageviewevent"), ("page-view.events", "page_view_events"), ("2015_data", "2015_data"),
    ("a b", "a_b"), ("x1", "x1")])
def test_names_are_lower_cased_and_sanitised_as_gobblin_does(name, expected):
    assert checked(name, "hive.table.name", sanitize=True) == expected


@pytest.mark.parametrize("name", ["_tmp", "123", "", "-x", "é"])
def test_names_gobblin_refuses_are_refused_naming_the_key(name):
    with pytest.raises(HiveNameError, match=r"^hive\.table\.name: .* is not a valid Hive database or table name"):
        checked(name, "hive.table.name", sanitize=True)


def test_without_sanitising_a_name_with_other_characters_is_refused():
    with pytest.raises(HiveNameError, match="hive.sanitize.invalid.names=true would replace"):
        checked("page-views", "hive.table.name", sanitize=False)
    assert checked("Page_Views", "hive.table.name", sanitize=False) == "page_views"


def test_regex_names_prefixes_and_additional_names_give_the_cross_product():
    s = HiveRegistrationSettings.load({**BASE, "hive.database.regex": r".*/(\w+)/[^/]+$",
                                       "additional.hive.database.names": "mirror", "hive.table.regex": r".*/([^/]+)$",
                                       "hive.table.name.prefix": "raw_",
                                       "additional.hive.table.names": "$PRIMARY_TABLE_v2"})
    # as Gobblin names them: $PRIMARY_TABLE is the prefixed name, and the prefix goes around the additional name too
    assert [str(n) for n in table_names(s, "/data/Tracking/Page-Views")] == [
        "tracking.raw_page_views", "tracking.raw_raw_page_views_v2", "mirror.raw_page_views",
        "mirror.raw_raw_page_views_v2"]


def test_a_regex_that_does_not_match_the_whole_folder_names_its_key():
    s = HiveRegistrationSettings.load({**BASE, "hive.database.name": "db", "hive.table.regex": r"/data/(\w+)"})
    with pytest.raises(HiveNameError, match=re.escape("hive.table.regex: '/data/(\\w+)' does not match the "
                                                      "published folder /data/x/y")):
        table_names(s, "/data/x/y")


@pytest.mark.parametrize(("folder", "prefix", "expected"), [
    ("", "", ((), ())),
    ("2015/02/01", "", (("datepartition",), ("2015-02-01",))),
    ("daily/2015/02/01/10", "daily", (("datepartition",), ("2015-02-01-10",))),
    ("hourly/2015/02/01", "daily", (("datepartition",), ("hourly-2015-02-01",))),
    ("Region=eu/day=2015-02-01", "", (("region", "day"), ("eu", "2015-02-01"))),
])
def test_partition_folders_become_partition_columns_and_values(folder, prefix, expected):
    assert partition_of(folder, "datepartition", prefix, "") == expected


def test_locations_are_uris():
    assert location_uri("/data/out/orders/", None) == "file:///data/out/orders"
    assert location_uri("/data/out", "hdfs://nn:8020/") == "hdfs://nn:8020/data/out"
    assert location_uri("s3a://bucket/out/", None) == "s3a://bucket/out"
    assert same_location("file:/data/out", "file:///data/out/") and not same_location("file:/data/a", "file:/data/b")


def test_arrow_types_become_hive_types():
    nested = pa.struct([("a", pa.list_(pa.int32())), ("m", pa.map_(pa.string(), pa.float64()))])
    assert [hive_type(t, "c") for t in (pa.int64(), pa.string(), pa.timestamp("ms", "UTC"), pa.decimal128(10, 2),
                                        pa.date32(), pa.dictionary(pa.int8(), pa.string()), nested)] == [
        "bigint", "string", "timestamp", "decimal(10,2)", "date", "string", "struct<a:array<int>,m:map<string,double>>"]
    with pytest.raises(GobblinPyError, match="column 'at' is time64"):
        hive_type(pa.time64("us"), "column 'at'")


def test_props_are_gobblins_name_colon_value_pairs():
    assert props_of(("owner:etl", " retention : 30 ")) == {"owner": "etl", "retention": "30"}
    problems = HiveRegistrationSettings.problems({**BASE, "hive.table.name": "t", "hive.database.name": "d",
                                                  "hive.storage.props": "compressed"})
    assert [(p.key, "not a name:value pair" in str(p)) for p in problems] == [("hive.storage.props", True)]


def test_the_step_comes_back_whole_from_the_commit_log(tmp_path):
    spec = TableSpec(table_names(settings(hive_database_name="db", hive_table_name="t"), "/x")[0], "file:///x",
                     "PARQUET", (("id", "bigint"),), ("datepartition",),
                     (PartitionSpec(("2015-02-01",), "file:///x/2015/02/01"),), {"owner": "etl"}, {}, {})
    step = HiveRegisterStep(spec, MetastoreAddress(("thrift://127.0.0.1:1",)))
    logged = CommitSequence("job", "", "job_1", [step]).to_json()
    rebuilt = CommitSequence.from_json(logged, None, "the log", {**BASE, "hive.metastore.uri": "thrift://h:9083"})
    assert rebuilt.to_json()["steps"][0]["spec"] == logged["steps"][0]["spec"]
    assert rebuilt.steps[0].address.uris == ("thrift://h:9083",)  # the metastore as the job now names it
    assert spec.partition_name(PartitionSpec(("a/b=c",), "")) == "datepartition=a%2Fb%3Dc"  # Hive's escaping


def test_the_metastore_connect_retries_wait_within_the_runs_retry_budget():
    from gobblin_py.connectors.hive.client import MetastoreError, connect
    from gobblin_py.sdk.retry_budget import RetryBudget

    began = time.monotonic()
    with pytest.raises(MetastoreError, match=r"\(2 tries\), not tried again: the run's retry budget is spent "
                                             r"\(gpy.retry.budget.seconds=0.2\)"):
        with connect(["thrift://127.0.0.1:1"], 1, tries=20, delay_s=60, budget=RetryBudget(0.2)):
            pass
    assert time.monotonic() - began < 10  # 19 waits of 60 s without the budget


def hive_job(tmp_path, extra: str) -> Job:
    return Job(tmp_path, extra="data.publisher.type=org.apache.gobblin.publisher.BaseDataPublisherWithHiveRegistration\n"
                               "writer.file.pathType=TABLENAME\nhive.database.name=shop\n" + extra)


@pytest.mark.parametrize(("extra", "key", "says"), [
    ("hive.metastore.uri=thrift://127.0.0.1:1\nhive.table.name=_orders", "hive.table.name",
     "'_orders' is not a valid Hive database or table name"),
    ("hive.metastore.uri=thrift://127.0.0.1:1\nhive.table.name=orders\nadditional.hive.table.names=123",
     "additional.hive.table.names", "'123' is not a valid"),
    ("hive.metastore.uri=thrift://127.0.0.1:1\nhive.table.name=Or-ders\nhive.sanitize.invalid.names=false",
     "hive.table.name", "'Or-ders' is not a valid"),
    ("hive.metastore.uri=thrift://127.0.0.1:1", "hive.table.name", "is not set"),
    ("hive.metastore.uri=http://127.0.0.1:1\nhive.table.name=orders", "hive.metastore.uri", "is not a metastore URI"),
    ("hive.table.name=orders", "hive.metastore.uri", "is not set"),
    ("hive.metastore.uri=thrift://127.0.0.1:1\nhive.table.name=orders\nwriter.output.format=CSV",
     "writer.output.format", "a Hive table is registered over Parquet, ORC or Avro files"),
    ("hive.metastore.uri=thrift://127.0.0.1:1\nhive.table.name=orders\nhive.row.format=AVRO",
     "hive.row.format", "AVRO, but the files are PARQUET"),
    ("hive.metastore.uri=thrift://127.0.0.1:1\nhive.table.name=orders\nwriter.file.pathType=DEFAULT",
     "writer.file.pathType", "DEFAULT publishes each run into a folder of its own"),
    ("hive.metastore.uri=thrift://127.0.0.1:1\nhive.table.name=orders\n"
     "data.publisher.job.type=org.apache.gobblin.publisher.HiveRegistrationPublisher\n"
     "data.publisher.type=org.apache.gobblin.publisher.NoopPublisher", "data.publisher.type",
     "NoopPublisher would not run: the job-level"),
])
def test_a_job_hive_cannot_register_exits_2_naming_the_key_before_any_work(tmp_path, extra, key, says):
    job = hive_job(tmp_path, extra)
    result = run_local(job)
    assert result.returncode == 2, result.stdout + result.stderr
    text = result.stdout + result.stderr
    assert key in text and says in text, text
    assert not job.final.exists() and not (tmp_path / "output").exists()


def test_validate_says_the_same(tmp_path):
    result = run_gpy_here("validate", str(hive_job(tmp_path, "hive.metastore.uri=thrift://h:1\n"
                                                             "hive.table.name=9").file))
    assert result.returncode == 2 and "hive.table.name" in result.stdout and "'9' is not a valid" in result.stdout


def test_gobblins_registration_tuning_keys_are_accepted_strictly(tmp_path):
    # Gobblin's pool and thread keys change how fast it registers, not what: gpy accepts them and says so
    job = hive_job(tmp_path, "hive.metastore.uri=thrift://h:1\nhive.table.name=orders\nhive.register.threads=20\n"
                             "hive.registration.path.dedupe.enabled=true")
    result = run_gpy_here("validate", "--strict", str(job.file))
    assert result.returncode == 0, result.stdout
