"""``data.publisher.type=DeltaPublisher``: each dataset's Parquet files into a Delta table, one version a run.

The table is at ``delta.table.uri`` (default ``<data.publisher.final.dir>/<extract.namespace>/<extract.table.name>``,
per branch), on local disk or an object store delta-rs reaches with the job's ``fs.s3a.*`` keys (or its own
``delta.storage.*`` options). A missing table is made by the run's commit with the run's schema and the partition
columns the writer's partitioner maps to (:mod:`.partitioning`); an existing one must be partitioned so, and must
take the run's schema (:mod:`.types`, :func:`~gobblin_py.connectors.tables.evolution.plan_changes`): both are
checked before anything moves. The tasks' files move into the table's folder, are checked to hold what their
writers counted, and are added in one version carrying the run's app transaction (:mod:`.step`), or, with
``table.merge.key``, merged into it (:mod:`.merge`).
"""

from __future__ import annotations

import os
import posixpath
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from gobblin_py.connectors.delta.footers import read_facts
from gobblin_py.connectors.delta.merge import MERGE_FOLDER, DeltaMergeStep
from gobblin_py.connectors.delta.partitioning import partition_columns
from gobblin_py.connectors.delta.protocol import null_problem, protocol_problem
from gobblin_py.connectors.delta.settings import URI_KEY, DeltaSettings, storage_options, table_uri
from gobblin_py.connectors.delta.step import DeltaAppendStep
from gobblin_py.connectors.delta.table import app_folder, app_id, open_table, place, state_store_of
from gobblin_py.connectors.delta.types import case_clash, delta_schema, table_arrow_schema
from gobblin_py.connectors.tables.evolution import plan_changes
from gobblin_py.connectors.tables.publisher import BranchTable, DataFile, RunIdentity, TablePublisher
from gobblin_py.io import fs as fsutil
from gobblin_py.io.branch_paths import BranchScope
from gobblin_py.sdk.branches import branch_count, branch_key
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.errors import GobblinPyError, UsageError
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.settings import problem_at
from gobblin_py.sdk.states import State, TaskState

log = get_logger(__name__)


@dataclass
class _Plan:
    """What the publisher keeps of a branch's table between planning and its step."""

    uri: str
    app: str
    version: int
    partition_by: list[str]
    settings: DeltaSettings
    order: list[str]
    table: Any  # the DeltaTable as planning read it, None when there was none


class DeltaPublisher(TablePublisher):
    """Publishes each dataset's files into a Delta table in one version per run (see the module)."""

    settings_class = DeltaSettings
    table_format = "Delta"

    @classmethod
    def validate(cls, props: Mapping[str, str]) -> list[ConfigError]:
        problems = list(super().validate(props))
        branches = branch_count(props)
        state = State(dict(props))
        if branches > 1 and props.get(URI_KEY):
            problems.append(problem_at(props, URI_KEY, f"the job has {branches} branches, and {URI_KEY} is read per "
                                       f"branch ({URI_KEY}.0 to {URI_KEY}.{branches - 1}): this one would be ignored",
                                       f"name each branch's table with {URI_KEY}.N (the same URI for branches "
                                       "publishing into one table)"))
        for branch in range(branches):
            key = branch_key(URI_KEY, branches, branch)
            if not props.get(key) and not props.get("extract.table.name"):
                continue  # the source names each dataset's table
            try:
                uri, _ = table_uri(state, branches, branch)
            except UsageError as exc:
                problems.append(problem_at(props, key, str(exc), f"set {key} to the table's folder or URL"))
                continue
            if "://" not in uri and os.path.exists(uri) and not os.path.isdir(uri):
                problems.append(problem_at(props, key, f"{uri} is a file: a Delta table is a folder",
                                           f"set {key} to the table's folder"))
            elif "://" not in uri:  # a table on local disk is looked at now; one on a store when the run commits
                problems.extend(_partitioning_problems(props, uri, branches, branch, key))
        return problems

    def plan(self, task_states: Sequence[TaskState], allow_replace: bool = False) -> list[Any]:
        steps = super().plan(task_states, allow_replace)
        self.final_dirs = list(dict.fromkeys(place(t.state.uri) for t in self.tables.values() if t.files))
        return steps

    def place(self, table: BranchTable) -> str:
        return place(table.state.uri)

    def open_table(self, scope: BranchScope, schema: pa.Schema, identity: RunIdentity) -> BranchTable:
        uri, key = table_uri(scope.state, scope.branches, scope.branch)
        settings = DeltaSettings.load(scope.state, branches=scope.branches, branch=scope.branch)
        where = f"Delta table {uri}"
        mapped = delta_schema(schema, where)  # a type no Delta table holds fails here, before anything moves
        partition_by = partition_columns(scope.state, scope.branches, scope.branch, mapped)
        table = open_table(uri, storage_options(self.job_props, uri))
        case_clash(schema, table_arrow_schema(table) if table is not None else None, where)
        app = app_id(identity, scope.branches, scope.branch, state_store_of(self.job_props))
        version = 1
        if table is not None:
            problem = protocol_problem(table, bool(settings.merge_key))
            if problem:
                raise UsageError(f"{where}: gpy cannot publish into it: {problem}; nothing of the dataset is moved "
                                 "and its watermark is kept")
            existing = list(table.metadata().partition_columns)
            if existing != partition_by:
                raise UsageError(_partitioning_conflict(uri, existing, partition_by))
            current = table_arrow_schema(table)
            changes = plan_changes(current, delta_schema(schema, where, current), settings.evolution, where,
                                   decimals=False, widening=False)
            if changes.relaxed:
                raise UsageError(f"{where}: column {changes.relaxed[0]} is NOT NULL in the table, and gpy checks "
                                 "only top-level columns for nulls: make the run's data say it is not null, or "
                                 "drop the table's NOT NULL")
            version = (table.transaction_version(app) or 0) + 1
        missing = [k for k in settings.merge_key if k not in schema.names]
        if missing:
            raise UsageError(f"{scope.key('table.merge.key')}={','.join(settings.merge_key)}: the run's data has no "
                             f"column {', '.join(missing)} (columns: {', '.join(schema.names)})")
        folder = uri
        if settings.merge_key:
            merges = f"{uri}/{MERGE_FOLDER}/{app_folder(app)}"
            if table is not None:
                _remove_merged(merges, version - 1)
            folder = f"{merges}/{version}"
        order = _merge_order(scope, settings, schema)
        return BranchTable(scope.branch, scope, folder, None, key,
                           state=_Plan(uri, app, version, partition_by, settings, order, table))

    def table_step(self, table: BranchTable, identity: RunIdentity) -> DeltaAppendStep | DeltaMergeStep:
        plan: _Plan = table.state
        schema = _union([f.schema for f in table.files])
        args: dict[str, Any] = {"uri": plan.uri, "app": plan.app, "version": plan.version, "identity": identity,
                                "schema": schema, "partition_by": plan.partition_by,
                                "evolution": plan.settings.evolution, "retries": plan.settings.commit_retries,
                                "props": self.job_props}
        step: DeltaAppendStep | DeltaMergeStep
        _check_not_null(table.files, plan)
        if plan.settings.merge_key:
            _check_keys(table.files, list(plan.settings.merge_key), plan.uri)
            step = DeltaMergeStep(**args, files=[f.path for f in table.files], keys=list(plan.settings.merge_key),
                                  order=plan.order)
            step.planned = plan.table
            return step
        now = int(time.time() * 1000)
        actions = []
        for file in table.files:
            facts = read_facts(file.source, None, file.records, plan.partition_by)
            _warn_folder_differs(plan.uri, file, facts.partition_values)
            actions.append({"path": posixpath.join(file.folder, posixpath.basename(file.path)), "size": file.size,
                            "partition_values": facts.partition_values, "modification_time": now,
                            "stats": facts.stats})
        step = DeltaAppendStep(**args, actions=actions)
        step.planned = plan.table
        return step


def _warn_folder_differs(uri: str, file: DataFile, values: Mapping[str, str | None]) -> None:
    """Warn when a ``column=value`` folder names another value than the file's own (the partitioner writes
    whitespace, ':' and '\\' as '_'): readers that take partition values from folder names (Polars) see that one,
    those that read the table's log (DuckDB, Spark, delta-rs) the right one."""
    for part in file.folder.split("/"):
        column, sep, named = part.partition("=")
        if sep and column in values and values[column] is not None and named != values[column]:
            log.warning("delta_partition_folder_differs", table=uri, file=file.path, column=column, folder=named,
                        value=values[column])


def _union(schemas: list[pa.Schema]) -> pa.Schema:
    return pa.unify_schemas(schemas, promote_options="permissive") if len(schemas) > 1 else schemas[0]


def _partitioning_conflict(uri: str, existing: list[str], wanted: list[str]) -> str:
    return (f"Delta table {uri} is partitioned by {existing or 'nothing'}, and the job's writer.partitioner.class "
            f"gives {wanted or 'no partition column'}: publish to another table ({URI_KEY}) or change the "
            "partitioner")


def _partitioning_problems(props: Mapping[str, str], uri: str, branches: int, branch: int,
                           key: str) -> list[ConfigError]:
    """A table already at ``uri`` (on local disk) partitioned otherwise than the job's writer partitions."""
    try:
        table = open_table(uri, {})
        wanted = partition_columns(props, branches, branch, None, warn=False)
    except GobblinPyError:
        return []  # the run says what is wrong with the table when it gets there
    if table is None or list(table.metadata().partition_columns) == wanted:
        return []
    existing = list(table.metadata().partition_columns)
    return [problem_at(props, key if props.get(key) else "extract.table.name",
                       _partitioning_conflict(uri, existing, wanted))]


def _merge_order(scope: BranchScope, settings: DeltaSettings, schema: pa.Schema) -> list[str]:
    """The columns whose latest value wins among a run's rows of one key: ``table.merge.order.column``, else the
    source's ``extract.delta.fields`` (the first non-null of several); empty: the last row written wins."""
    if not settings.merge_key:
        return []
    if settings.merge_order:
        if settings.merge_order not in schema.names:
            raise UsageError(f"{scope.key('table.merge.order.column')}={settings.merge_order}: the run's data has no "
                             f"such column (columns: {', '.join(schema.names)})")
        return [settings.merge_order]
    return [c.strip() for c in (scope.state.get_prop("extract.delta.fields") or "").split(",")
            if c.strip() in schema.names]


def _check_not_null(files: list[DataFile], plan: _Plan) -> None:
    """No row of the run is null in a column the table says is NOT NULL (a file without the column: every row)."""
    if plan.table is None:
        return
    required = [f.name for f in table_arrow_schema(plan.table) if not f.nullable]
    for column in required:
        for file in files:
            where = null_problem(file.source, file.records, column)
            if where:
                raise UsageError(f"Delta table {plan.uri}: column {column} is NOT NULL in the table and null in {where}; "
                                 "nothing of the dataset is moved and its watermark is kept (filter such rows out, "
                                 "or drop the table's NOT NULL)")


def _check_keys(files: list[DataFile], keys: list[str], uri: str) -> None:
    """No file of an upsert has a null key (its footer's null counts): such a row could never be matched."""
    import pyarrow.parquet as pq

    for file in files:
        fs, local = fsutil.open_fs(file.source)
        with fs.open(local, "rb") as stream:
            metadata = pq.ParquetFile(stream).metadata
            names = [metadata.schema.column(i).path for i in range(metadata.num_columns)]
            for key in keys:
                if key not in names:
                    continue
                column = names.index(key)
                nulls = sum(metadata.row_group(g).column(column).statistics.null_count
                            for g in range(metadata.num_row_groups)
                            if metadata.row_group(g).column(column).statistics is not None)
                if nulls:
                    raise UsageError(f"Delta table {uri}: {file.source}: column {key} of table.merge.key is null in "
                                     f"{nulls} row(s); a row without a key cannot be merged (filter such rows out, "
                                     "or choose other key columns)")


def _remove_merged(folder: str, committed: int) -> None:
    """Remove the files of this dataset's earlier upserts, every one up to version ``committed`` merged."""
    fs, path = fsutil.open_fs(folder)
    try:
        entries = fs.ls(path, detail=False)
    except FileNotFoundError:
        return
    for entry in entries:
        name = posixpath.basename(str(entry).rstrip("/"))
        if name.isdigit() and int(name) <= committed:
            fs.rm(str(entry), recursive=True)
            log.info("delta_merged_files_removed", folder=f"{folder}/{name}")
