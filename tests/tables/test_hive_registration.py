"""Gobblin's Hive registration against a real Hive metastore (tests/tables/metastore.py), every table read back
by a separate Spark SQL process through that metastore (tests/tables/spark_sql_reader.py): the rows, by
identity, and the partitions.

One module fixture runs every scenario, then asks the session's Spark SQL process (tests/tables/metastore.py's
``spark_sql_reader``, started first, so that Spark boots while the jobs run) for every table: a Spark start costs
10-40 s here, too much for one per test or module.
"""

from __future__ import annotations

import datetime as dt
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from zoneinfo import ZoneInfo

import fastavro
import pytest

from gobblin_py.connectors.hive.client import connect
from tests.corpus.harness import system_config
from tests.support.cli import run_gpy, run_gpy_here
from tests.support.jobs import run_local
from tests.support.net import free_port
from tests.tables.hive_jobs import hive_job, write_orders
from tests.tables.metastore import HiveMetastore, SparkSqlReader
from tests.support.net import free_port

ZURICH = ZoneInfo("Europe/Zurich")
EVENT = {"type": "record", "name": "Event",
         "fields": [{"name": "id", "type": "int"}, {"name": "change_dt", "type": "long"}]}

# Gobblin's gobblin-example hdfs-monthly-to-hdfs-daily.pull with Gobblin's Hive registration: only the folders
# and the metastore's URI are this machine's ({data}, {uri}); the system configuration (gobblin.properties) says
# where state, staging and output go, as a Gobblin installation's does.
GOBBLIN_PULL = r"""
job.name=ReadMonthlyPartitionedHDFSWriteDailyPartitionedHDFS
job.group=HDFSSourceTarget
job.description=Pull monthly partitioned data from HDFS, write it back as daily partitioned, registered in Hive

source.filebased.data.directory={data}
source.filebased.fs.uri=file:///

source.class=org.apache.gobblin.source.DatePartitionedAvroFileSource
source.entity=dataset

date.partitioned.source.min.watermark.value=2015/01
date.partitioned.source.partition.prefix=monthly
date.partitioned.source.partition.pattern=yyyy/MM

extract.namespace=org.apache.gobblin.example.partitioned
extract.table.name=dataset
extract.is.full=true
extract.table.type=snapshot_only

writer.fs.uri=file:///
writer.codec.type=snappy
writer.builder.class=org.apache.gobblin.writer.AvroDataWriterBuilder
writer.buffer.size=4096
writer.file.path.type=TABLENAME

writer.partitioner.class=org.apache.gobblin.writer.partitioner.TimeBasedAvroWriterPartitioner
writer.partition.columns=change_dt
writer.partition.pattern=yyyy/MM/dd
writer.partition.prefix=daily
writer.partition.timezone=Europe/Zurich

data.publisher.type=org.apache.gobblin.publisher.BaseDataPublisherWithHiveRegistration
hive.registration.policy=org.apache.gobblin.hive.policy.HiveRegistrationPolicyBase
hive.metastore.uri={uri}
hive.database.name=tracking
hive.table.regex=.*/([^/]+)$
additional.hive.table.names=$PRIMARY_TABLE_daily
hive.row.format=AVRO
hive.table.partition.props=owner:etl,retention.days:30

source.timezone=Europe/Zurich
"""


def write_month(root: Path, month: str, days: list[int], first_id: int) -> None:
    year, mon = (int(p) for p in month.split("/"))
    rows = [{"id": first_id + i, "change_dt": int(dt.datetime(year, mon, day, 12, tzinfo=ZURICH).timestamp() * 1000)}
            for i, day in enumerate(days)]
    folder = root / "monthly" / month
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"part-{first_id}.avro", "wb") as out:
        fastavro.writer(out, EVENT, rows)


@dataclass
class Outcomes:
    """What the scenarios did, and what the Spark process read."""

    runs: dict[str, list[subprocess.CompletedProcess]] = field(default_factory=dict)
    facts: dict[str, object] = field(default_factory=dict)
    read: dict[str, dict] = field(default_factory=dict)


def gobblin_style(root: Path, uri: str, out: Outcomes) -> None:
    data = root / "data" / "monthly_partitioned" / "job_output" / "dataset"
    write_month(data, "2015/01", [5], 1)  # the min watermark's month: never read, as in Gobblin
    write_month(data, "2015/02", [1, 1, 14], 10)
    write_month(data, "2015/03", [31], 20)
    job = root / "hdfs-monthly-to-hdfs-daily-hive.pull"
    job.write_text(GOBBLIN_PULL.replace("{data}", str(data)).replace("{uri}", uri))
    system_config(root)
    args = ("run", str(job), "--engine", "local", "--sysconfig", str(root / "gobblin.properties"))
    out.runs["gobblin"] = [run_gpy_here(*args)]
    write_month(data, "2015/04", [8], 40)
    out.runs["gobblin"].append(run_gpy_here(*args))  # April joins as a new partition


def added_column(root: Path, uri: str, out: Outcomes) -> None:
    job = hive_job(root, uri, "orders_by_region", """writer.partitioner.class=ColumnValueWriterPartitioner
writer.partition.columns=region
writer.include.partition.in.file.names=true
source.filebased.schema.change=allow""")
    write_orders(job, "day1.csv", range(1, 7))
    out.runs["added_column"] = [run_local(job)]
    write_orders(job, "day2.csv", range(7, 11), note="n")  # a column more: the table gains it
    out.runs["added_column"].append(run_local(job))


def orc_unpartitioned(root: Path, uri: str, out: Outcomes) -> None:
    job = hive_job(root, uri, "orders_orc", "writer.output.format=ORC")
    write_orders(job, "day1.csv", range(100, 105))
    out.runs["orc"] = [run_local(job)]


def crash_before_registration(root: Path, uri: str, out: Outcomes) -> None:
    job = hive_job(root, uri, "orders_crash")
    write_orders(job, "day1.csv", range(200, 206))
    log = root / "boundary.log"
    # the boundaries: before the log (1), logged (2), after the one file's move (3): killed before registering
    killed = run_gpy("run", str(job.file), "--engine", "local",
                     env={"GPY_TEST_CRASH_AT_BOUNDARY": "3", "GPY_TEST_BOUNDARY_LOG": str(log)})
    with connect([uri], 10) as metastore:
        out.facts["crash_table_after_kill"] = metastore.table("shop", "orders_crash")
    out.facts["crash_killed_at"] = log.read_text().split()[-1]
    out.facts["crash_published_after_kill"] = sorted(p.name for p in job.final.rglob("*.parquet"))
    out.runs["crash"] = [killed, run_local(job)]
    write_orders(job, "day2.csv", range(206, 210))
    phases = root / "phases.log"  # killed inside the registration: after a call or amid one, as it falls
    killed = run_gpy("run", str(job.file), "--engine", "local",
                     env={"GPY_TEST_KILL_IN_PHASE": "commit.hive_register:1:0", "GPY_TEST_PHASE_LOG": str(phases)})
    out.facts["crash_killed_in"] = [line for line in phases.read_text().splitlines() if line.startswith("kill ")]
    out.runs["crash"] += [killed, run_local(job)]
    write_orders(job, "day3.csv", range(210, 214))
    # boundary 5: after the move, the check of its records and the registration, before the state is saved
    killed = run_gpy("run", str(job.file), "--engine", "local",
                     env={"GPY_TEST_CRASH_AT_BOUNDARY": "5", "GPY_TEST_BOUNDARY_LOG": str(log)})
    out.facts["crash_killed_after"] = log.read_text().split()[-1]
    out.runs["crash"] += [killed, run_local(job)]


def metastore_down(root: Path, uri: str, out: Outcomes) -> None:
    down = f"thrift://127.0.0.1:{free_port()}"
    job = hive_job(root, down, "orders_late", "hive.metastore.connect.retries=1")
    write_orders(job, "day1.csv", range(300, 304))
    failed = run_local(job)
    out.facts["down_uri"] = down
    # no data; the folder is claimed by the job (its owner marker), which the failed commit does not undo
    out.facts["down_published"] = sorted(str(p) for p in job.final.rglob("*")
                                         if p.is_file() and p.name != "_gpy_owner.marker")
    job.file.write_text(job.file.read_text().replace(down, uri))
    out.runs["down"] = [failed, run_local(job)]


SCENARIOS = {"gobblin": gobblin_style, "added_column": added_column, "orc": orc_unpartitioned,
             "crash": crash_before_registration, "down": metastore_down}
TABLES = {"gobblin": "tracking.dataset", "gobblin_daily": "tracking.dataset_daily",
          "added_column": "shop.orders_by_region", "orc": "shop.orders_orc", "crash": "shop.orders_crash",
          "down": "shop.orders_late"}


@pytest.fixture(scope="module")
def outcomes(hive_metastore: HiveMetastore, spark_sql_reader: SparkSqlReader, tmp_path_factory) -> Outcomes:
    out = Outcomes()
    for name, scenario in SCENARIOS.items():
        scenario(tmp_path_factory.mktemp(name), hive_metastore.uri, out)
    out.read = spark_sql_reader.read(list(TABLES.values()))
    return out


def read(outcomes: Outcomes, scenario: str) -> dict:
    got = outcomes.read[TABLES[scenario]]
    assert "error" not in got, got["error"]
    return got


def ok(outcomes: Outcomes, scenario: str) -> None:
    for run in outcomes.runs[scenario]:
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]


def test_a_gobblin_pull_with_hive_registration_runs_as_it_is(outcomes):
    ok(outcomes, "gobblin")
    summary = outcomes.runs["gobblin"][0].stdout  # the run says what it registered
    assert "committed hive table tracking.dataset registered (3 partition(s))" in summary, summary
    assert "committed hive table tracking.dataset_daily registered (3 partition(s))" in summary, summary
    for table in ("gobblin", "gobblin_daily"):  # additional.hive.table.names: registered twice
        got = read(outcomes, table)
        assert sorted(r["id"] for r in got["rows"]) == [10, 11, 12, 20, 40]
        assert got["partitions"] == ["datepartition=2015-02-01", "datepartition=2015-02-14",
                                     "datepartition=2015-03-31", "datepartition=2015-04-08"]
        by_day = {r["datepartition"]: sorted(x["id"] for x in got["rows"] if x["datepartition"] == r["datepartition"])
                  for r in got["rows"]}
        assert by_day == {"2015-02-01": [10, 11], "2015-02-14": [12], "2015-03-31": [20], "2015-04-08": [40]}


def test_a_column_the_files_gain_is_added_to_the_table(outcomes):
    ok(outcomes, "added_column")
    got = read(outcomes, "added_column")
    assert got["columns"] == ["order_id", "amount", "note", "region"]  # partition columns last, as Hive lists them
    assert got["partitions"] == ["region=eu", "region=us"]
    assert [(r["order_id"], r["region"], r["note"]) for r in sorted(got["rows"], key=lambda r: r["order_id"])] == [
        (i, "eu" if i % 2 else "us", f"n{i}" if i >= 7 else None) for i in range(1, 11)]


def test_orc_files_make_an_unpartitioned_table(outcomes):
    ok(outcomes, "orc")
    got = read(outcomes, "orc")
    assert got["partitions"] is None
    assert [r["order_id"] for r in got["rows"]] == list(range(100, 105))


def test_a_crash_before_during_or_after_registering_is_finished_by_the_next_run(outcomes):
    killed, recovered, killed_in, recovered_in, killed_after, recovered_after = outcomes.runs["crash"]
    assert killed.returncode == -9, killed.stderr[-2000:]
    assert outcomes.facts["crash_killed_at"].endswith(":step0:fs_rename")
    assert outcomes.facts["crash_published_after_kill"] and outcomes.facts["crash_table_after_kill"] is None
    assert killed_in.returncode == -9 and len(outcomes.facts["crash_killed_in"]) == 1, killed_in.stderr[-2000:]
    assert killed_after.returncode == -9 and outcomes.facts["crash_killed_after"].endswith(":step2:hive_register")
    for run in (recovered, recovered_in, recovered_after):
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert [r["order_id"] for r in read(outcomes, "crash")["rows"]] == list(range(200, 214))


def test_a_metastore_that_is_down_fails_the_dataset_and_the_next_run_completes(outcomes):
    failed, recovered = outcomes.runs["down"]
    assert failed.returncode == 1, failed.stdout[-2000:] + failed.stderr[-2000:]
    text = failed.stdout + failed.stderr
    assert outcomes.facts["down_uri"] in text and "cannot be reached" in text
    assert outcomes.facts["down_published"] == []
    assert recovered.returncode == 0, recovered.stdout[-2000:] + recovered.stderr[-2000:]
    assert "records extracted 4" in recovered.stdout  # the watermark was kept: the rows are pulled again
    assert [r["order_id"] for r in read(outcomes, "down")["rows"]] == list(range(300, 304))
