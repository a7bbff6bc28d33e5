"""The Hive jobs' rules that need no metastore: which tables a whitelist selects, which partitions a conversion
plans from their folders' modification times and watermarks, where a copied table goes, and the job files refused
before any work, naming the key. (Their runs against the metastore: tests/tables/test_hive_corpus_jobs.py.)"""

from __future__ import annotations

import json
import os
import time
from types import SimpleNamespace

import pytest

from gobblin_py.connectors.hive.conversion_source import WATERMARKS_KEY, HiveSource, previous_watermarks
from gobblin_py.connectors.hive.copy_finder import target_root
from gobblin_py.connectors.hive.datasets import HiveDatasetSettings
from gobblin_py.sdk.states import WorkingState, WorkUnitState
from tests.support.cli import run_gpy_here

URI = {"hive.dataset.hive.metastore.uri": "thrift://127.0.0.1:9083"}


def selection(**keys: str):
    return HiveDatasetSettings.load({**URI, **{k.replace("_", "."): v for k, v in keys.items()}}).selection()


def test_the_database_and_pattern_or_the_whitelist_select_tables_the_blacklist_leaves_out():
    pattern = selection(hive_dataset_database="default", hive_dataset_table_pattern="t*_avro")
    assert [pattern.table("default", t) for t in ("t1_avro", "T2_AVRO", "t1_orc", "x_avro")] == [True, True, False,
                                                                                                False]
    assert not pattern.table("other", "t1_avro")
    listed = selection(hive_dataset_whitelist="db1, db2.a|b, db*.c*", hive_dataset_blacklist="db1.secret*")
    assert listed.table("db1", "anything") and not listed.table("db1", "secret_x")
    assert listed.table("db2", "a") and listed.table("db2", "b") and not listed.table("db2", "ab")
    assert listed.table("db9", "cats") and not listed.table("db9", "dogs")
    assert listed.database("db2") and not listed.database("other")


def _state(unit: dict, committed: bool = True, carried: dict | None = None) -> WorkUnitState:
    state = WorkUnitState()
    state.set_prop("gpy.hive.unit", json.dumps(unit))
    if carried is not None:
        state.set_prop(WATERMARKS_KEY, json.dumps(carried))
    state.working_state = WorkingState.COMMITTED if committed else WorkingState.FAILED
    return state


def test_a_partition_is_planned_when_its_folder_changed_since_its_watermark_and_the_others_ride_along(tmp_path):
    table = SimpleNamespace(dbName="db", tableName="t", sd=SimpleNamespace(location=f"file:{tmp_path}"))
    folders = {}
    for day in ("d1", "d2", "d3"):
        folders[day] = tmp_path / f"datepartition={day}"
        folders[day].mkdir()
    now_ms = int(time.time() * 1000)
    parts = [(f"datepartition={d}", [d], f"file:{f}", 0) for d, f in folders.items()]
    first = HiveSource._table_units("db.t", table, parts, {}, now_ms - 86_400_000)
    assert [json.loads(u.get_prop("gpy.hive.unit"))["partition"] for u in first] == [p[0] for p in parts]
    # the committed state: d1 and d2 converted; a failed d3 keeps its old watermark
    marks = previous_watermarks([
        _state({"partition": "datepartition=d1", "update_time": now_ms + 10_000}, carried={"old": 5}),
        _state({"partition": "datepartition=d2", "update_time": now_ms + 10_000}),
        _state({"partition": "datepartition=d3", "update_time": now_ms + 10_000}, committed=False)])
    assert marks == {"old": 5, "datepartition=d1": now_ms + 10_000, "datepartition=d2": now_ms + 10_000}
    second = HiveSource._table_units("db.t", table, parts, marks, now_ms - 86_400_000)
    assert [json.loads(u.get_prop("gpy.hive.unit"))["partition"] for u in second] == ["datepartition=d3"]
    assert json.loads(second[0].get_prop(WATERMARKS_KEY)) == {"old": 5, "datepartition=d1": now_ms + 10_000,
                                                              "datepartition=d2": now_ms + 10_000}
    assert second[0].low_watermark() == {"value": 0}
    # a folder last changed before the lookback window, or a partition created before it, is not looked at
    old = (now_ms - 5 * 86_400_000) / 1000
    os.utime(folders["d3"], (old, old))
    assert HiveSource._table_units("db.t", table, parts, marks, now_ms - 3 * 86_400_000) == []
    created_long_ago = [(n, v, loc, int(old)) for n, v, loc, _ in parts]
    assert HiveSource._table_units("db.t", table, created_long_ago, {}, now_ms - 3 * 86_400_000) == []


def test_a_copied_table_goes_below_the_target_root_named_as_gobblin_names_it():
    assert target_root("/copy", "db", "t") == "/copy/t"
    assert target_root("/copy/$DB", "db", "t") == "/copy/db/t"
    assert target_root("/copy/$DB/$TABLE_v2", "db", "t") == "/copy/db/t_v2"


@pytest.mark.parametrize(("keys", "named"), [
    ({}, None),
    ({"hive.dataset.database": None}, "hive.dataset.database"),
    ({"hive.dataset.hive.metastore.uri": "localhost:9083"}, "hive.dataset.hive.metastore.uri"),
    ({"hive.source.maximum.lookbackDays": "-1"}, "hive.source.maximum.lookbackDays"),
    ({"writer.builder.class": "AvroDataWriterBuilder"}, "HiveQueryWriterBuilder"),
    ({"data.publisher.type": None}, "HiveConvertPublisher"),
    ({"converter.classes": None}, "HiveAvroToOrcConverter"),
])
def test_a_conversion_job_with_a_bad_key_is_refused_naming_it(tmp_path, keys, named):
    props = {"job.name": "conv", "source.class": "HiveSource", "converter.classes": "HiveAvroToOrcConverter",
             "writer.builder.class": "HiveQueryWriterBuilder", "data.publisher.type": "HiveConvertPublisher",
             "hive.dataset.hive.metastore.uri": "thrift://127.0.0.1:9083", "hive.dataset.database": "db",
             "state.store.dir": str(tmp_path / "state"), "task.data.root.dir": str(tmp_path / "work"), **keys}
    job = tmp_path / "conv.pull"
    job.write_text("".join(f"{k}={v}\n" for k, v in props.items() if v is not None))
    result = run_gpy_here("validate", str(job))
    assert result.returncode == (0 if named is None else 2), result.stdout + result.stderr
    assert named is None or named in result.stdout + result.stderr


def test_a_hive_copy_whose_target_root_is_outside_the_final_dir_is_refused_naming_the_key(tmp_path):
    props = {"job.name": "copy", "source.class": "CopySource", "writer.builder.class":
             "FileAwareInputStreamDataWriterBuilder", "data.publisher.type": "CopyDataPublisher",
             "gobblin.dataset.profile.class": "HiveDatasetFinder", "hive.dataset.database": "db",
             "hive.dataset.hive.metastore.uri": "thrift://127.0.0.1:9083", "data.publisher.final.dir": "/publish",
             "hive.dataset.copy.target.table.root": "/elsewhere/$DB", "state.store.dir": str(tmp_path / "state"),
             "writer.staging.dir": str(tmp_path / "staging"), "writer.output.dir": str(tmp_path / "output")}
    job = tmp_path / "copy.pull"
    job.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    result = run_gpy_here("validate", str(job))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "hive.dataset.copy.target.table.root" in result.stdout and "/elsewhere/$DB" in result.stdout
    job.write_text(job.read_text().replace("/elsewhere/$DB", "/publish/$DB"))
    assert run_gpy_here("validate", str(job)).returncode == 0
    # gobblin.dataset.pattern is the glob finder's: a Hive copy's final dir below it is no overlap (distcp-hive.pull
    # sets it beside the Hive keys)
    job.write_text(job.read_text() + "gobblin.dataset.pattern=/\n")
    result = run_gpy_here("validate", str(job))
    assert result.returncode == 0, result.stdout


def test_on_a_spark_engine_whose_session_has_no_hive_catalog_a_unit_fails_naming_the_keys(spark):
    from gobblin_py.connectors.hive.conversion_source import HiveSource
    from gobblin_py.sdk.errors import GobblinPyError
    from gobblin_py.sdk.states import TaskState

    task = TaskState(properties={**URI, "gpy.hive.unit": json.dumps({
        "database": "db", "table": "t", "partition": "", "values": [], "location": "file:/nowhere",
        "table_location": "file:/nowhere", "update_time": 1})})
    with pytest.raises(GobblinPyError) as err:
        HiveSource().run_on_cluster(spark, task)
    assert "spark.sql.catalogImplementation" in str(err.value) and "--engine local" in str(err.value)
    assert "thrift://127.0.0.1:9083" in str(err.value)
