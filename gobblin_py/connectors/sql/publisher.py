"""Gobblin's ``JdbcPublisher``: the rows of the successful tasks' staging tables into the final table, once.

For each branch, one database transaction: ``DELETE FROM`` the final table when ``jdbc.publisher.replace_table``,
``INSERT INTO final SELECT * FROM stage_…`` for every successful task's staging table (Gobblin's SQL), a marker
row in ``gpy_commits`` (job id, dataset, table), and — where the database's DDL is transactional (PostgreSQL,
SQLite) — the ``DROP`` of the staging tables. The step knows it happened by that marker row, so an
exactly-once commit that a crash interrupted is finished by the next run without inserting twice
(:class:`JdbcPublishStep`). Unlike Gobblin, the commit policy ``successful`` publishes the successful tasks'
staging tables too: rows never go straight into the final table.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gobblin_py.connectors.sql.writer import STAGING_KEY
from gobblin_py.connectors.sql.writer_sql import MARKER_TABLE, JdbcSettings, MysqlWriting, Target, execute
from gobblin_py.sdk.branches import branch_key
from gobblin_py.sdk.commit import CommitStep, step_class_path
from gobblin_py.sdk.contracts import DataPublisher
from gobblin_py.sdk.errors import GobblinPyError
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.settings import Context
from gobblin_py.sdk.states import State, TaskState, WorkingState

log = get_logger(__name__)


@dataclass
class JdbcPublishStep(CommitStep):
    """Publish staging tables into a final table with a commit marker, in one transaction (idempotent)."""

    target: Target
    staging: list[str]
    replace: bool
    overwrite: bool
    job_id: str
    urn: str
    props: Mapping[str, str] = field(default_factory=dict, repr=False)
    kind: str = "jdbc_publish"

    @property
    def marker(self) -> str:
        return f"{self.target.database or ''}.{self.target.table}"

    def _marked(self, dialect, conn) -> bool:
        cur = execute(conn, f"SELECT 1 FROM {dialect.table(MARKER_TABLE)} WHERE job_id = {dialect.param} "
                            f"AND dataset_urn = {dialect.param} AND target = {dialect.param}",
                      (self.job_id, self.urn, self.marker))
        return cur.fetchone() is not None

    def is_completed(self) -> bool:
        dialect = self.target.dialect(self.props)
        conn = dialect.connect()
        try:
            return self._marked(dialect, conn)
        except Exception:  # noqa: BLE001 - no marker table yet: nothing was published
            return False
        finally:
            conn.close()

    def execute(self, fresh: bool = False) -> None:
        dialect = self.target.dialect(self.props)
        conn = dialect.connect()
        late_drops = isinstance(dialect, MysqlWriting)  # MySQL commits at every DDL statement: drop after the commit
        try:
            execute(conn, dialect.marker_ddl())
            conn.commit()
            dialect.begin(conn)
            if self._marked(dialect, conn):
                conn.rollback()
                return
            present = {name.lower() for name in self.staging if dialect.columns(conn, name)}
            missing = [name for name in self.staging if name.lower() not in present]
            if missing:
                raise GobblinPyError(f"cannot publish into {self.target.describe()}: staging tables {missing} are gone")
            if self.replace:
                execute(conn, f"DELETE FROM {dialect.table(self.target.table)}")
            for name in self.staging:
                execute(conn, dialect.copy_sql(self.target.table, name, self.overwrite))
            execute(conn, f"INSERT INTO {dialect.table(MARKER_TABLE)} (job_id, dataset_urn, target, committed_at) "
                          f"VALUES ({', '.join([dialect.param] * 4)})",
                    (self.job_id, self.urn, self.marker, dt.datetime.now(dt.timezone.utc).isoformat()))
            if not late_drops:
                for name in self.staging:
                    execute(conn, f"DROP TABLE {dialect.table(name)}")
            conn.commit()
            if late_drops:
                for name in self.staging:
                    execute(conn, f"DROP TABLE IF EXISTS {dialect.table(name)}")
        except Exception as exc:
            try:
                conn.rollback()
            except Exception:  # noqa: BLE001
                pass
            if isinstance(exc, GobblinPyError):
                raise
            raise dialect.error(exc, f"publishing into {self.target.table} failed") from None
        finally:
            conn.close()
        log.info("jdbc_published", table=self.target.table, staging_tables=len(self.staging), replace=self.replace)

    def to_json(self) -> dict[str, Any]:
        t = self.target
        return {"kind": self.kind, "class": step_class_path(self), "destination": t.destination, "url": t.url,
                "username": t.username, "database": t.database, "table": t.table, "password_key": t.password_key,
                "staging": self.staging, "replace": self.replace, "overwrite": self.overwrite, "job_id": self.job_id,
                "urn": self.urn}

    @classmethod
    def from_json(cls, data: dict[str, Any], props: Mapping[str, str]) -> JdbcPublishStep:
        target = Target(data["destination"], data["url"], data.get("username"), data.get("database"), data["table"],
                        data["password_key"])
        return cls(target, list(data["staging"]), bool(data["replace"]), bool(data.get("overwrite")),
                   data["job_id"], data["urn"], props)

    def describe(self) -> str:
        return f"publish {len(self.staging)} staging table(s) into {self.target.describe()}"


class JdbcPublisher(DataPublisher):
    """Publishes each branch's staging tables into its final table (exactly once through ``plan``)."""

    settings_class = JdbcSettings

    def init(self, job_props: dict[str, str]) -> None:
        self.props = job_props
        self.final_dirs: list[str] = []

    def plan(self, task_states: Sequence[TaskState]) -> list[JdbcPublishStep]:
        tasks = [t for t in task_states if t.working_state is WorkingState.SUCCESSFUL]
        self.final_dirs = []
        if not tasks:
            return []
        branches = max(t.get_prop_as_int("fork.branches", 1) or 1 for t in tasks)
        steps = []
        for branch in range(branches):
            settings = JdbcSettings.load(State(self.props), Context(branches, branch))
            target = Target.of(settings, branch_key("jdbc.publisher.password", branches, branch))
            key = branch_key(STAGING_KEY, branches, branch)
            staging = [t.get_prop(key) for t in tasks if t.properties.get(key)]
            steps.append(JdbcPublishStep(target, staging, settings.replace, settings.overwrite, tasks[0].job_id,
                                         tasks[0].dataset_urn, self.props))
            self.final_dirs.append(target.describe())
        return steps

    def publish(self, task_states: Sequence[TaskState]) -> list[str]:
        for step in self.plan(task_states):
            step.execute(fresh=True)
        return list(self.final_dirs)
