"""Gobblin's ``JdbcWriterBuilder``: each task writes its rows into a staging table of its own.

The writer of a task branch creates ``stage_<random>`` shaped like the final table (``jdbc.publisher.table_name``,
which must exist), inserts its rows there, and records the staging table on the task state
(``writer.staging.table[.i]``, Gobblin's key); ``JdbcPublisher`` later moves the rows of the successful tasks
into the final table in one transaction. A failed task drops its staging table. Batches are written in chunks
of ``writer.jdbc.batch_size`` rows (PostgreSQL: one ``COPY`` per Arrow batch, the batch turned into CSV by
Arrow), each chunk committed, so parallel tasks do not hold locks for long.

Values follow the final table's column types: an integer going into a date, time or timestamp column is
read as epoch milliseconds (Gobblin's Avro ``long`` dates); SQLite gets times as ISO text.
"""

from __future__ import annotations

import io
import json
import uuid
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.csv as pa_csv

from gobblin_py.connectors.sql.writer_sql import JdbcSettings, PostgresWriting, SqliteWriting, Target
from gobblin_py.sdk.branches import branch_key
from gobblin_py.sdk.contracts import CountingDataWriter, DataWriter, DataWriterBuilder
from gobblin_py.sdk.errors import GobblinPyError, UsageError
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.settings import Context, Scope, Settings, setting
from gobblin_py.sdk.states import State, TaskState, WorkUnitState

log = get_logger(__name__)
STAGING_KEY = "writer.staging.table"
_TIME_WORDS = ("date", "time")


@dataclass(frozen=True)
class JdbcWriterSettings(Settings):
    """The writer's own keys (beside the ``jdbc.publisher.*`` ones)."""

    batch_size: int = setting("writer.jdbc.batch_size", default=30, minimum=1, scope=Scope.BRANCH,
                              doc="rows per insert statement (PostgreSQL copies a whole batch at once)")
    max_params: int = setting("writer.jdbc.insert_max_param_size", default=100000, minimum=1, scope=Scope.BRANCH,
                              doc="most values per statement: rows = min(batch_size, this / columns)")
    retry_timeout: int = setting("writer.jdbc.insert_retry_timeout", default=30, minimum=0, scope=Scope.BRANCH,
                                 doc="accepted; gpy retries a failed insert by retrying the whole task")
    retry_attempts: int = setting("writer.jdbc.insert_retry_max_attempt", default=5, minimum=1, scope=Scope.BRANCH,
                                  doc="accepted; see task.maxretries")


@dataclass(frozen=True)
class _BuilderSettings(JdbcSettings, JdbcWriterSettings):
    """Every key the writer reads."""


def _task_state(state: State) -> State:
    """The task's own state (a branch's state falls through to it), where the publisher will look."""
    target = state
    while isinstance(target, WorkUnitState) and not isinstance(target, TaskState) and target.job_state is not None:
        target = target.job_state
    return target


class JdbcWriterBuilder(DataWriterBuilder):
    """Builds the writer of a branch into a fresh staging table."""

    settings_class = _BuilderSettings

    def build(self, state: WorkUnitState, schema: pa.Schema, branches: int, branch: int, writer_id: str) -> DataWriter:
        settings = _BuilderSettings.load(state, Context(branches, branch))
        target = Target.of(settings, branch_key("jdbc.publisher.password", branches, branch))
        writer = JdbcWriter(target, state, schema, settings)
        _task_state(state).set_prop(branch_key(STAGING_KEY, branches, branch), writer.staging)
        return writer


class JdbcWriter(CountingDataWriter):
    """Rows into one staging table; committed chunk by chunk; dropped again if the task fails."""

    def __init__(self, target: Target, props: Any, schema: pa.Schema, settings: _BuilderSettings) -> None:
        self.target, self.settings = target, settings
        self.dialect = target.dialect(props)
        self.staging = "stage_" + uuid.uuid4().hex[:16]
        self._committed = False
        self.conn = self.dialect.connect()
        try:
            table_columns = self.dialect.columns(self.conn, target.table)
            if not table_columns:
                raise UsageError(f"jdbc.publisher.table_name={target.table}: no such table in "
                                 f"{self.dialect.config.describe()}"
                                 f"{' schema ' + target.database if target.database else ''}: create it first")
            by_lower = {name.lower(): (name, kind) for name, kind in table_columns}
            unknown = [f.name for f in schema if f.name.lower() not in by_lower]
            if unknown:
                raise UsageError(f"columns {unknown} are not in table {target.table} (it has "
                                 f"{[n for n, _ in table_columns]}); rename them, e.g. with "
                                 "converter.avro.jdbc.entry_fields_pairs")
            self.columns = [by_lower[f.name.lower()] for f in schema]
            self.dialect.create_like(self.conn, self.staging, target.table)
            self.conn.commit()
        except Exception as exc:
            self._close()
            if isinstance(exc, GobblinPyError):
                raise
            raise self.dialect.error(exc, f"cannot prepare staging table for {target.table}") from None
        log.info("jdbc_staging_table", table=self.staging, final=target.table)

    # -- values

    def _prepared(self, batch: pa.RecordBatch) -> list[pa.Array]:
        sqlite = isinstance(self.dialect, SqliteWriting)
        out = []
        for column, (_, kind) in zip(batch.columns, self.columns, strict=True):
            t = column.type
            if pa.types.is_integer(t) and any(word in kind for word in _TIME_WORDS):
                column = column.cast(pa.int64()).cast(pa.timestamp("ms", "UTC"))  # Gobblin's long dates: epoch ms
                if kind == "date":
                    column = column.cast(pa.date32())
                elif kind.startswith("time") and "stamp" not in kind:
                    column = column.cast(pa.timestamp("ms")).cast(pa.time32("ms"))
                t = column.type
            if sqlite:
                if pa.types.is_temporal(t) or pa.types.is_decimal(t):
                    column = column.cast(pa.string())
                elif pa.types.is_nested(t):
                    column = pa.array([None if v is None else json.dumps(v, default=str) for v in column.to_pylist()],
                                      pa.string())
            out.append(column)
        return out

    # -- DataWriter

    def write(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows == 0:
            return
        columns = self._prepared(batch)
        names = [name for name, _ in self.columns]
        try:
            if isinstance(self.dialect, PostgresWriting) and all(_csv_friendly(c.type) for c in columns):
                self._copy(pa.table(columns, names=[f"c{i}" for i in range(len(names))]), names)
            else:
                self._insert(columns, names)
            self.conn.commit()
        except GobblinPyError:
            raise
        except Exception as exc:  # noqa: BLE001 - a driver error names the table and the database
            raise self.dialect.error(exc, f"cannot insert into staging table {self.staging}") from None
        self._records += batch.num_rows

    def _copy(self, table: pa.Table, names: list[str]) -> None:
        buffer = io.BytesIO()
        pa_csv.write_csv(table, buffer, pa_csv.WriteOptions(include_header=False, quoting_style="all_valid"))
        columns = ", ".join(self.dialect.quote(n) for n in names)
        with self.conn.cursor() as cur, cur.copy(f"COPY {self.dialect.table(self.staging)} ({columns}) "
                                                 "FROM STDIN WITH (FORMAT csv)") as copy:
            copy.write(buffer.getvalue())

    def _insert(self, columns: list[pa.Array], names: list[str]) -> None:
        sql = self.dialect.insert_sql(self.staging, names, self.settings.overwrite)
        rows_per = max(1, min(self.settings.batch_size, self.settings.max_params // max(1, len(names))))
        length = len(columns[0])
        cur = self.conn.cursor()
        for start in range(0, length, rows_per):
            chunk = [c.slice(start, rows_per).to_pylist() for c in columns]  # the driver binds Python values
            cur.executemany(sql, list(zip(*chunk, strict=True)))

    def commit(self) -> list[str]:
        self.conn.commit()
        self._committed = True
        self._close()
        return []

    def cleanup(self) -> None:
        if not self._committed:
            try:
                if getattr(self, "conn", None) is None:
                    self.conn = self.dialect.connect()
                self.conn.rollback()
                self.conn.cursor().execute(f"DROP TABLE IF EXISTS {self.dialect.table(self.staging)}")
                self.conn.commit()
            except Exception as exc:  # noqa: BLE001 - the task's own error matters more
                log.warning("jdbc_staging_not_dropped", table=self.staging, error=str(exc))
        self._close()

    def _close(self) -> None:
        conn, self.conn = getattr(self, "conn", None), None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # noqa: BLE001
                pass


def _csv_friendly(t: pa.DataType) -> bool:
    return (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t) or pa.types.is_string(t)
            or pa.types.is_large_string(t) or pa.types.is_decimal(t) or pa.types.is_temporal(t)) and not \
        pa.types.is_duration(t)
