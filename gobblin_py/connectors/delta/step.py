"""The commit step that appends a run's files to a Delta table: one version, found again on replay by its ``txn``.

The files are added as the tasks wrote them (no data is read or rewritten): one ``add`` action each, with its
size, partition values and statistics taken from its footer when the run planned the commit. A missing table is
made by the same commit (``create_table_with_add_actions``), an existing one gets a blind append
(``create_write_transaction``); both carry the run's app transaction (:mod:`.table`). delta-rs itself retries an
append that another writer's commit beat (appends do not conflict with appends); a commit that carries the same
app id as the winner's fails, and the step then finds its transaction there, or tries again, ``delta.commit.retries``
times.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gobblin_py.connectors.delta.table import NEW_TABLE_CONFIGURATION, DeltaStep, condensed
from gobblin_py.connectors.delta.types import delta_schema, to_delta
from gobblin_py.sdk.commit import step_class_path
from gobblin_py.sdk.errors import GobblinPyError, TransientError
from gobblin_py.sdk.logs import get_logger

log = get_logger(__name__)


@dataclass
class DeltaAppendStep(DeltaStep):
    """Add ``actions`` (one per file: path, size, partition values, modification time, stats) in one version."""

    actions: list[dict[str, Any]] = field(default_factory=list)
    kind = "delta_append"

    def add_actions(self) -> list[Any]:
        from deltalake.transaction import AddAction

        return [AddAction(a["path"], int(a["size"]), dict(a["partition_values"]), int(a["modification_time"]), True,
                          str(a["stats"])) for a in self.actions]

    def execute(self, fresh: bool = False) -> None:
        from deltalake.exceptions import CommitFailedError, DeltaError

        for attempt in range(self.retries + 1):
            table, replayed = self.table_for(attempt, fresh)
            if self.replayed_and_done(table, replayed):
                return
            try:
                changes = self._commit(table)
            except CommitFailedError as exc:
                error: Exception = exc
            except (DeltaError, OSError) as exc:
                if table is not None or "already exists" not in str(exc):
                    raise TransientError(f"Delta table {self.uri}: cannot commit: {condensed(exc)}") from None
                error = exc  # another dataset made the table first: append to it
            else:
                self.found(table)
                log.info("delta_committed", table=self.uri, files=len(self.actions), table_version=self.table_version,
                         app=self.app, version=self.version, schema_changes=changes)
                return
            if attempt == self.retries:
                raise GobblinPyError(f"Delta table {self.uri}: another writer's commits kept beating this one "
                                     f"({self.retries + 1} tries, delta.commit.retries): {condensed(error)}") from None
            log.warning("delta_commit_retry", table=self.uri, attempt=attempt + 1, error=condensed(error))

    def _commit(self, table: Any) -> str:
        """One try: make the table with the files, or add the run's new columns then append them."""
        from deltalake.transaction import create_table_with_add_actions

        if table is None:
            schema = delta_schema(self.schema, f"Delta table {self.uri}")
            create_table_with_add_actions(self.uri, to_delta(_nullable(schema)), self.add_actions(), mode="error",
                                          partition_by=self.partition_by or None,
                                          configuration=NEW_TABLE_CONFIGURATION, storage_options=self.options(),
                                          commit_properties=self.commit_properties(rebased=False))
            return "table created"
        changes = self.evolve(table)
        if changes:
            table = self.table()  # the version with the new columns
        table.create_write_transaction(self.add_actions(), "append", table.schema(),
                                       partition_by=table.metadata().partition_columns or None,
                                       commit_properties=self.commit_properties())
        return changes.describe()

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "class": step_class_path(self), **self.base_json(), "actions": self.actions}

    @classmethod
    def from_json(cls, data: dict[str, Any], props: Mapping[str, str]) -> DeltaAppendStep:
        return cls(**cls.base_args(data, props), actions=list(data["actions"]))

    def describe(self) -> str:
        return f"add {len(self.actions)} file(s) to Delta table {self.uri} in one version"


def _nullable(schema: Any) -> Any:
    """``schema`` with every field nullable: a later run's file may lack a column."""
    import pyarrow as pa

    return pa.schema([f.with_nullable(True) for f in schema])
