"""Gobblin's Hive compactor run by ``gpy run`` from a job file in its keys (jobs/compaction/hive_snapshot_delta.pull),
without Hive: checked by identity — each key once, the last delta's record winning, keys only in the snapshot kept,
the output in the last delta's schema, a rerun changing nothing, the input untouched — on Avro and Parquet; bad keys
refused before any work, naming the key."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from tests.compaction.hive_tables import BASE, Members, member, read_rows, write_table
from tests.support.cli import run_gpy_here


def _snapshot(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): f"{hashlib.sha256(p.read_bytes()).hexdigest()}:{p.stat().st_mtime_ns}"
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _tables(members: Members) -> None:
    """Snapshot: members 0-19 (5 pulled twice); delta 1: 10-24; delta 2: 20-29, with a new email column."""
    fmt, base = members.fmt, members.base
    write_table(base / "snapshot", [member(i, "s") for i in range(20)], fmt)
    write_table(base / "snapshot", [member(5, "s")], fmt, part=1)
    write_table(base / "delta" / "1", [member(i, "d1") for i in range(10, 25)], fmt)
    write_table(base / "delta" / "2", [member(i, "d2", email=True) for i in range(20, 30)], fmt)


@pytest.mark.parametrize("fmt", ["avro", "parquet"])
def test_snapshot_and_deltas_merge_by_key_the_last_delta_winning(tmp_path, fmt):
    members = Members(tmp_path, fmt)
    _tables(members)
    inputs = _snapshot(members.base / "snapshot"), _snapshot(members.base / "delta")
    job = members.job()
    out = members.run(job)
    assert "merged: COMMITTED" in out, out

    merged = members.merged()
    assert sorted(merged) == list(range(30))  # every key once
    assert {i: r["pulled"] for i, r in merged.items()} == {i: "s" if i < 10 else "d1" if i < 20 else "d2"
                                                           for i in range(30)}
    assert [r["email"] for i, r in sorted(merged.items())] == [None] * 20 + [f"{i}@d2" for i in range(20, 30)]
    names = {re.sub(r"\.\d{13}\.", ".<ms>.", p.name) for p in members.output.iterdir()}
    assert names == {"_HIVE_COMPACTION_COMPLETE", f"part-r-30.<ms>.0.{fmt}"}

    before = _snapshot(members.output)
    assert "nothing new to pull" in members.run(job)
    assert _snapshot(members.output) == before  # a rerun changes nothing
    assert (_snapshot(members.base / "snapshot"), _snapshot(members.base / "delta")) == inputs  # input untouched
    assert not list(members.base.glob(".*.gpy-*"))

    write_table(members.base / "delta" / "3", [member(i, "d3", email=True) for i in (0, 29, 30)], fmt)
    members.run(members.job(**{"delta.3.pkey": "member_id", "delta.3.datalocation": str(members.base / "delta/3")}))
    merged = members.merged()
    assert sorted(merged) == list(range(31))
    assert [merged[i]["pulled"] for i in (0, 1, 15, 28, 29, 30)] == ["d3", "s", "d1", "d2", "d3", "d3"]


def test_the_output_may_replace_the_snapshot_itself(tmp_path):
    members = Members(tmp_path, "parquet")
    _tables(members)
    job = members.job(**{"output.datalocation": str(members.base / "snapshot")})
    for _ in range(2):  # the second run merges its own output with the same deltas: the same records
        members.run(job)
        rows = read_rows(members.base / "snapshot")
        assert sorted((r["member_id"], r["pulled"]) for r in rows) == \
            [(i, "s" if i < 10 else "d1" if i < 20 else "d2") for i in range(30)]
    assert not list(members.base.glob(".*.gpy-*"))


def test_a_large_merge_spills_by_key_and_keeps_the_same_records(tmp_path):
    """Past compaction.local.partition.bytes the records are hash-partitioned by key into spill files first."""
    from gobblin_py.connectors.compaction.hive.merge import Merge, list_table
    from gobblin_py.connectors.compaction.hive.settings import HiveCompactionSettings

    members = Members(tmp_path, "parquet")
    write_table(members.base / "snapshot", [member(i, "s") for i in range(3000)], "parquet")
    write_table(members.base / "delta" / "1", [member(i, "d1") for i in range(0, 3000, 3)], "parquet")
    settings = HiveCompactionSettings.load({
        "snapshot.pkey": "member_id", "snapshot.datalocation": str(members.base / "snapshot"),
        "delta.1.pkey": "member_id", "delta.1.datalocation": str(members.base / "delta/1"),
        "output.datalocation": str(members.output)})
    tables = settings.tables()
    merge = Merge(tables, [list_table(t) for t in tables], "parquet")
    size = sum(f.size for files in merge.files for f in files)
    in_memory = [r for b in merge.batches(size, str(tmp_path / "spill")) for r in b.to_pylist()]
    spilled = [r for b in merge.batches(size // 4, str(tmp_path / "spill")) for r in b.to_pylist()]
    assert sorted(in_memory, key=lambda r: r["member_id"]) == sorted(spilled, key=lambda r: r["member_id"])
    assert {r["member_id"]: r["pulled"] for r in spilled} == {i: "d1" if i % 3 == 0 else "s" for i in range(3000)}
    assert not list((tmp_path / "spill").rglob("*.arrow"))


_GAP = {"delta.2.pkey": None, "delta.2.datalocation": None, "delta.2.name": None,
        "delta.3.pkey": "member_id", "delta.3.datalocation": "/data/d3"}


@pytest.mark.parametrize(("keys", "named", "message"), [
    ({"snapshot.pkey": None}, "snapshot.pkey", "is not set"),
    ({"snapshot.datalocation": None}, "snapshot.datalocation", "is not set"),
    ({"delta.2.pkey": None}, "delta.2.pkey", "is not set"),
    ({"delta.1.datalocation": None}, "delta.1.datalocation", "is not set"),
    ({"delta.2.pkey": "member_id,name"}, "delta.2.pkey", "is not the snapshot's primary key"),
    (_GAP, "delta.3.datalocation", "delta.2.datalocation is not set"),
    ({"delta.1.colour": "blue"}, "delta.1.colour", "not a key of a delta"),
    ({"delta.1.copydata": "yes"}, "delta.1.copydata", "not a boolean"),
    ({k: None for k in ("delta.1.pkey", "delta.1.datalocation", "delta.1.name", "delta.2.pkey",
                        "delta.2.datalocation", "delta.2.name")}, "delta.1.datalocation", "at least one delta"),
    ({"output.datalocation": None}, "output.datalocation", "is not set"),
    ({"output.datalocation": "@BASE@/snapshot/merged"}, "output.datalocation", "inside one another"),
    ({"compaction.config.dir": "@BASE@/jobconf"}, "compaction.config.dir", "not built yet"),
])
def test_bad_keys_are_refused_up_front_naming_the_key(tmp_path, keys, named, message):
    members = Members(tmp_path)
    _tables(members)
    job = members.job(**{k: v.replace("@BASE@", str(members.base)) if v else v for k, v in keys.items()})
    checked = run_gpy_here("validate", str(job))
    assert checked.returncode == 2 and named in checked.stdout and message in checked.stdout, checked.stdout
    ran = run_gpy_here("run", str(job), "--engine", "local")
    assert ran.returncode == 2 and named in ran.stderr, ran.stderr
    assert not members.output.exists()


@pytest.mark.parametrize(("keys", "named", "message"), [
    ({"snapshot.pkey": "id", "delta.1.pkey": "id", "delta.2.pkey": "id"}, "snapshot.pkey", "id is not a field"),
    ({"delta.2.datalocation": "@BASE@/delta/9"}, "delta.2.datalocation", "does not exist"),
    ({"delta.1.schemalocation": "@BASE@/member.avsc"}, "delta.1.schemalocation", "does not exist"),
])
def test_keys_that_do_not_fit_the_data_are_refused_before_any_work(tmp_path, keys, named, message):
    members = Members(tmp_path)
    _tables(members)
    job = members.job(**{k: v.replace("@BASE@", str(members.base)) for k, v in keys.items()})
    ran = run_gpy_here("run", str(job), "--engine", "local")
    assert ran.returncode == 2 and named in ran.stderr and message in ran.stderr, ran.stderr
    assert not members.output.exists()


def test_copydata_reads_only_the_files_with_the_named_extension(tmp_path):
    members = Members(tmp_path)
    _tables(members)
    (members.base / "delta" / "1" / "notes.txt").write_text("not data\n")
    job = members.job(**{"delta.1.copydata": "true", "delta.1.dataformat": "avro"})  # the template's spelling
    members.run(job)
    assert len(members.merged()) == 30
    assert (members.base / "delta" / "1" / "notes.txt").exists()


def test_a_snapshot_delta_merge_runs_on_the_spark_engine(tmp_path, spark):
    members = Members(tmp_path, "parquet")
    _tables(members)
    assert "engine spark" in members.run(members.job(), engine="spark")
    assert {i: r["pulled"] for i, r in members.merged().items()} == {i: "s" if i < 10 else "d1" if i < 20 else "d2"
                                                                     for i in range(30)}
    assert len(read_rows(members.output)) == 30


@pytest.mark.parametrize("fmt", ["avro", "parquet"])
def test_a_truncated_input_file_fails_the_merge_at_once_and_publishes_nothing(tmp_path, fmt):
    """A cut data file fails every attempt the same way: the run fails at its first attempt (not after
    task.maxretries attempts minutes apart), the old output untouched and no work folder left."""
    members = Members(tmp_path, fmt)
    _tables(members)
    members.run(members.job())
    before = _snapshot(members.output)
    path = write_table(members.base / "delta" / "1", [member(i, "d1") for i in range(3000)], fmt, part=1)
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2] + (data[-2000:] if fmt == "parquet" else b""))
    out = members.run(members.job(**{"task.maxretries": "1", "task.retry.intervalinsec": "0"}), code=1)
    assert "task_retry" not in out and '"attempt": 2' not in out, out
    assert (f"{path}: corrupt Avro data" if fmt == "avro" else f"{path}: OSError: Invalid column metadata") in out, out
    assert _snapshot(members.output) == before
    assert not list(members.base.glob(".*.gpy-*"))


def test_a_column_the_last_delta_adds_takes_its_avro_default_in_older_records(tmp_path):
    """Avro's schema resolution gives an older record a new field's default: so does the merge (a non-null column
    with a default written as null failed the task); one without a default is refused before any work."""
    members = Members(tmp_path)
    _tables(members)
    tier = {"name": "tier", "type": "string", "default": "basic"}
    for extra, wanted in ((tier, 0), ({"name": "tier", "type": "string"}, 2)):
        write_table(members.base / "delta" / "2", [{**member(i, "d2"), "tier": "gold"} for i in range(20, 30)],
                    "avro", fields=[*BASE, extra])
        out = members.run(members.job(), code=wanted)
        if wanted:
            assert "snapshot.datalocation" in out and "records lack tier" in out, out
            continue
        merged = members.merged()
        assert {i: r["tier"] for i, r in merged.items()} == {i: "basic" if i < 20 else "gold" for i in range(30)}
        assert {i: r["pulled"] for i, r in merged.items()} == {i: "s" if i < 10 else "d1" if i < 20 else "d2"
                                                               for i in range(30)}
