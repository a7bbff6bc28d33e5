"""The watermark algebra, the previous-state rules, connection settings and MultiWorkUnit packing, without runs."""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
import tempfile

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gobblin_py.sdk.errors import UsageError
from gobblin_py.connectors.sql import delta as deltas
from gobblin_py.connectors.sql.connection import ConnectionConfig
from gobblin_py.connectors.sql.dialects import dialect_for
from gobblin_py.connectors.sql.positions import SINGLE, previous_watermarks
from gobblin_py.connectors.sql.settings import ConnectionSettings
from gobblin_py.connectors.sql.source import QueryBasedSource
from gobblin_py.connectors.sql.watermarks import (
    MICROS_PER_DAY,
    MICROS_PER_HOUR,
    STEP,
    TimestampWatermark,
    WatermarkCodec,
    exclusive_high,
    interval_units,
    micros_from_datetime,
    parse_value,
    split_range,
)
from gobblin_py.sdk.watermarks import LongWatermark, WatermarkInterval
from gobblin_py.sdk.states import MultiWorkUnit, WorkingState, WorkUnit, WorkUnitState
from gobblin_py.sdk.run_states import SourceState
from tests.sql.helpers import SqlJob, add_orders, create_shop

UTC = dt.timezone.utc
TIMES = st.integers(min_value=0, max_value=micros_from_datetime(dt.datetime(2200, 1, 1)))


@given(low=st.integers(-10**12, 10**12), span=st.integers(0, 10**12), interval=st.one_of(st.none(), st.integers(1, 10**11)),
       max_parts=st.integers(1, 50), wtype=st.sampled_from(["simple", "timestamp", "hour", "date"]))
def test_ranges_are_adjacent_half_open_and_cover_the_span(low, span, interval, max_parts, wtype):
    high = low + span
    pieces = split_range(low, high, interval, max_parts, wtype)
    if span == 0:
        assert pieces == []
        return
    assert pieces[0][0] == low and pieces[-1][1] == high
    assert all(lo < hi for lo, hi in pieces)
    assert all(a[1] == b[0] for a, b in zip(pieces, pieces[1:]))  # no gap, no overlap
    assert len(pieces) <= max_parts


@given(value=st.integers(-10**15, 10**15), wtype=st.sampled_from(["simple", "timestamp", "hour", "date"]))
def test_the_exclusive_high_bound_includes_the_max_and_is_aligned(value, wtype):
    high = exclusive_high(value, wtype)
    assert value < high <= value + STEP[wtype] and high % STEP[wtype] == 0


def test_interval_units():
    assert interval_units(0.5, "simple") == 1 and interval_units(3, "simple") == 3
    assert interval_units(0.5, "timestamp") == MICROS_PER_HOUR // 2
    assert interval_units(1.5, "hour") == 2 * MICROS_PER_HOUR
    assert interval_units(1, "date") == MICROS_PER_DAY and interval_units(30, "date") == 2 * MICROS_PER_DAY


@given(a=TIMES, b=TIMES, kind=st.sampled_from(["text| |", "text|T|"]))
def test_sqlite_text_bounds_round_trip_and_sort_like_the_times(a, b, kind):
    ta, tb = deltas.to_param(a, kind), deltas.to_param(b, kind)
    assert deltas.to_long(ta, kind) == a
    assert (ta < tb) == (a < b) and (ta == tb) == (a == b)


@given(row=TIMES, bound=TIMES, sep=st.sampled_from([" ", "T"]))
def test_a_stored_text_time_is_on_one_side_of_every_bound(row, bound, sep):
    stored = dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=row)
    text = stored.isoformat(sep=sep, timespec="microseconds")  # trailing zeros kept, as applications write
    kind = deltas.infer_kind(text, "c")
    param = deltas.to_param(bound, kind)
    # SQLite compares the texts: the row is below the bound exactly when its time is (a trailing-zero
    # fraction in the row and none in the bound still sorts the equal times as not below)
    assert (text < param) == (row < bound), (text, param)


@given(row_ms=st.integers(0, 7 * 10**12), bound=TIMES)
def test_zoned_text_is_compared_by_the_millisecond_with_bounds_rounded_up(row_ms, bound):
    row = row_ms * 1000
    text = (dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=row)).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    param = deltas.to_param(bound, deltas.TEXTZONE)
    assert (text < param) == (row < bound)  # what strftime() yields, against the bound


def test_delta_kinds():
    assert deltas.infer_kind(5, "c") == deltas.NUMBER
    assert deltas.infer_kind(dt.datetime(2024, 1, 1), "c") == deltas.TIMESTAMP
    assert deltas.infer_kind(dt.datetime(2024, 1, 1, tzinfo=UTC), "c") == deltas.TIMESTAMPTZ
    assert deltas.infer_kind(dt.date(2024, 1, 1), "c") == deltas.DATE
    assert deltas.infer_kind("2024-01-01", "c") == deltas.TEXTDATE
    assert deltas.infer_kind("2024-01-01T10:00:00.5", "c") == "text|T|"
    assert deltas.infer_kind("2024-01-01T10:00:00.5Z", "c") == deltas.TEXTZONE
    assert deltas.infer_kind("2024-01-01 10:00:00+02:00", "c") == deltas.TEXTZONE
    assert deltas.sql_expression(deltas.TEXTZONE, '"at"', "sqlite") == """strftime('%Y-%m-%d %H:%M:%f', "at")"""
    with pytest.raises(UsageError, match="only be compared on SQLite"):
        deltas.sql_expression(deltas.TEXTZONE, '"at"', "postgresql")
    with pytest.raises(UsageError, match="booleans"):
        deltas.infer_kind(True, "c")
    # a date column is compared with whole days: bounds round up, so adjacent ranges stay adjacent
    assert deltas.to_param(micros_from_datetime(dt.datetime(2024, 1, 1, 0, 0, 0, 1)), deltas.DATE) == dt.date(2024, 1, 2)
    assert deltas.to_param(micros_from_datetime(dt.datetime(2024, 1, 1)), deltas.DATE) == dt.date(2024, 1, 1)
    assert deltas.to_long(7.9, deltas.NUMBER) == 7
    assert deltas.check_kind(deltas.DATE, "timestamp", "c") == "date"
    with pytest.raises(UsageError, match="use simple"):
        deltas.check_kind(deltas.NUMBER, "timestamp", "c")


def test_user_written_values():
    utc = dt.timezone.utc
    assert parse_value("20240115103000", "timestamp", "k", utc) == micros_from_datetime(dt.datetime(2024, 1, 15, 10, 30))
    assert parse_value("20240115", "date", "k", utc) == micros_from_datetime(dt.datetime(2024, 1, 15))
    assert parse_value("2024-01-15T10:30:00.25", "timestamp", "k", utc) == micros_from_datetime(
        dt.datetime(2024, 1, 15, 10, 30, 0, 250000))
    today = dt.datetime.now(utc).replace(tzinfo=None, hour=0, minute=0, second=0, microsecond=0)
    assert parse_value("CURRENTDAY-2", "timestamp", "k", utc) == micros_from_datetime(today - dt.timedelta(days=2))
    assert parse_value("42", "simple", "k", utc) == 42
    with pytest.raises(UsageError, match="k=yesterday"):
        parse_value("yesterday", "timestamp", "k", utc)


def test_timestamp_watermark_is_a_readable_long_watermark():
    mark = TimestampWatermark(micros_from_datetime(dt.datetime(2024, 1, 15, 10, 30)))
    assert mark.to_json() == {"value": 1705314600000000, "time": "2024-01-15T10:30:00"}
    assert LongWatermark.from_json(mark.to_json()).value == mark.value  # what a LongWatermark reader sees
    assert TimestampWatermark.from_json({"value": 5}) == TimestampWatermark(5)


# ---------------------------------------------------------------- previous state


def unit_state(low: int, high: int, actual: int, state: WorkingState, legacy: bool = False, wtype="simple") -> WorkUnitState:
    unit = WorkUnit.create(interval=WatermarkInterval.of(LongWatermark(low), LongWatermark(high)))
    unit.set_prop("source.querybased.watermark.type", wtype)
    if not legacy:
        unit.set_prop("source.querybased.watermark.range", "half-open")
    wus = WorkUnitState(unit)
    wus.working_state = state
    wus.set_actual_high_watermark(LongWatermark(actual))
    return wus


def simulate(outcomes: list[list[bool]], retry_policy: str) -> list[tuple[int, int]]:
    """Runs of a dataset whose table grows by 100 ids per run, planned by the source itself; each work unit
    fails or not as ``outcomes`` say. Returns the ranges committed by all runs (what was published), under
    ``job.commit.policy=successful``."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "t.db")
        table = sqlite3.connect(path)
        table.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)")
        props = {"source.conn.database": path, "source.entities": "t", "extract.delta.fields": "id",
                 "source.querybased.partition.interval": "30", "job.commit.policy": "successful",
                 "workunit.retry.policy": retry_policy}
        state = SourceState(props)
        dialect = dialect_for(ConnectionConfig.from_settings(ConnectionSettings.load(props)))
        codec = WatermarkCodec("simple")
        previous: list[WorkUnitState] = []
        published = []
        for run_index, run in enumerate(outcomes):
            with table:
                table.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(100 * run_index, 100 * (run_index + 1))])
            conn = dialect.connect(read_only_snapshot=False)
            units, _ = QueryBasedSource()._plan_table(state, "t", dialect, conn, previous)
            conn.close()
            previous = []
            for index, unit in enumerate(units):
                low = codec.decode_json(unit.watermark_interval.low_json)
                high = codec.decode_json(unit.watermark_interval.expected_high_json)
                ok = run[index % len(run)]
                if ok:
                    published.append((low, high))
                wus = WorkUnitState(unit)
                wus.working_state = WorkingState.COMMITTED if ok else WorkingState.FAILED
                wus.set_actual_high_watermark(LongWatermark(high if ok else low))
                previous.append(wus)
        table.close()
    return published


@given(st.lists(st.lists(st.booleans(), min_size=1, max_size=6), min_size=1, max_size=6))
def test_with_retries_every_value_is_published_exactly_once(outcomes):
    published = simulate(outcomes + [[True]], "always")  # a last clean run
    covered = sorted(v for lo, hi in published for v in range(lo, hi))
    assert covered == list(range(0, 100 * (len(outcomes) + 1)))


@given(st.lists(st.lists(st.booleans(), min_size=1, max_size=6), min_size=1, max_size=6))
def test_without_retries_nothing_is_lost_though_some_ranges_come_twice(outcomes):
    published = simulate(outcomes + [[True]], "never")
    covered = {v for lo, hi in published for v in range(lo, hi)}
    assert covered == set(range(0, 100 * (len(outcomes) + 1)))


def test_state_written_by_gobblin_is_read_with_inclusive_bounds():
    state = SourceState({})
    # Gobblin: timestamps as yyyyMMddHHmmss, inclusive; actual high = the last value read
    units = [unit_state(20240101000000, 20240101120000, 20240101115959, WorkingState.COMMITTED, legacy=True,
                        wtype="timestamp")]
    prev = previous_watermarks(state, units, WatermarkCodec("timestamp"))
    assert prev.frontier[SINGLE] == micros_from_datetime(dt.datetime(2024, 1, 1, 12, 0, 0))
    units = [unit_state(100, 200, 150, WorkingState.COMMITTED, legacy=True)]
    assert previous_watermarks(state, units, WatermarkCodec("simple")).frontier[SINGLE] == 151


def test_a_changed_watermark_class_is_a_clear_error():
    unit = WorkUnit.create(interval=WatermarkInterval({"hex": "0x1"}, {"hex": "0x2"}))
    unit.set_prop("source.querybased.watermark.range", "half-open")
    with pytest.raises(UsageError, match="cannot read the previous run's watermark"):
        previous_watermarks(SourceState({}), [WorkUnitState(unit)], WatermarkCodec("simple"))


# ---------------------------------------------------------------- connection settings


def connection(props: dict) -> ConnectionConfig:
    return ConnectionConfig.from_settings(ConnectionSettings.load(props))


def test_connection_settings_and_password_scrubbing():
    cfg = connection({"source.conn.url": "jdbc:postgresql://db.example:6543/shop",
                      "source.conn.username": "u", "source.conn.password": "s3cr3t!"})
    assert (cfg.driver, cfg.host, cfg.port, cfg.database) == ("postgresql", "db.example", 6543, "shop")
    assert "s3cr3t" not in repr(cfg) and cfg.describe() == "postgresql://u@db.example:6543/shop"
    assert cfg.scrub("failed for s3cr3t! at postgresql://u:other@h/db") == "failed for *** at postgresql://u:***@h/db"
    cfg = connection({"source.conn.url": "postgresql://me:pw%40x@h/db"})
    assert (cfg.username, cfg.password, cfg.database) == ("me", "pw@x", "db")
    cfg = connection({"source.conn.url": "jdbc:sqlite:/tmp/x.db"})
    assert cfg.driver == "sqlite" and cfg.sqlite_path() == "/tmp/x.db"
    assert connection({"source.conn.driver": "org.postgresql.Driver"}).driver == "postgresql"
    with pytest.raises(UsageError, match="source.conn.driver.*'oracle' is not a supported driver"):
        connection({"source.conn.driver": "oracle"})


# ---------------------------------------------------------------- packing


def test_more_work_units_than_mappers_are_packed_by_estimated_rows(sqlite_db, tmp_path):
    create_shop(sqlite_db, orders=120, customers=2)
    add_orders(sqlite_db, 121, 240, at=dt.datetime(2024, 3, 1, 9, 0))  # dense: a heavy range
    job = SqlJob(tmp_path, sqlite_db, tables="orders", source__querybased__partition__interval="0.25",
                 mr__job__max__mappers="3")
    units = QueryBasedSource().get_workunits(SourceState(job.props))
    assert len(units) == 3 and all(isinstance(u, MultiWorkUnit) for u in units)
    members = [w for u in units for w in u.work_units]
    assert len(members) == 8  # 2 hours in 15-minute ranges
    loads = sorted(sum(w.get_prop_as_int("source.querybased.estimated.rows") for w in u.work_units) for u in units)
    assert loads[-1] - loads[0] <= max(w.get_prop_as_int("source.querybased.estimated.rows") for w in members)
    result = job.run()
    assert result.returncode == 0, result.output
    assert job.ids() == list(range(1, 361))
    tasks = job.state()["orders"]["tasks"]
    assert len(tasks) == 8 and all(t["working_state"] == "COMMITTED" for t in tasks)
    ranges = sorted((t["low_watermark"]["value"], t["actual_high_watermark"]["value"]) for t in tasks)
    assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))  # the packed ranges still tile the span
    assert ranges[-1][1] == max(t["expected_high_watermark"]["value"] for t in tasks)
    assert sum(t["records_extracted"] for t in tasks) == 360


# ---------------------------------------------------------------- planning reads


def _plan(job: SqlJob) -> list[tuple]:
    units = QueryBasedSource().get_workunits(SourceState(job.props))
    return [(u.watermark_interval.low_json, u.watermark_interval.expected_high_json,
             u.get_prop("source.querybased.estimated.rows"), u.get_prop("source.querybased.unbounded.low"))
            for u in units]


def _indexed(db, table: str) -> set[str]:
    dialect = dialect_for(connection(db.conn_props()))
    conn = dialect.connect(read_only_snapshot=False)
    try:
        return dialect.indexed_columns(conn, dialect.default_schema_of(conn), table)
    finally:
        dialect.close(conn)


@pytest.mark.parametrize("table_type", ["append_only", "snapshot_append"])
def test_an_index_on_the_delta_column_changes_how_planning_reads_not_the_plan(db, tmp_path, table_type):
    create_shop(db, orders=120, customers=2)
    db.execute("UPDATE orders SET updated_at = NULL WHERE id IN (3, 4, 5)")
    job = SqlJob(tmp_path, db, tables="orders", extract__table__type=table_type,
                 source__querybased__partition__interval="0.25")
    assert "updated_at" not in _indexed(db, "orders") and "id" in _indexed(db, "orders")
    scanned = _plan(job)
    db.execute("CREATE INDEX orders_updated ON orders (updated_at)")
    assert "updated_at" in _indexed(db, "orders")
    assert _plan(job) == scanned
    whole = SqlJob(tmp_path / "whole", db, tables="orders", extract__table__type=table_type,
                   source__querybased__partition__interval="0")
    assert [rows for _, _, rows, _ in _plan(whole)] == ["117"]  # the rows with a delta value
    result = job.run()
    assert result.returncode == 0, result.output
    if table_type == "append_only":
        assert "sql_null_delta_rows" in result.stderr and '"rows": 3' in result.stderr
        assert job.ids() == [i for i in range(1, 121) if i not in (3, 4, 5)]
    else:
        assert job.ids() == list(range(1, 121))
    add_orders(db, 121, 5, at=dt.datetime(2031, 1, 1))
    again = job.run()  # above the frontier: read from the index too
    assert again.returncode == 0, again.output
    assert job.ids()[-5:] == [121, 122, 123, 124, 125] and len(job.ids()) == len(set(job.ids()))


def test_sqlite_indexes_that_give_min_and_max(sqlite_db):
    sqlite_db.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, a INT, b TEXT, c REAL, d INT, e INT)")
    sqlite_db.execute("CREATE INDEX t_ab ON t (a, b)")  # leads with a only
    sqlite_db.execute("CREATE INDEX t_c ON t (c) WHERE c > 0")  # partial: some rows only
    sqlite_db.execute("CREATE INDEX t_expr ON t (d + 1)")  # an expression, not the column
    sqlite_db.execute("CREATE UNIQUE INDEX t_e ON t (e DESC)")
    assert _indexed(sqlite_db, "t") == {"k", "a", "e"}
    sqlite_db.execute("CREATE TABLE u (k TEXT PRIMARY KEY, v INT)")  # a text key: an automatic index
    assert _indexed(sqlite_db, "u") == {"k"}
