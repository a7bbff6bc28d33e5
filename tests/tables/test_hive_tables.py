"""Registering against the session's real Hive metastore: again and again without adding anything twice, and
refused, with nothing published, where an existing table cannot take the folder."""

from __future__ import annotations

import dataclasses

import pytest

from gobblin_py.connectors.hive.client import MetastoreError, connect
from gobblin_py.connectors.hive.policy import TableName
from gobblin_py.connectors.hive.registration import PartitionSpec, TableSpec, register, registered
from tests.support.jobs import run_local
from tests.tables.hive_jobs import hive_job, write_orders


def spec(tmp_path, table: str, *days: str, columns=(("id", "bigint"),)) -> TableSpec:
    location = (tmp_path / table).as_uri()
    return TableSpec(TableName("gpy_tests", table), location, "PARQUET", tuple(columns), ("datepartition",),
                     tuple(PartitionSpec((d,), f"{location}/{d}") for d in days), {"owner": "etl", "team": "data"})


def test_registering_again_adds_nothing_twice(hive_metastore, tmp_path):
    first = spec(tmp_path, "events", "2015-02-01", "2015-02-02")
    with connect([hive_metastore.uri], 10) as metastore:
        assert not registered(metastore, first)
        register(metastore, first)
        assert registered(metastore, first)
        register(metastore, first)  # a commit finished again by a later run
        later = spec(tmp_path, "events", "2015-02-02", "2015-02-03", columns=(("id", "bigint"), ("note", "string")))
        assert not registered(metastore, later)
        register(metastore, later)
        assert registered(metastore, later) and registered(metastore, first)
        table = metastore.table("gpy_tests", "events")
        names = metastore.client.get_partition_names("gpy_tests", "events", -1)
    assert [c.name for c in table.sd.cols] == ["id", "note"] and table.tableType == "EXTERNAL_TABLE"
    assert table.owner == "etl" and table.parameters["team"] == "data" and table.parameters["EXTERNAL"] == "TRUE"
    assert sorted(names) == ["datepartition=2015-02-01", "datepartition=2015-02-02", "datepartition=2015-02-03"]


@pytest.mark.parametrize(("change", "says"), [
    (lambda s, tmp: dataclasses.replace(s, location=(tmp / "elsewhere").as_uri()), "is over"),
    (lambda s, tmp: dataclasses.replace(s, partition_keys=("day",)), "is partitioned by ['datepartition']"),
    (lambda s, tmp: dataclasses.replace(s, columns=(("id", "string"),)),
     "column id of table gpy_tests.kinds_{n} is bigint, and the published files hold it as string"),
])
def test_a_table_that_cannot_take_the_folder_is_not_changed(hive_metastore, tmp_path, change, says, request):
    n = request.node.callspec.indices["change"]
    first = spec(tmp_path, f"kinds_{n}", "2015-02-01")
    with connect([hive_metastore.uri], 10) as metastore:
        register(metastore, first)
        with pytest.raises(MetastoreError, match=f"cannot register .*{says.format(n=n)}".replace("[", r"\[")
                           .replace("]", r"\]")):
            register(metastore, change(first, tmp_path))
        assert registered(metastore, first)


def test_a_job_whose_table_is_over_another_folder_publishes_nothing(hive_metastore, tmp_path):
    with connect([hive_metastore.uri], 10) as metastore:
        register(metastore, dataclasses.replace(spec(tmp_path, "taken"), partition_keys=(),
                                                location=(tmp_path / "other").as_uri()))
    job = hive_job(tmp_path, hive_metastore.uri, "taken", "hive.database.name=gpy_tests")
    write_orders(job, "day1.csv", range(1, 4))
    refused = run_local(job)
    assert refused.returncode == 1 and "table gpy_tests.taken is over" in refused.stdout, refused.stdout
    assert "nothing of the dataset is published" in refused.stdout
    assert not list(job.final.rglob("*.parquet"))
    assert "records extracted 3" in run_local(job).stdout  # the watermark was kept: the rows come again


def test_gobblins_job_level_registration_publisher_publishes_and_registers(hive_metastore, tmp_path):
    # Gobblin's pairing: BaseDataPublisher in the tasks, HiveRegistrationPublisher for the job; gpy publishes at
    # the job level only, so the one publisher does both
    job = hive_job(tmp_path, hive_metastore.uri, "job_level", "data.publisher.type=BaseDataPublisher\n"
                   "data.publisher.job.type=org.apache.gobblin.publisher.HiveRegistrationPublisher")
    write_orders(job, "day1.csv", range(1, 4))
    result = run_local(job)
    assert result.returncode == 0, result.stdout + result.stderr
    with connect([hive_metastore.uri], 10) as metastore:
        table = metastore.table("shop", "job_level")
    assert table is not None and table.sd.location == (job.final / "orders").as_uri().replace("file:///", "file:/")
