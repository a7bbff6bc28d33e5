"""Gobblin's own compaction test jobs (jobs/compaction, minutely → hourly with dedup, hourly → daily), run with
``gpy run`` over a lake gpy's ingestion wrote, on Avro, Parquet and ORC: checked by identity — every distinct record
exactly once in ``hourly`` and in ``daily``, late records where the keys put them, reruns change nothing, the
input never touched."""

from __future__ import annotations

import hashlib
import json
import os
import re
import struct
from pathlib import Path

import pytest

from tests.compaction.lake import Lake, event, ids

HOUR = "2017/04/03/10"


def _snapshot(folder: Path) -> dict[str, str]:
    """Every file below ``folder`` with its content's digest and modification time."""
    return {str(p.relative_to(folder)): f"{hashlib.sha256(p.read_bytes()).hexdigest()}:{p.stat().st_mtime_ns}"
            for p in sorted(folder.rglob("*")) if p.is_file()}

def _distinct(*batches: list[dict]) -> list[tuple[int, int]]:
    return sorted({(e["event_id"], e["version"]) for batch in batches for e in batch})

@pytest.mark.parametrize("fmt", ["AVRO", "PARQUET"])
def test_gobblin_test_jobs_roll_minutely_into_hourly_and_daily_each_record_once(tmp_path, fmt):
    lake = Lake(tmp_path, fmt)
    first = [event(i, i % 110) for i in range(120)]          # 10:00 … 11:49
    again = [event(i, i % 110) for i in range(80, 140)]       # 40 delivered twice, 20 new
    lake.ingest(first)
    lake.ingest(again)
    assert len(lake.records("minutely")) == 180
    source = _snapshot(lake.dataset / "minutely")
    hourly_job, daily_job = lake.gobblin_job("minutely_to_hourly.pull"), lake.gobblin_job("hourly_to_daily.pull")

    out = lake.run(hourly_job)
    assert "hourly/2017/04/03/10: COMMITTED" in out and "hourly/2017/04/03/11: COMMITTED" in out
    # the run says what it dropped: Gobblin's DuplicateRecordCount
    assert sum(json.loads(line)["duplicates"] for line in out.splitlines() if '"compaction_deduplicated"' in line) == 40
    hourly = lake.records("hourly")
    assert ids(hourly) == _distinct(first, again)  # each distinct record exactly once
    ext = fmt.lower()
    per_hour = {10: sum(1 for i in range(140) if i % 110 < 60), 11: sum(1 for i in range(140) if i % 110 >= 60)}
    # one file an hour, named as Gobblin names its reducers' output: part-r-<records>.<run start ms>.<n>.<ext>
    assert {re.sub(r"\.\d{13}\.", ".<ms>.", f) for f in lake.data_files("hourly")} == {
        f"2017/04/03/{h}/{name}" for h, n in per_hour.items()
        for name in ("_COMPACTION_COMPLETE", f"part-r-{n}.<ms>.0.{ext}")}
    marker = (lake.dataset / "hourly/2017/04/03/10/_COMPACTION_COMPLETE").read_bytes()
    assert len(marker) == 8 and struct.unpack(">q", marker)[0] > 1_700_000_000_000  # Java's writeLong, epoch ms

    lake.run(daily_job)
    assert ids(lake.records("daily")) == _distinct(first, again)
    assert {re.sub(r"\.\d{13}\.", ".<ms>.", f) for f in lake.data_files("daily")} == {
        "2017/04/03/_COMPACTION_COMPLETE", f"2017/04/03/part-r-140.<ms>.0.{ext}"}

    before = _snapshot(lake.lake)
    for job in (hourly_job, daily_job):
        assert "nothing new to pull" in lake.run(job)
    assert _snapshot(lake.lake) == before  # reruns change nothing
    assert _snapshot(lake.dataset / "minutely") == source  # the input untouched
    assert not list(lake.lake.rglob(".*.gpy-*"))  # no new or old output left beside a destination

def test_late_files_are_set_aside_then_recompacted_from_the_destination(tmp_path):
    lake = Lake(tmp_path, "AVRO")
    first = [event(i, i % 60) for i in range(60)]
    lake.ingest(first)
    lake.run(lake.gobblin_job("minutely_to_hourly.pull"))
    hourly_before = _snapshot(lake.dataset / "hourly")

    late = [event(i, i % 60) for i in range(50, 70)]  # 10 repeats, 10 new: written after the marker
    lake.ingest(late)
    out = lake.run(lake.gobblin_job("minutely_to_hourly.pull"))
    assert "hourly/2017/04/03/10: COMMITTED" in out
    marker = "2017/04/03/10/_COMPACTION_COMPLETE"
    assert {k: v for k, v in _snapshot(lake.dataset / "hourly").items() if k != marker} == \
        {k: v for k, v in hourly_before.items() if k != marker}  # the output itself unchanged
    assert ids(lake.records("hourly_late")) == ids(late)  # the late files copied whole, as written
    assert all(f.startswith("2017/04/03/10/part.task_Ingest_") for f in lake.data_files("hourly_late"))
    assert "nothing new to pull" in lake.run(lake.gobblin_job("minutely_to_hourly.pull"))  # the marker moved on

    recompact = lake.gobblin_job("minutely_to_hourly.pull", compaction__recompact__from__dest__paths="true",
                                 compaction__job__overwrite__output__dir="true")
    lake.run(recompact)
    assert ids(lake.records("hourly")) == _distinct(first, late)
    assert not (lake.dataset / "hourly_late/2017/04/03/10").exists()  # consumed
    assert "nothing new to pull" in lake.run(recompact)

def test_late_data_recompacted_from_the_input_only_when_the_output_may_be_overwritten(tmp_path):
    lake = Lake(tmp_path, "PARQUET")
    first = [event(i, i % 60) for i in range(40)]
    lake.ingest(first)
    lake.run(lake.gobblin_job("minutely_to_hourly.pull"))
    late = [event(i, 30 + i % 30) for i in range(30, 55)]
    lake.ingest(late)
    before = _snapshot(lake.lake)
    keep = lake.gobblin_job("minutely_to_hourly.pull", compaction__recompact__from__input__for__late__data="true")
    assert "nothing new to pull" in lake.run(keep)  # Gobblin's rule: no overwrite, no recompaction
    assert _snapshot(lake.lake) == before

    redo = lake.gobblin_job("minutely_to_hourly.pull", compaction__recompact__from__input__for__late__data="true",
                            compaction__job__overwrite__output__dir="true")
    lake.run(redo)
    assert ids(lake.records("hourly")) == _distinct(first, late)
    assert not (lake.dataset / "hourly_late").exists()
    assert "nothing new to pull" in lake.run(redo)

def test_the_user_guides_hourly_and_daily_jobs_with_the_legacy_finder(tmp_path):
    """The Compaction page's example (TimeBasedSubDirDatasetsFinder; hourly_staging → hourly deduplicated, then
    hourly → daily without dedup: Type 2, input and output deduplicated)."""
    lake = Lake(tmp_path, "AVRO", prefix="hourly_staging", pattern="YYYY/MM/dd/HH", path_type="TABLENAME")
    first = [event(i, i % 120) for i in range(120)]
    lake.ingest(first)
    lake.ingest(first[:30])  # a re-delivery
    lake.run(lake.gobblin_job("hourly.pull"))
    assert ids(lake.records("hourly")) == _distinct(first)
    lake.run(lake.gobblin_job("daily.pull"))
    assert ids(lake.records("daily")) == _distinct(first)
    assert len(lake.data_files("daily")) == 2

def test_a_simple_datasets_finder_sets_late_files_aside_in_dest_late(tmp_path):
    lake = Lake(tmp_path, "AVRO", prefix="in", pattern="YYYY")
    lake.ingest([event(i, 0) for i in range(10)] * 2)
    job = tmp_path / "simple.pull"
    base = lake.dataset
    job.write_text("\n".join([
        "job.name=Simple", "source.class=org.apache.gobblin.compaction.source.CompactionSource",
        "compaction.datasets.finder=org.apache.gobblin.compaction.dataset.SimpleDatasetsFinder",
        f"compaction.input.dir={base / 'in'}", f"compaction.dest.dir={base / 'out'}",
        f"compaction.tmp.dest.dir={tmp_path / 'tmp'}",
    ]) + "\n")
    lake.run(job)
    assert ids(lake.records("out")) == [(i, 0) for i in range(10)]
    lake.ingest([event(3, 0)])
    lake.run(job)
    assert len(lake.data_files("out/_late")) == 1
    assert ids(lake.records("out")) == [(i, 0) for i in range(10)]  # _late is hidden: not the output's data


def test_the_gobblin_test_jobs_run_on_the_spark_engine(tmp_path, spark):
    """Each dataset is deduplicated by a Spark job of its own, its records shuffled by key hash across the
    executors (tests/compaction/test_cluster_dedup.py); the commit is the driver's, as on the local engine."""
    lake = Lake(tmp_path, "PARQUET")
    first = [event(i, i % 120) for i in range(60)]
    lake.ingest(first)
    lake.ingest(first[:25])
    for name in ("minutely_to_hourly.pull", "hourly_to_daily.pull"):
        out = lake.run(lake.gobblin_job(name), engine="spark")
        assert "engine spark" in out and "compaction_shuffle" in out
    duplicates = [json.loads(line)["duplicates"] for line in out.splitlines() if '"compaction_deduplicated"' in line]
    assert duplicates == [0]  # the hourly job dropped the 25 re-deliveries
    assert ids(lake.records("hourly")) == ids(lake.records("daily")) == _distinct(first)


def test_orc_input_is_compacted_into_orc(tmp_path):
    lake = Lake(tmp_path, "ORC")
    first = [event(i, i % 2) for i in range(20)]
    lake.ingest(first)
    lake.ingest(first[5:15])
    lake.run(lake.gobblin_job("minutely_to_hourly.pull"))
    assert ids(lake.records("hourly")) == _distinct(first)
    assert [f for f in lake.data_files("hourly") if f.endswith(".orc")][0].startswith("2017/04/03/10/part-r-20.")


def test_rename_mode_moves_what_was_compacted_into_complete_folders_and_sets_late_files_aside(tmp_path):
    lake = Lake(tmp_path, "AVRO")
    first = [event(i, i % 3) for i in range(30)]
    lake.ingest(first)
    lake.ingest(first[:10])
    job = lake.gobblin_job("minutely_to_hourly.pull", compaction__rename__source__dir__enabled="true")
    lake.run(job)
    assert ids(lake.records("hourly")) == _distinct(first)
    assert not (lake.dataset / "hourly" / HOUR / "_COMPACTION_COMPLETE").exists()  # the input says it instead
    minute_folders = sorted(p.name for p in (lake.dataset / "minutely" / HOUR).iterdir())
    assert minute_folders == ["00_COMPLETE", "01_COMPLETE", "02_COMPLETE"]
    assert len(lake.data_files("minutely")) == 6  # every input file kept, moved
    assert "nothing new to pull" in lake.run(job)

    late = [event(i, 0) for i in range(100, 105)] + [event(200, 5)]  # into 00 again, and a new minute 05
    lake.ingest(late)
    lake.run(job)
    assert ids(lake.records("hourly")) == _distinct(first)
    assert ids(lake.records("hourly_late")) == ids(late)
    assert sorted(p.name for p in (lake.dataset / "minutely" / HOUR).iterdir()) == \
        ["00_COMPLETE", "01_COMPLETE", "02_COMPLETE", "05_COMPLETE"]
    assert len(lake.data_files("minutely")) == 8
    assert "nothing new to pull" in lake.run(job)


@pytest.mark.parametrize("damage", ["cut", "retyped"])
def test_an_input_file_that_cannot_be_read_fails_at_once_naming_it(tmp_path, damage):
    """A Parquet file cut short, or whose column no longer fits the newest file's type, fails its dataset at the
    first attempt (not after task.maxretries attempts minutes apart), naming the file; nothing is published."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tests.support.cli import run_gpy_here

    folder = tmp_path / "in"
    folder.mkdir()
    pq.write_table(pa.table({"id": list(range(3000)), "v": ["a"] * 3000}), folder / "p0.parquet")
    bad = folder / "p1.parquet"
    if damage == "cut":
        pq.write_table(pa.table({"id": list(range(3000)), "v": ["b"] * 3000}), bad)
        bad.write_bytes(bad.read_bytes()[:2000])
        os.utime(bad, (1, 1))  # the older file: the newest one gives the schema
    else:
        pq.write_table(pa.table({"id": ["x"], "v": ["c"]}), bad)
        os.utime(bad, (1, 1))
    job = tmp_path / "simple.pull"
    job.write_text("\n".join([
        "job.name=Simple", "source.class=org.apache.gobblin.compaction.source.CompactionSource",
        "compaction.datasets.finder=org.apache.gobblin.compaction.dataset.SimpleDatasetsFinder",
        f"compaction.input.dir={folder}", f"compaction.dest.dir={tmp_path / 'out'}",
        f"compaction.tmp.dest.dir={tmp_path / 'tmp'}", "task.maxretries=2", "task.retry.intervalinsec=0"]) + "\n")
    result = run_gpy_here("--log-format", "json", "run", str(job), "--engine", "local")
    out = result.stdout + result.stderr
    assert result.returncode == 1 and "task_retry" not in out, out
    assert (f"{bad}: not a readable parquet file" if damage == "cut" else f"{bad}: column id (string)") in out, out
    assert not (tmp_path / "out").exists()
