"""The Delta publisher's parts on their own: types, footer facts, the upsert's source, storage options, the step."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gobblin_py.connectors.delta.footers import read_facts
from gobblin_py.connectors.delta.merge_source import merge_source
from gobblin_py.connectors.delta.partitioning import partition_columns
from gobblin_py.connectors.delta.settings import storage_options
from gobblin_py.connectors.delta.step import DeltaAppendStep
from gobblin_py.connectors.delta.types import UnsupportedType, delta_schema
from gobblin_py.connectors.tables.publisher import RunIdentity
from gobblin_py.sdk.errors import UsageError


def test_arrow_types_become_those_every_delta_reader_reads_the_files_as():
    schema = pa.schema([("s", pa.large_string()), ("d", pa.dictionary(pa.int32(), pa.string())),
                        ("u8", pa.uint8()), ("u32", pa.uint32()),
                        ("ts", pa.timestamp("ns", "Europe/Paris")), ("local", pa.timestamp("ms")),
                        ("n", pa.null()), ("l", pa.large_list(pa.uint16())), ("req", pa.int64(), False)])
    mapped = delta_schema(schema, "t", table=pa.schema([("n", pa.int64())]))
    assert [f.type for f in mapped] == [pa.string(), pa.string(), pa.int16(), pa.int64(),
                                        pa.timestamp("us", "UTC"), pa.timestamp("us"), pa.int64(),
                                        pa.list_(pa.int32()), pa.int64()]
    assert not mapped.field("req").nullable  # kept, so a table that says NOT NULL is not relaxed for nothing
    with pytest.raises(UnsupportedType, match="column u64 is uint64"):  # Polars cannot read it as any Delta type
        delta_schema(pa.schema([("u64", pa.uint64())]), "t")
    with pytest.raises(UnsupportedType, match="column t.x is time64"):
        delta_schema(pa.schema([("t", pa.struct([("x", pa.time64("us"))]))]), "t")


def test_footer_facts_give_exact_bounds_only_and_the_partition_value(tmp_path):
    path = tmp_path / "f.parquet"
    table = pa.table({"id": [3, 1, None], "name": ["b", "a", "c"], "region": ["eu", "eu", "eu"],
                      "at": pa.array([dt.datetime(2024, 1, 2, 3, 4, 5, 6), None, dt.datetime(2024, 1, 1)],
                                     pa.timestamp("us", "UTC")),
                      "day": pa.array([dt.date(2024, 5, 1)] * 3), "x": [1.5, float("nan"), 0.5],
                      "amount": pa.array([Decimal("1.10")] * 3, pa.decimal128(5, 2)),
                      "s": pa.array([{"a": 1}] * 3), "sec": pa.array([86400, 0, 5], pa.timestamp("s")),
                      "ns": pa.array([1, 2, 3], pa.timestamp("ns"))})
    pq.write_table(table, path, row_group_size=2)  # bounds over two row groups
    facts = read_facts(str(path), None, 3, ["region"])
    stats = json.loads(facts.stats)
    assert facts.partition_values == {"region": "eu"}
    assert stats["numRecords"] == 3
    assert stats["nullCount"] == {"id": 1, "name": 0, "region": 0, "at": 1, "day": 0, "x": 0, "amount": 0,
                                  "sec": 0, "ns": 0}
    # no bounds for floats, decimals and nanosecond timestamps (cut to the microsecond, a maximum would be low)
    assert stats["minValues"] == {"id": 1, "name": "a", "region": "eu", "at": "2024-01-01T00:00:00.000000Z",
                                  "day": "2024-05-01", "sec": "1970-01-01T00:00:00.000000"}
    assert stats["maxValues"]["sec"] == "1970-01-02T00:00:00.000000"
    assert stats["maxValues"]["at"] == "2024-01-02T03:04:05.000006Z" and "x" not in stats["maxValues"]
    pq.write_table(pa.table({"region": ["eu", "us"]}), tmp_path / "two.parquet")
    with pytest.raises(UsageError, match="several values of the partition column region"):
        read_facts(str(tmp_path / "two.parquet"), None, 2, ["region"])
    pq.write_table(pa.table({"region": pa.nulls(2, pa.string())}), tmp_path / "null.parquet")
    assert read_facts(str(tmp_path / "null.parquet"), None, 2, ["region"]).partition_values == {"region": None}


def write(path, **columns):
    pq.write_table(pa.table(columns), path)
    return str(path)


def test_the_upsert_source_keeps_the_latest_row_of_each_key_streaming_in_the_table_schema(tmp_path):
    first = write(tmp_path / "a.parquet", id=pa.array([1, 2, 1], pa.int32()), v=["a1", "b1", "a2"],
                  at=[10, 10, 30])
    second = write(tmp_path / "b.parquet", id=pa.array([1, 3, 2], pa.int32()), v=["a3", "c1", "b2"],
                   at=[20, None, 10], extra=[True, False, True])
    target = pa.schema([("id", pa.int64()), ("v", pa.string()), ("at", pa.int64()), ("old", pa.string()),
                        ("extra", pa.bool_())])
    reader = merge_source([first, second], target, ["id"], ["at"], "t")
    assert reader.schema == target
    rows = sorted(reader.read_all().to_pylist(), key=lambda r: r["id"])
    # id 1: the latest by the watermark (30), not the last written; id 2: a tie, the later file wins
    assert rows == [{"id": 1, "v": "a2", "at": 30, "old": None, "extra": None},
                    {"id": 2, "v": "b2", "at": 10, "old": None, "extra": True},
                    {"id": 3, "v": "c1", "at": None, "old": None, "extra": False}]
    without_order = merge_source([first, second], target, ["id"], [], "t").read_all()
    assert sorted(without_order.select(["id", "v"]).to_pylist(), key=lambda r: r["id"])[0] == {"id": 1, "v": "a3"}
    nulls = write(tmp_path / "n.parquet", id=pa.array([1, None], pa.int64()))
    with pytest.raises(UsageError, match="column id of table.merge.key is null in 1 row"):
        merge_source([nulls], pa.schema([("id", pa.int64())]), ["id"], [], "t")


def test_storage_options_come_from_the_fs_s3a_keys_and_delta_storage_overrides_them():
    props = {"fs.s3a.endpoint": "http://127.0.0.1:9000", "fs.s3a.access.key": "k", "fs.s3a.secret.key": "s",
             "fs.s3a.path.style.access": "true", "delta.storage.AWS_REGION": "eu-west-3",
             "data.publisher.final.dir": "s3a://bucket"}
    assert storage_options(props, "s3a://bucket/t") == {
        "AWS_ENDPOINT_URL": "http://127.0.0.1:9000", "AWS_ALLOW_HTTP": "true", "AWS_ACCESS_KEY_ID": "k",
        "AWS_SECRET_ACCESS_KEY": "s", "AWS_VIRTUAL_HOSTED_STYLE_REQUEST": "false", "AWS_REGION": "eu-west-3"}
    assert storage_options(props, "/local/table") == {"AWS_REGION": "eu-west-3"}


def test_a_replayed_append_finds_its_transaction_and_commits_nothing_again(tmp_path):
    table = tmp_path / "t"
    table.mkdir()
    pq.write_table(pa.table({"id": [1, 2]}), table / "a.parquet")
    action = {"path": "a.parquet", "size": (table / "a.parquet").stat().st_size, "partition_values": {},
              "modification_time": 0, "stats": json.dumps({"numRecords": 2})}
    identity = RunIdentity("J", "job_J_1", "ds", "[]")
    step = DeltaAppendStep(str(table), "gpy:J:ds", 1, identity, pa.schema([("id", pa.int64())]), [], "add_columns",
                           3, {"data.publisher.final.dir": str(tmp_path)}, actions=[action])
    assert not step.is_completed()
    step.execute(fresh=True)
    replayed = DeltaAppendStep.from_json(json.loads(json.dumps(step.to_json())), step.props)
    assert replayed.is_completed() and replayed.committed() == f"delta:{table} version 0"
    replayed.execute()  # a crash after the commit, before the state: the replay finds its own transaction
    from deltalake import DeltaTable

    delta = DeltaTable(str(table))
    assert delta.version() == 0 and delta.transaction_version("gpy:J:ds") == 1
    assert delta.to_pyarrow_table().num_rows == 2


def test_partition_columns_come_from_a_column_value_partitioner_and_a_time_partitioner_gives_none(capsys):
    schema = pa.schema([("region", pa.string()), ("at", pa.timestamp("us")), ("s", pa.struct([("x", pa.int8())]))])
    columns = {"writer.partitioner.class": "ColumnValueWriterPartitioner", "writer.partition.columns": "region"}
    assert partition_columns(columns, 1, 0, schema) == ["region"]
    assert partition_columns({**columns, "writer.partition.columns": "s"}, 1, 0, schema) == []
    timed = {"writer.partitioner.class": "TimeBasedWriterPartitioner", "writer.partition.columns": "at"}
    assert partition_columns(timed, 1, 0, schema) == []
    assert "delta_table_unpartitioned" in capsys.readouterr().err


def test_reading_a_footers_timestamp_bounds_does_not_import_pandas(tmp_path):
    """pyarrow gives a timestamp statistic as a pandas Timestamp, importing pandas (a third of a second of every
    commit): the bounds are read as the stored integers instead."""
    import subprocess
    import sys

    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"at": pa.array([1, 2], pa.timestamp("ms", "UTC"))}), path)
    code = ("import sys, json; from gobblin_py.connectors.delta.footers import read_facts; "
            f"stats = json.loads(read_facts({str(path)!r}, None, 2, []).stats); "
            "print(stats['maxValues']['at'], 'pandas' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["1970-01-01T00:00:00.002000Z", "False"], done.stdout + done.stderr


def test_steps_racing_to_make_one_table_make_it_once_and_append_the_rest(tmp_path):
    """delta-rs retries a CREATE TABLE that another writer's beat on top of it (a second CREATE replacing the first's
    metadata): the step's own create is not retried by delta-rs; it reads the table again and appends."""
    import threading

    from deltalake import DeltaTable

    for trial in range(8):
        table = tmp_path / f"t{trial}"
        table.mkdir()
        steps = []
        for n in range(3):
            pq.write_table(pa.table({"id": [n]}), table / f"{n}.parquet")
            action = {"path": f"{n}.parquet", "size": (table / f"{n}.parquet").stat().st_size, "partition_values": {},
                      "modification_time": 0, "stats": json.dumps({"numRecords": 1})}
            steps.append(DeltaAppendStep(str(table), f"gpy:J:d{n}", 1, RunIdentity("J", "job_J_1", f"d{n}", "[]"),
                                         pa.schema([("id", pa.int64())]), [], "add_columns", 5,
                                         {"data.publisher.final.dir": str(tmp_path)}, actions=[action]))
        barrier = threading.Barrier(len(steps))
        errors: list[BaseException] = []

        def commit(step, barrier=barrier, errors=errors):
            barrier.wait()
            try:
                step.execute(fresh=True)
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=commit, args=(s,)) for s in steps]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not errors, errors
        operations = [c["operation"] for c in DeltaTable(str(table)).history()]
        assert operations.count("CREATE TABLE") == 1, (trial, operations)
        assert sorted(DeltaTable(str(table)).to_pyarrow_table().column("id").to_pylist()) == [0, 1, 2]


def test_columns_equal_but_for_case_within_the_run_or_a_struct_are_refused():
    from gobblin_py.connectors.delta.types import case_clash

    with pytest.raises(UsageError, match="the run's data has columns Name and name"):
        case_clash(pa.schema([("Name", pa.string()), ("id", pa.int64()), ("name", pa.string())]), None, "t")
    nested = pa.schema([("s", pa.list_(pa.struct([("A", pa.int64())])))])
    with pytest.raises(UsageError, match="the run's column s.a differs from the table's column s.A only by case"):
        case_clash(pa.schema([("s", pa.list_(pa.struct([("a", pa.int64())])))]), nested, "t")
    case_clash(nested, nested, "t")  # the same names: fine


def test_an_unsuffixed_table_uri_in_a_job_of_several_branches_is_refused():
    from gobblin_py.connectors.delta.publisher import DeltaPublisher

    props = {"fork.branches": "2", "delta.table.uri": "/lake/orders", "writer.output.format": "PARQUET",
             "data.publisher.final.dir": "/lake"}
    problems = [str(p) for p in DeltaPublisher.validate(props)]
    assert any("the job has 2 branches, and delta.table.uri is read per branch" in p for p in problems), problems
    suffixed = {**props, "delta.table.uri.0": "/lake/a", "delta.table.uri.1": "/lake/b"}
    del suffixed["delta.table.uri"]
    assert not [str(p) for p in DeltaPublisher.validate(suffixed) if "delta.table.uri" in str(p)]


def test_an_empty_string_partition_value_is_refused_as_delta_reads_it_as_null(tmp_path):
    for name, table in (("bounds", pa.table({"region": [""]})),
                        ("data", pa.table({"region": pa.array([""]).dictionary_encode()}))):
        path = tmp_path / f"{name}.parquet"
        pq.write_table(table, path)
        with pytest.raises(UsageError, match="partition column region is the empty string"):
            read_facts(str(path), None, 1, ["region"])

