"""Gobblin's two Hive jobs of the corpus, run against the real Hive metastore (tests/tables/metastore.py) with
tables this test registers, their results read by a separate Spark SQL process (tests/tables/spark_sql_reader.py):

- ``hive-avro-to-orc.pull`` (HiveSource, HiveAvroToOrcConverter, HiveQueryWriterBuilder, HiveConvertPublisher):
  a partitioned Avro table converted through Spark SQL into the flattened ORC table ``<table>_orc``; a second
  run finds every partition's watermark current and converts nothing;
- ``distcp-hive.pull`` (CopySource with HiveDatasetFinder): a partitioned table's files copied below the target
  root and the table registered at the destination with its partitions.

Only values change in the job files: the metastore's URI, the databases (this session's metastore is shared) and
the folders. One module fixture runs both jobs while the reader's Spark starts.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import fastavro
import pytest

from gobblin_py.connectors.hive.client import connect
from gobblin_py.connectors.hive.policy import TableName
from gobblin_py.connectors.hive.registration import PartitionSpec, TableSpec, register
from tests.support.cli import run_gpy
from tests.support.paths import NEEDS_CORPUS
from tests.corpus.harness import local_copy, run_job, system_config

pytestmark = NEEDS_CORPUS
EXAMPLES = "gobblin-example/src/main/resources/"
EVENT = {"type": "record", "name": "Event", "fields": [
    {"name": "id", "type": "int"}, {"name": "name", "type": "string"},
    {"name": "header", "type": {"type": "record", "name": "Header",
                                "fields": [{"name": "time", "type": "long"}, {"name": "host", "type": "string"}]}}]}
DAYS = {"2026-11-27": [1, 2], "2026-11-28": [3]}


def avro_table(uri: str, root: Path, database: str, table: str, days: dict[str, list[int]] = DAYS) -> None:
    """A partitioned Avro table ``database.table`` over files under ``root/table``, registered over thrift (the
    partitions of ``days`` added when the table exists)."""
    partitions = []
    for day, ids in days.items():
        folder = root / table / f"datepartition={day}"
        folder.mkdir(parents=True)
        with open(folder / "part-0.avro", "wb") as out:
            fastavro.writer(out, EVENT, [{"id": i, "name": f"n{i}", "header": {"time": 1000 * i, "host": f"h{i}"}}
                                         for i in ids])
        partitions.append(PartitionSpec((day,), f"file:{folder}"))
    spec = TableSpec(TableName(database, table), f"file:{root / table}", "AVRO",
                     (("id", "int"), ("name", "string"), ("header", "struct<time:bigint,host:string>")),
                     ("datepartition",), tuple(partitions), avro_schema=json.dumps(EVENT))
    with connect([uri], 30) as hms:
        register(hms, spec)


@pytest.fixture(scope="module")
def outcome(hive_metastore, spark_sql_reader, tmp_path_factory):
    root = tmp_path_factory.mktemp("hive-corpus")
    uri = hive_metastore.uri
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK", "SPARK_"))}
    out: dict = {}
    # Avro to ORC: the job's table pattern t*_avro, in a database of its own; tx_other is not selected
    conv = root / "conv"
    conv.mkdir()
    for table in ("t1_avro", "tx_other"):
        avro_table(uri, conv / "warehouse", "gpy_conv", table)
    job = local_copy(EXAMPLES + "hive-avro-to-orc.pull", conv, {
        "hive.dataset.database": "gpy_conv", "hive.dataset.hive.metastore.uri": uri})
    system_config(conv)
    args = ("run", str(job), "--engine", "local", "--sysconfig", str(conv / "gobblin.properties"))
    # its own process: the conversion's Spark session is the gpy process's
    work = {"GOBBLIN_WORK_DIR": str(conv / "work")}
    out["conversion"] = [run_gpy(*args, env={**env, **work})]
    orc = conv / "warehouse" / "t1_avro_orc" / "final"
    out["orc_files"] = sorted((p.relative_to(orc), p.stat().st_mtime_ns) for p in orc.rglob("*") if p.is_file())
    for _ in range(2):  # the third run after a run that converted nothing: the watermarks are still there
        out["conversion"].append(run_gpy(*args, env={**env, **work}))
    out["orc_files_after"] = sorted((p.relative_to(orc), p.stat().st_mtime_ns) for p in orc.rglob("*")
                                    if p.is_file())
    # the Hive copy: a table of gpy_copy_src to gpy_copy_dst, under the target root
    copy = root / "copy"
    copy.mkdir()
    avro_table(uri, copy / "source", "gpy_copy_src", "events")
    target = copy / "target"
    job = local_copy(EXAMPLES + "distcp-hive.pull", copy, {
        "hive.dataset.database": "gpy_copy_src", "hive.dataset.hive.metastore.uri": uri,
        "hive.dataset.copy.target.metastore.uri": uri, "hive.dataset.copy.target.database": "gpy_copy_dst",
        "hive.dataset.copy.target.table.root": str(target), "data.publisher.final.dir": str(target),
        "gobblin.dataset.pattern": str(copy / "unused"), "distcp.persist.dir": str(copy / "persist")})
    system_config(copy)
    out["copy"], out["copied"] = [], []
    for step in ("first", "again", "new partition"):
        if step == "new partition":
            avro_table(uri, copy / "source", "gpy_copy_src", "events", {"2026-11-29": [4]})
        out["copy"].append(run_job(job, copy))
        out["copied"].append(sorted((str(p.relative_to(target)), p.stat().st_mtime_ns)
                                    for p in target.rglob("*.avro")))
    out["read"] = spark_sql_reader.read(["gpy_conv.t1_avro_orc", "gpy_copy_dst.events", "gpy_conv.tx_other_orc"])
    return out


def test_avro_partitions_are_converted_to_a_flattened_orc_table_through_spark_sql(outcome):
    first = outcome["conversion"][0]
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    table = outcome["read"]["gpy_conv.t1_avro_orc"]
    assert "error" not in table, table
    assert table["partitions"] == [f"datepartition={day}" for day in DAYS]
    assert table["columns"] == ["id", "name", "header__time", "header__host", "datepartition"]
    assert table["rows"] == [{"id": i, "name": f"n{i}", "header__time": 1000 * i, "header__host": f"h{i}",
                              "datepartition": day} for day, ids in DAYS.items() for i in ids]
    # the table outside the job's pattern t*_avro is left alone
    assert "error" in outcome["read"]["gpy_conv.tx_other_orc"]
    # Gobblin's layout: <dataPath>/final/<partition>, the staging folders gone
    assert {str(p.parent) for p, _ in outcome["orc_files"]} == {f"datepartition={day}" for day in DAYS}


def test_later_runs_find_every_partition_current_and_convert_nothing(outcome):
    for later in outcome["conversion"][1:]:
        assert later.returncode == 0, later.stdout[-3000:] + later.stderr[-3000:]
        assert "hive_conversion_up_to_date" in later.stdout + later.stderr
        assert "hive_conversion_planned" not in later.stdout + later.stderr
    assert outcome["orc_files_after"] == outcome["orc_files"]  # not rewritten


def test_the_hive_copy_copies_the_table_and_registers_it_at_the_destination_and_then_only_what_is_new(outcome):
    first, again, new = outcome["copied"]
    assert [name for name, _ in first] == [f"events/datepartition={day}/part-0.avro" for day in DAYS]
    assert again == first  # an unchanged table: nothing copied again
    assert new == sorted([*first, *(f for f in new if f[0] == "events/datepartition=2026-11-29/part-0.avro")])
    assert len(new) == 3
    table = outcome["read"]["gpy_copy_dst.events"]
    assert "error" not in table, table
    assert table["partitions"] == [f"datepartition={day}" for day in [*DAYS, "2026-11-29"]]
    assert [r["id"] for r in table["rows"]] == [1, 2, 3, 4]
    assert table["rows"][0]["header"] == {"time": 1000, "host": "h1"}


def test_a_publish_step_replayed_after_a_crash_finishes_the_swap_and_changes_nothing_after(hive_metastore, tmp_path):
    from gobblin_py.connectors.hive.conversion_publisher import HiveConvertPublishStep

    uri = hive_metastore.uri
    data = tmp_path / "t_orc"
    units = []
    for day in ("d1", "d2"):
        staging = data / f"t_orc_staging_{day}"
        (staging / f"p={day}").mkdir(parents=True)
        (staging / f"p={day}" / "part-0.orc").write_text(day)
        with connect([uri], 30) as hms:
            register(hms, TableSpec(TableName("gpy_publish", f"t_orc_staging_{day}"), f"file:{staging / f'p={day}'}",
                                    "ORC", (("id", "int"),)))
        units.append({"database": "gpy_publish", "table": "t_orc", "staging_table": f"t_orc_staging_{day}",
                      "staging_root": str(staging), "staging_folder": str(staging / f"p={day}"),
                      "final_folder": str(data / "final" / f"p={day}"), "table_folder": str(data / "final"),
                      "columns": [["id", "int"]], "partition_keys": ["p"], "values": [day], "source": "gpy_publish.t"})
    # d1: killed after its folder was moved, before the registration; d2: not started
    (data / "final").mkdir()
    (data / "t_orc_staging_d1" / "p=d1").rename(data / "final" / "p=d1")
    for unit in units:
        step = HiveConvertPublishStep(unit, (uri,), 30)
        assert not step.is_completed()
        step.execute()
        assert step.is_completed()
        step.execute()  # replayed once more: nothing moves, nothing is lost
    assert sorted(p.read_text() for p in (data / "final").rglob("*.orc")) == ["d1", "d2"]
    assert not list(data.glob("t_orc_staging_*"))
    with connect([uri], 30) as hms:
        assert hms.table("gpy_publish", "t_orc_staging_d1") is None
        found = hms.all_partitions("gpy_publish", "t_orc")
    assert sorted((p.values, p.sd.location) for p in found) == [
        (["d1"], f"file:{data / 'final' / 'p=d1'}"), (["d2"], f"file:{data / 'final' / 'p=d2'}")]


def test_a_failed_attempt_drops_its_staging_table_and_a_committed_one_leaves_it_to_the_publisher(hive_metastore,
                                                                                                   tmp_path):
    from gobblin_py.connectors.hive.conversion_writer import HiveQueryWriter
    from gobblin_py.sdk.states import WorkUnitState

    uri = hive_metastore.uri
    writers = []
    for name in ("failed", "committed"):
        folder = tmp_path / f"t_orc_staging_{name}"
        folder.mkdir()
        (folder / "part-0.orc").write_text(name)
        with connect([uri], 30) as hms:
            register(hms, TableSpec(TableName("gpy_staging", f"t_orc_staging_{name}"), f"file:{folder}", "ORC",
                                    (("id", "int"),)))
        writer = HiveQueryWriter(WorkUnitState(properties={"hive.dataset.hive.metastore.uri": uri}))
        writer.staged.append(("gpy_staging", f"t_orc_staging_{name}", str(folder)))
        writers.append(writer)
    failed, committed = writers
    committed.commit()
    for writer in writers:
        writer.cleanup()  # the runtime's, after a failure or a commit
    with connect([uri], 30) as hms:
        assert hms.table("gpy_staging", "t_orc_staging_failed") is None
        assert hms.table("gpy_staging", "t_orc_staging_committed") is not None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t_orc_staging_committed"]
