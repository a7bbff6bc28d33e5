"""Which fields make a record's key, which record of a key survives, and the bounded-memory path (spilling by
key hash) giving what the in-memory one gives."""

from __future__ import annotations

import json
import sys

import fastavro
import pyarrow as pa
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from gobblin_py.connectors.compaction.dedup import (
    DedupSpec,
    dedup_dataset,
    dedup_table,
    first_rows,
    first_rows_exact,
    key_columns,
    key_paths,
    partition_count,
)
from gobblin_py.formats.avro_read import arrow_schema_for
from gobblin_py.sdk.errors import UsageError
from tests.compaction.lake import Lake, event, ids

# Gobblin's dedup-schema-with-pkey.avsc in small: a primary key nested in a record, one at the top
AVRO = {"type": "record", "name": "Event", "fields": [
    {"name": "header", "type": {"type": "record", "name": "Header", "fields": [
        {"name": "memberId", "type": "int", "doc": "the member. PrimaryKey"},
        {"name": "time", "type": "long"}]}},
    {"name": "ip", "type": ["null", "string"], "doc": "where from, primarykey"},
    {"name": "tags", "type": {"type": "array", "items": "string"}},
    {"name": "name", "type": "string"}]}


def test_key_fields_are_the_primarykey_docs_else_all_comparable_fields():
    schema = arrow_schema_for(json.dumps(AVRO), "test")
    assert key_paths(schema, "KEY") == ["header.memberId", "ip"]
    assert key_paths(schema, "ALL") == ["header.memberId", "header.time", "ip", "name"]  # no list
    plain = pa.schema([("id", pa.int64()), ("at", pa.int64())])
    assert key_paths(plain, "KEY") == ["id", "at"]  # no docs, no key fields named: ALL
    assert key_paths(plain, "KEY", key_fields=("id",)) == ["id"]
    custom = json.dumps({"type": "record", "name": "K", "fields": [
        {"name": "header", "type": {"type": "record", "name": "H", "fields": [{"name": "time", "type": "long"}]}}]})
    assert key_paths(schema, "CUSTOM", custom_schema=custom) == ["header.time"]
    with pytest.raises(UsageError, match="nope"):
        key_paths(plain, "KEY", key_fields=("nope",))


def test_the_first_record_read_survives_or_the_latest_by_the_latest_fields():
    table = pa.table({"id": [1, 2, 1, 1, 2, None, None], "v": [5, None, 7, 7, 1, 1, 2], "seq": list(range(7))})
    assert dedup_table(table, DedupSpec(("id",))).column("seq").to_pylist() == [0, 1, 5]
    # the greatest v wins (a null the least); of equals, the first read
    assert dedup_table(table, DedupSpec(("id",), ("v",))).column("seq").to_pylist() == [2, 4, 6]
    assert dedup_table(table, DedupSpec(("id", "v"))).num_rows == 6


KEY_VALUES = st.one_of(st.none(), st.integers(-3, 3))
TEXT_VALUES = st.one_of(st.none(), st.sampled_from(["", "a", "b", "ab"]))


@given(st.lists(st.tuples(KEY_VALUES, TEXT_VALUES, st.one_of(st.none(), st.floats(allow_nan=True, width=32))),
                max_size=60))
@example(rows=[(None, None, 0.0), (None, None, -0.0), (None, None, 0.0)])  # two keys: they differ in their bytes
def test_the_hashed_first_rows_are_the_exact_ones(rows):
    table = pa.table({"a": pa.array([r[0] for r in rows], pa.int64()), "b": pa.array([r[1] for r in rows], pa.string()),
                      "c": pa.array([r[2] for r in rows], pa.float32())})
    keys = key_columns(table, ["a", "b", "c"])
    assert first_rows(keys).to_pylist() == first_rows_exact(keys).to_pylist()


def test_keys_that_share_a_hash_are_told_apart(monkeypatch):
    """A 64-bit hash collides rarely, never harmlessly: rows of one hash are compared field by field."""
    import polars as pl

    monkeypatch.setattr(pl.DataFrame, "hash_rows", lambda self, seed=0: pl.Series("h", [7] * self.height, pl.UInt64))
    keys = pa.table({"id": [1, 2, 1, None, 2, None], "s": ["x", "x", "x", None, "y", None]})
    assert first_rows(keys).to_pylist() == first_rows_exact(keys).to_pylist() == [0, 1, 3, 4]
    same = pa.table({"id": [5, 5, 5]})
    assert first_rows(same).to_pylist() == [0]  # one key: the shared hash is no collision


def test_hashes_made_while_reading_are_checked_like_any_other():
    keys = pa.table({"id": [1, 2, 1, 3]})
    assert first_rows(keys, pa.array([7, 7, 7, 8], pa.uint64())).to_pylist() == [0, 1, 3]  # a collision: exact
    assert first_rows(keys, pa.array([1, 2, 1, 3], pa.uint64())).to_pylist() == [0, 1, 3]


def test_spilling_by_key_hash_gives_what_memory_gives(tmp_path):
    rows = [{"id": i % 500, "v": i, "s": f"x{i % 500}"} for i in range(5000)]
    table = pa.Table.from_pylist(rows)
    spec = DedupSpec(("id", "s"), ("v",))
    assert partition_count(1000, 100) == 16
    spilled = pa.Table.from_batches(list(dedup_dataset(lambda: iter(table.to_batches(max_chunksize=300)),
                                                       table.schema, spec, 1000, 100, str(tmp_path / "spill"))))
    in_memory = dedup_table(table, spec)
    assert sorted(spilled.to_pylist(), key=lambda r: r["id"]) == sorted(in_memory.to_pylist(), key=lambda r: r["id"])
    assert spilled.num_rows == 500 and set(spilled.column("v").to_pylist()) == set(range(4500, 5000))
    assert not list((tmp_path / "spill").iterdir())  # the spill files are gone


def test_an_avro_dataset_is_deduplicated_on_its_primary_keys_end_to_end(tmp_path):
    lake = Lake(tmp_path)
    folder = lake.lake / "Identity" / "MemberAccount" / "minutely" / "2017" / "04" / "03" / "10" / "20_30"
    folder.mkdir(parents=True)
    records = [{"header": {"memberId": m, "time": t}, "ip": "1.2.3.4", "tags": [], "name": f"n{t}"}
               for m, t in ((1, 1), (1, 2), (2, 3), (1, 4))]
    with open(folder / "file1.4.avro", "wb") as out:
        fastavro.writer(out, AVRO, records)
    lake.run(lake.gobblin_job("minutely_to_hourly.pull"))
    kept = lake.records("hourly")
    assert [(r["header"]["memberId"], r["name"]) for r in kept] == [(1, "n1"), (2, "n3")]  # the first of each key
    schema = json.loads(fastavro.reader(open(next((lake.dataset / "hourly").rglob("part-r-*.avro")), "rb"))
                        .metadata["avro.schema"])
    assert schema["fields"][0]["type"]["fields"][0]["doc"] == "the member. PrimaryKey"  # the schema as it was


def test_parquet_keyed_on_named_fields_keeping_the_latest_version_or_not_deduplicated(tmp_path):
    lake = Lake(tmp_path, "PARQUET")
    lake.ingest([event(i, i % 60, version=1) for i in range(30)])
    lake.ingest([event(i, i % 60, version=v) for i in range(10) for v in (0, 2)])
    keyed = lake.gobblin_job("minutely_to_hourly.pull", compaction__dedup__key__fields="event_id",
                             compaction__dedup__latest__fields="version")
    lake.run(keyed)
    assert ids(lake.records("hourly")) == [(i, 2) for i in range(10)] + [(i, 1) for i in range(10, 30)]

    other = Lake(tmp_path / "other", "PARQUET")
    other.ingest([event(i, 0) for i in range(5)] * 2)
    other.run(other.gobblin_job("minutely_to_hourly.pull", compaction__should__deduplicate="false"))
    assert ids(other.records("hourly")) == sorted([(i, 0) for i in range(5)] * 2)


def test_a_dataset_too_large_for_memory_without_polars_is_refused_not_run_out_of_memory(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "polars", None)  # import polars fails
    with pytest.raises(UsageError, match="compaction.local.partition.bytes: .* needs Polars"):
        next(dedup_dataset(lambda: iter([]), pa.schema([("id", pa.int64())]), DedupSpec(("id",)), 1000, 100,
                           str(tmp_path / "spill")))
    assert not (tmp_path / "spill").exists()
