"""``QueryBasedExtractor``: one work unit's watermark range(s) of one table, streamed as Arrow batches.

Per range: ``SELECT <columns> FROM <table> WHERE <delta> >= low AND <delta> < high ORDER BY <delta>, <pk>``
(a full snapshot's first range has no lower bound and includes rows whose delta is NULL; a partitioned
dataset adds ``<partition column> = value``). The count and the rows are read in one session: on PostgreSQL
and MySQL one ``REPEATABLE READ`` snapshot. ``close()`` sets the actual high watermark: the expected high
watermark when every range was read, else how far the ordered rows got (the runtime rolls back uncommitted
tasks anyway).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from gobblin_py.connectors.sql import delta as deltas
from gobblin_py.connectors.sql import keys as K
from gobblin_py.connectors.sql.arrow_types import ColumnSpec, parse_arrow_type
from gobblin_py.connectors.sql.connection import ConnectionConfig
from gobblin_py.connectors.sql.dialects import dialect_for
from gobblin_py.connectors.sql.dialects.base import Session
from gobblin_py.connectors.sql.positions import SINGLE, position_key
from gobblin_py.connectors.sql.settings import QueryBasedSettings
from gobblin_py.connectors.sql.watermarks import WatermarkCodec, decode_multi, multi, watermark_type
from gobblin_py.sdk.contracts import Extractor, PartitionProgress
from gobblin_py.sdk.errors import GobblinPyError, UsageError
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.states import WorkUnitState
from gobblin_py.store.startpoints import FILTERED_KEY

log = get_logger(__name__)


class QueryBasedExtractor(Extractor):
    """Reads a work unit's ranges of one table with the fastest reader its dialect offers (``fetch.method``)."""

    def __init__(self, state: WorkUnitState, default_driver: str | None = None) -> None:
        self.state = state
        settings = QueryBasedSettings.load(state)
        self.settings = settings
        self.config = ConnectionConfig.from_settings(settings, default_driver)
        self.dialect = dialect_for(self.config)
        self.schema_name = state.get_prop(K.SCHEMA) or ""
        self.table = state.get_prop(K.TABLE) or state.get_prop("source.entity") or ""
        self.delta = list(settings.delta_fields)
        self.pk = list(settings.pk_fields)
        self.kind = state.get_prop(K.DELTA_KIND) or deltas.NUMBER
        self.empty = state.get_prop_as_bool(K.EMPTY)
        self.unbounded_low = state.get_prop_as_bool(K.UNBOUNDED_LOW)
        self.unbounded_numeric = parse_arrow_type(settings.unbounded_numeric, K.UNBOUNDED_NUMERIC)
        self.codec = WatermarkCodec(watermark_type(state.get_prop(K.WATERMARK_TYPE)) or "simple",
                                    state.get_prop(K.WATERMARK_CLASS))
        interval = state.workunit.watermark_interval
        self.partition_column = state.get_prop(K.PARTITION_COLUMN)
        values_json = state.get_prop(K.PARTITION_VALUES_STATE)
        self.partition_values: list[Any] | None = json.loads(values_json) if values_json else None
        self.low: dict[str, int] = {}
        self.high: dict[str, int] = {}
        if interval is not None and self.delta:
            if self.partition_values is not None:
                keys = [position_key(v) for v in self.partition_values]
                self.low = dict(zip(keys, decode_multi(interval.low_json), strict=True))
                self.high = dict(zip(keys, decode_multi(interval.expected_high_json), strict=True))
            else:
                self.low = {SINGLE: self.codec.decode_json(interval.low_json)}
                self.high = {SINGLE: self.codec.decode_json(interval.expected_high_json)}
        self.progress = dict(self.low)
        self.columns: list[ColumnSpec] | None = None
        self._schema: pa.Schema | None = None
        self._conn: Any = None
        self._session: Session | None = None
        self._complete = False
        self._expected = -1
        self._indexed = False  # the delta column leads an index: where the table's rows start and end is cheap
        # event times: a configured column, else the delta column when it holds times
        self.event_column = settings.event_column or (self.delta[0] if self.delta and self.kind != deltas.NUMBER else None)
        self._since: int | None = None
        self._records = 0
        self._filtered = 0
        self._events: list[int | None] = [None, None]

    # -- connection and schema

    def _connection(self) -> Any:
        if self._conn is None:
            self._conn = self.dialect.connect(read_only_snapshot=False)
        return self._conn

    def _what(self) -> str:
        return f"reading table {self.schema_name}.{self.table}" if self.schema_name else f"reading table {self.table}"

    def get_schema(self) -> pa.Schema:
        if self._schema is None:
            try:
                conn = self._connection()
                self.columns = self.dialect.describe(conn, self.schema_name, self.table, self.unbounded_numeric)
                if len(self.delta) == 1 and self.partition_values is None and self.kind != deltas.TEXTZONE:
                    self._indexed = self.delta[0] in self.dialect.indexed_columns(conn, self.schema_name, self.table)
            except GobblinPyError:
                if not self.empty:
                    raise
                self.columns = []
            except Exception as exc:  # noqa: BLE001
                if not self.empty:
                    raise self.dialect.translate(exc, self._what()) from None
                self.columns = []
            finally:
                self._close_catalogue()
            if not self.columns and not self.empty:
                raise GobblinPyError(f"{self._what()}: the table has no columns")
            self._schema = pa.schema([pa.field(c.name, c.type) for c in self.columns])
        return self._schema

    def _close_catalogue(self) -> None:
        if self._conn is not None:
            conn, self._conn = self._conn, None
            try:
                conn.rollback()
            except Exception:  # noqa: BLE001 - the server may be gone
                pass
            self.dialect.close(conn)

    # -- queries

    def _ranges(self) -> list[str]:
        if not self.delta:
            return [SINGLE]
        return [key for key in self.low if self.low[key] < self.high[key]]

    def _sql(self, key: str) -> tuple[str, str, list[Any]]:
        d = self.dialect
        p = d.param
        if len(self.delta) == 1:
            expr = d.quote(self.delta[0])
        else:
            expr = "COALESCE(" + ", ".join(d.quote(c) for c in self.delta) + ")"
        expr = deltas.sql_expression(self.kind, expr, d.name) if self.delta else expr
        preds: list[str] = []
        params: list[Any] = []
        if self.partition_values is not None:
            value = dict(zip([position_key(v) for v in self.partition_values], self.partition_values, strict=True))[key]
            if value is None:
                preds.append(f"{d.quote(self.partition_column)} IS NULL")
            else:
                preds.append(f"{d.quote(self.partition_column)} = {p}")
                params.append(value)
        if self.delta:
            low, high = deltas.to_param(self.low[key], self.kind), deltas.to_param(self.high[key], self.kind)
            if self.unbounded_low and self.partition_values is None:
                preds.append(f"({expr} < {p} OR {expr} IS NULL)")
                params.append(high)
            else:
                preds.append(f"{expr} >= {p} AND {expr} < {p}")
                params += [low, high]
        where = f" WHERE {' AND '.join(preds)}" if preds else ""
        order = [expr] if self.delta else []
        order += [d.quote(c) for c in self.pk]
        order_sql = f" ORDER BY {', '.join(order)}" if order else ""
        table = d.qualified(self.schema_name, self.table)
        assert self.columns is not None
        select = f"SELECT {', '.join(c.select for c in self.columns)} FROM {table}{where}{order_sql}"
        count = f"SELECT COUNT(*) FROM {table}{where}"
        return select, count, params

    def get_expected_record_count(self) -> int:
        return self._expected

    def read_batches(self) -> Iterator[pa.RecordBatch]:
        schema = self.get_schema()
        if self.empty or not self.columns:
            self._complete = True
            self._expected = 0
            return
        ranges = self._ranges()
        try:
            self._session = session = self.dialect.session(self.settings.fetch_method, self.columns)
            log.info("sql_extract", table=self.table, method=session.method, ranges=len(ranges))
            self.columns = session.select_columns(self.columns)
            queries = [(key, *self._sql(key)) for key in ranges]
            if not self.settings.skip_count:
                self._expected = self._count(session, queries)
            track = len(self.delta) == 1 and not self.unbounded_low
            delta_index = schema.get_field_index(self.delta[0]) if track else -1
            for key, select, _, params in queries:
                for batch in session.stream(select, params, self.columns, schema, self.settings.fetch_size):
                    if batch.num_rows == 0:
                        continue
                    if delta_index >= 0:
                        self._advance(key, batch.column(delta_index)[-1].as_py())
                    batch = self._observe(batch)
                    if batch.num_rows:
                        yield batch
                if key in self.high:
                    self.progress[key] = self.high[key]
        except GobblinPyError:
            raise
        except Exception as exc:  # noqa: BLE001 - driver and Arrow errors become one clear line
            raise self.dialect.translate(exc, self._what()) from None
        self._complete = True

    def _count(self, session: Session, queries: list[tuple]) -> int:
        """The rows of the ranges, in the session's snapshot (the one the rows are read in). A range that holds
        every row of the table (the delta column's index says so at its ends) is counted by ``COUNT(*)``,
        which the database answers without reading the range."""
        if self._indexed and [key for key, *_ in queries] == [SINGLE]:
            d = self.dialect
            table, column = d.qualified(self.schema_name, self.table), d.quote(self.delta[0])
            outside = [f"EXISTS (SELECT 1 FROM {table} WHERE {column} >= {d.param})"]
            params = [deltas.to_param(self.high[SINGLE], self.kind)]
            if not self.unbounded_low:  # a bounded range leaves out the rows below it and those without a delta
                outside += [f"EXISTS (SELECT 1 FROM {table} WHERE {column} < {d.param})",
                            f"EXISTS (SELECT 1 FROM {table} WHERE {column} IS NULL)"]
                params.append(deltas.to_param(self.low[SINGLE], self.kind))
            if not session.count(f"SELECT CASE WHEN {' OR '.join(outside)} THEN 1 ELSE 0 END", params):
                return session.count(f"SELECT COUNT(*) FROM {table}", [])
        return sum(session.count(count, params) for _, _, count, params in queries)

    def filter_before(self, timestamp_ms: int) -> None:
        """A replay from a time drops the rows whose event time is earlier."""
        if self.event_column is None:
            log.warning("replay_not_filtered", table=self.table,
                        note="no event time: set source.event.time.column; older rows are kept")
            return
        self._since = timestamp_ms

    def partition_progress(self) -> dict[str, PartitionProgress]:
        """An unpartitioned table's range: its low and reached high watermarks, rows and their event times."""
        if self.partition_values is not None or SINGLE not in self.low:
            return {}
        high = self.high[SINGLE] if self._complete else self.progress[SINGLE]
        return {"": PartitionProgress(self.low[SINGLE], high, self._records, *self._events)}

    def _observe(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        self._records += batch.num_rows
        if self.event_column is None:
            return batch
        if self.event_column not in batch.schema.names:
            raise UsageError(f"source.event.time.column={self.event_column}: table {self.table} has no such column")
        from gobblin_py.connectors.files.event_time import (  # Arrow's kernels only with event times
            at_or_after,
            min_max_millis,
        )

        column = batch.column(self.event_column)
        low, high = min_max_millis(column, self.event_column)
        if low is not None and high is not None:  # (both are, or neither)
            self._events = [low if self._events[0] is None else min(self._events[0], low),
                            high if self._events[1] is None else max(self._events[1], high)]
        if self._since is None:
            return batch
        kept = batch.filter(at_or_after(column, self.event_column, self._since))
        self._filtered += batch.num_rows - kept.num_rows
        return kept

    def _advance(self, key: str, last: Any) -> None:
        """Every row below the last one read has been read (rows come in delta order)."""
        if last is None:
            return
        value = deltas.to_long(last, self.kind)
        if self.kind == deltas.TEXTZONE:
            value -= value % deltas.MICROS_PER_MILLI  # compared by the millisecond
        self.progress[key] = max(self.progress[key], value)

    def close(self) -> None:
        self.state.set_prop(FILTERED_KEY, self._filtered)
        try:
            interval = self.state.workunit.watermark_interval
            if interval is not None:
                if self._complete:
                    self.state.set_actual_high_watermark(interval.expected_high_json)
                elif self.high:
                    if self.partition_values is not None:
                        keys = [position_key(v) for v in self.partition_values]
                        self.state.set_actual_high_watermark(multi([self.progress[k] for k in keys]))
                    else:
                        self.state.set_actual_high_watermark(self.codec.make(self.progress[SINGLE]))
        finally:
            if self._session is not None:
                session, self._session = self._session, None
                session.close()
            self._close_catalogue()
