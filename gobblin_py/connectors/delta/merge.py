"""The commit step of an upsert (``table.merge.key``): the run's rows merged into a Delta table in one version.

delta-rs's ``MERGE`` replaces each table row whose key a run's row has (every column: one the run lacks becomes
null) and inserts the others, streaming the run's rows from its files (:mod:`.merge_source`: one row per key, the
latest by the watermark column). New columns come in the same commit (``merge_schema``). The merge carries the
run's app transaction (:mod:`.table`), so a merge replayed after a crash finds it and merges nothing twice.

The run's files wait in ``<table>/_gpy_merge/<app>/<version>/`` (a folder Delta's readers and ``VACUUM`` leave
alone), since the merge writes rows of its own; the next run of the dataset removes them once its own plan shows
the merge committed (they stay until then: a commit finished after a crash moves and checks them again).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from gobblin_py.connectors.delta.merge_source import merge_source
from gobblin_py.connectors.delta.table import NEW_TABLE_CONFIGURATION, DeltaStep, condensed
from gobblin_py.connectors.delta.types import delta_schema, table_arrow_schema, to_delta
from gobblin_py.connectors.tables.evolution import plan_changes
from gobblin_py.sdk.commit import step_class_path
from gobblin_py.sdk.errors import GobblinPyError, TransientError
from gobblin_py.sdk.logs import get_logger

log = get_logger(__name__)

MERGE_FOLDER = "_gpy_merge"


def quoted(name: str) -> str:
    """A column name as delta-rs's SQL predicates name it."""
    return '"' + name.replace('"', '""') + '"'


@dataclass
class DeltaMergeStep(DeltaStep):
    """Merge the rows of ``files`` into the table on ``keys``, the latest by ``order`` winning, in one version."""

    files: list[str] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    order: list[str] = field(default_factory=list)
    kind = "delta_merge"

    def execute(self, fresh: bool = False) -> None:
        from deltalake.exceptions import CommitFailedError, DeltaError

        for attempt in range(self.retries + 1):
            table, replayed = self.table_for(attempt, fresh)
            if self.replayed_and_done(table, replayed):
                return
            try:
                metrics, changes = self._merge(table if table is not None else self._create())
            except CommitFailedError as exc:
                if attempt == self.retries:
                    raise GobblinPyError(f"Delta table {self.uri}: another writer's commits kept beating this merge "
                                         f"({self.retries + 1} tries, delta.commit.retries): "
                                         f"{condensed(exc)}") from None
                log.warning("delta_commit_retry", table=self.uri, attempt=attempt + 1, error=condensed(exc))
                continue
            except (DeltaError, OSError) as exc:
                raise TransientError(f"Delta table {self.uri}: cannot merge: {condensed(exc)}") from None
            self.found(None)
            log.info("delta_merged", table=self.uri, table_version=self.table_version, app=self.app,
                     version=self.version, files=len(self.files), schema_changes=changes,
                     **{k: metrics.get(f"num_{k}") for k in ("source_rows", "target_rows_inserted",
                                                            "target_rows_updated")})
            return

    def _create(self) -> Any:
        """The table, made empty with the run's schema (the merge then fills it), or as another writer just made
        it."""
        from deltalake import DeltaTable
        from deltalake.exceptions import CommitFailedError

        schema = delta_schema(self.schema, f"Delta table {self.uri}")
        try:
            DeltaTable.create(self.uri, to_delta(pa.schema([f.with_nullable(True) for f in schema])),
                              partition_by=self.partition_by or None, mode="ignore",
                              configuration=NEW_TABLE_CONFIGURATION, storage_options=self.options(),
                              commit_properties=self.schema_change())
        except CommitFailedError:
            pass  # made by another writer meanwhile
        return self.table()

    def _merge(self, table: Any) -> tuple[dict[str, Any], str]:
        where = f"Delta table {self.uri}"
        current = table_arrow_schema(table)
        incoming = delta_schema(self.schema, where, current)
        changes = plan_changes(current, incoming, self.evolution, where, decimals=False, widening=False)
        grown = set(name.split(".")[0] for name in changes.added)
        target = pa.schema([pa.field(f.name, incoming.field(f.name).type if f.name in grown else f.type)
                            for f in current]
                           + [incoming.field(n).with_nullable(True) for n in incoming.names if n not in current.names])
        source = merge_source(self.files, target, self.keys, self.order, where)
        predicate = " AND ".join(f"t.{quoted(k)} = s.{quoted(k)}" for k in self.keys)
        merger = table.merge(source, predicate, source_alias="s", target_alias="t", merge_schema=bool(grown),
                             commit_properties=self.commit_properties())
        metrics = merger.when_matched_update_all().when_not_matched_insert_all().execute()
        return metrics, changes.describe()

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "class": step_class_path(self), **self.base_json(), "files": self.files,
                "keys": self.keys, "order": self.order}

    @classmethod
    def from_json(cls, data: dict[str, Any], props: Mapping[str, str]) -> DeltaMergeStep:
        return cls(**cls.base_args(data, props), files=list(data["files"]), keys=list(data["keys"]),
                   order=list(data["order"]))

    def describe(self) -> str:
        return f"merge {len(self.files)} file(s) into Delta table {self.uri} on {', '.join(self.keys)}"
