"""``data.publisher.type=IcebergPublisher``: each dataset's Parquet files into an Iceberg table, one snapshot a run.

The table is ``iceberg.table`` (default ``<extract.namespace>.<extract.table.name>``) in the catalog the
``iceberg.catalog.*`` keys describe (pyiceberg's own properties; by default an embedded SQL catalog on SQLite in the
state store folder, its warehouse the final folder). A missing table is made with the run's schema and the partition
spec the writer's partitioner maps to (:mod:`.partitioning`); an existing one must have that spec. The tasks'
files move into the table's ``data`` folder, are checked to hold what their writers counted, and are then added in
one snapshot whose summary names the run (:mod:`.step`), so a replayed commit adds nothing twice.
"""

from __future__ import annotations

import posixpath
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from gobblin_py.connectors.files.publisher import Destination
from gobblin_py.connectors.iceberg.catalog import catalog_problem, data_folder, describe_catalog, open_catalog
from gobblin_py.connectors.iceberg.merge import MergeSpec, check_keys
from gobblin_py.connectors.iceberg.names import check_names, check_run_names
from gobblin_py.connectors.iceberg.partitioning import (
    JobPartitioning,
    describe_fields,
    job_partitioning,
    partition_fields,
    partition_spec,
    table_fields,
)
from gobblin_py.connectors.iceberg.settings import IcebergSettings, table_identifier
from gobblin_py.connectors.iceberg.step import IcebergCommitStep, table_place
from gobblin_py.connectors.iceberg.types import check_types
from gobblin_py.connectors.tables.evolution import plan_changes
from gobblin_py.connectors.tables.publisher import BranchTable, RunIdentity, TablePublisher, TableSettings
from gobblin_py.io.branch_paths import BranchScope
from gobblin_py.sdk.branches import branch_count, branch_key
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.errors import GobblinPyError, TransientError, UsageError
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.settings import problem_at
from gobblin_py.sdk.states import TaskState, WorkUnitState

log = get_logger(__name__)
_creating = threading.Lock()
# what keeps a table's metadata small over thousands of runs: each run's manifest is merged into bigger ones once
# there are enough of them, and only the 10 newest metadata files are kept and listed in the metadata's log (with
# 100, that log alone was two thirds of a metadata file every commit reads and rewrites; snapshots are expired by
# iceberg.snapshots.keep or the table's maintenance)
NEW_FORMAT_VERSION = 2  # pyiceberg's default: what Spark, Trino and DuckDB all read
NEW_TABLE = {"commit.manifest-merge.enabled": "true", "commit.manifest.min-count-to-merge": "100",
             "write.metadata.delete-after-commit.enabled": "true", "write.metadata.previous-versions-max": "10"}


def table_name(state: Any, branches: int, branch: int) -> tuple[str, str]:
    """The branch's table name and the key that names it."""
    settings = IcebergSettings.load(state, branches=branches, branch=branch)
    if settings.table:
        return settings.table, branch_key("iceberg.table", branches, branch)
    namespace, table = state.get_prop("extract.namespace") or "", state.get_prop("extract.table.name") or ""
    return f"{namespace}.{table}", "extract.namespace and extract.table.name (iceberg.table unset)"


class IcebergPublisher(TablePublisher):
    """Publishes each dataset's files into an Iceberg table in one snapshot per run (see the module)."""

    settings_class = IcebergSettings
    table_format = "Iceberg"

    @classmethod
    def validate(cls, props: Mapping[str, str]) -> list[ConfigError]:
        from gobblin_py.sdk.states import State

        problems = list(super().validate(props))
        catalog = catalog_problem(props)
        if catalog is not None:
            problems.append(problem_at(props, *catalog))
        branches = branch_count(props)
        for branch in range(branches):
            name, key = table_name(State(dict(props)), branches, branch)
            if name.startswith(".") or name.endswith("."):
                continue  # the source names the extract's table for each dataset: checked as it publishes
            try:
                table_identifier(name, key)
            except UsageError as exc:
                problems.append(problem_at(props, key.split(" ")[0], str(exc).split(": ", 1)[-1],
                                           "name the table namespace.table with iceberg.table"))
        return problems

    def open_table(self, scope: BranchScope, schema: pa.Schema, identity: RunIdentity) -> BranchTable:
        from pyiceberg.exceptions import NoSuchTableError

        name, key = table_name(scope.state, scope.branches, scope.branch)
        identifier = table_identifier(name, key)
        settings = TableSettings.load(scope.state, branches=scope.branches, branch=scope.branch)
        evolution = settings.evolution
        merge = None
        if settings.merge_key:
            missing = [c for c in settings.merge_key if c not in schema.names]
            if missing:
                raise UsageError(f"{scope.key('table.merge.key')}: no column {', '.join(missing)} in the run's data "
                                 f"(it has {', '.join(schema.names)})")
            merge = MergeSpec(settings.merge_key, settings.merge_order_column(scope.prop("extract.delta.fields"), schema))
            if merge.order is not None and merge.order not in schema.names:
                raise UsageError(f"{scope.key('table.merge.order.column')}: no column {merge.order} in the run's "
                                 f"data (it has {', '.join(schema.names)})")
        check_run_names(schema, f"table {name}")  # what the run's data alone says: before a table is made for it
        catalog = open_catalog(self.job_props)
        try:
            try:
                table = catalog.load_table(identifier)
            except NoSuchTableError:
                check_types(schema, NEW_FORMAT_VERSION, name)
                table = _create(catalog, identifier, schema, partition_fields(scope, schema))
            else:
                check_types(schema, table.metadata.format_version, name)
        except GobblinPyError:
            raise
        except Exception as exc:  # noqa: BLE001 - a catalog fails in its own client library's errors
            raise TransientError(f"Iceberg catalog {describe_catalog(self.job_props)}: table {name}: "
                                 f"{type(exc).__name__}: {exc}") from None
        # refused before anything moves
        _check_spec(table, job_partitioning(scope, schema), scope, name)
        plan_changes(table.schema().as_arrow(), schema, evolution, f"table {name}")
        check_names(table.metadata, schema, f"table {name}")
        return BranchTable(scope.branch, scope, data_folder(table), None, key, state=(identifier, evolution, schema, merge))

    def preflight(self, work_units: Sequence[WorkUnitState]) -> None:
        """Before any task runs: each planned table that exists is partitioned as the job's partitioner asks (its
        name a valid one); a catalog that cannot be reached now is left to the commit."""
        from pyiceberg.exceptions import NoSuchTableError

        seen: set[str] = set()
        branches = branch_count(self.job_props)
        for unit in work_units:
            for branch in range(branches):
                name, key = table_name(unit, branches, branch)
                if name in seen:
                    continue
                seen.add(name)
                identifier = table_identifier(name, key)
                try:
                    table = open_catalog(self.job_props).load_table(identifier)
                except NoSuchTableError:
                    continue
                except Exception as exc:  # noqa: BLE001 - a catalog fails in its client's errors: the commit says
                    log.warning("iceberg_preflight_skipped", table=name, error=f"{type(exc).__name__}: {exc}")
                    return
                scope = BranchScope(unit, branches, branch)
                _check_spec(table, job_partitioning(scope, table.schema().as_arrow()), scope, name)

    def place(self, table: BranchTable) -> str:
        return table_place(self.job_props, table.state[0])

    def table_step(self, table: BranchTable, identity: RunIdentity) -> IcebergCommitStep:
        identifier, evolution, schema, merge = table.state
        if merge is not None:  # in the plan: before anything moves
            check_keys([f.source for f in table.files], merge, f"table {'.'.join(identifier)}")
        files = [f.path if "://" in f.path else f"file://{f.path}" for f in table.files]
        settings = IcebergSettings.load(self.job_props)
        return IcebergCommitStep(identifier, files, identity, schema, evolution, settings.commit_retries,
                                 self.job_props, merge, settings.snapshots_kept,
                                 table.branch if table.scope.branches > 1 else None)

    def destination(self, task: TaskState, scope: BranchScope) -> Destination:
        """The table's data folder; a folder of the branch's name in it when another branch of the job publishes
        into the same table (the branches' files have the same names: their writers' ids)."""
        found = super().destination(task, scope)
        name = table_name(scope.state, scope.branches, scope.branch)[0]
        if not any(table_name(scope.state, scope.branches, b)[0] == name
                   for b in range(scope.branches) if b != scope.branch):
            return found
        return Destination(posixpath.join(found.folder, scope.name), found.root, found.key, found.fs_uri)


def _check_spec(table: Any, wanted: JobPartitioning, scope: BranchScope, name: str) -> None:
    """UsageError when the table is partitioned otherwise than the job's partitioner asks (``wanted``): a file must
    hold rows of one of the table's partitions (pyiceberg files it by its columns' bounds, nulls left out), and a
    table's spec is its readers' to change, not a run's."""
    found = table_fields(table)
    if found == wanted.fields:
        return
    partitioner = scope.key("writer.partitioner.class")
    fix = f"set {partitioner} and its writer.partition.* keys to give {describe_fields(found)}" if found \
        else f"remove {partitioner}"
    raise UsageError(f"table {name} is partitioned by {describe_fields(found)}, and the job's files by "
                     f"{wanted.describe(scope)}: {fix}, or publish to another table ({scope.key('iceberg.table')}); "
                     "nothing was moved and the watermark is kept")


def _create(catalog: Any, identifier: tuple[str, ...], schema: pa.Schema, fields: list[tuple[str, str]]) -> Any:
    """The table ``identifier`` made with ``schema`` and the spec of ``fields``; the one another run just made when
    it won the race."""
    from pyiceberg.catalog import Catalog
    from pyiceberg.exceptions import TableAlreadyExistsError
    from pyiceberg.schema import assign_fresh_schema_ids

    with _creating:  # datasets committing at once may make one namespace: one thread at a time here
        try:
            catalog.create_namespace_if_not_exists(identifier[:-1])
        except Exception:  # noqa: BLE001 - another process made it meanwhile (each catalog says so its own way)
            if not catalog.namespace_exists(identifier[:-1]):
                raise
    # the schema with the ids the table will have (the conversion gives every field -1; a spec built on those
    # would name the last field): create_table assigns the same ids again, in the same order
    iceberg_schema = assign_fresh_schema_ids(Catalog._convert_schema_if_needed(schema))
    try:
        table = catalog.create_table(identifier, schema=iceberg_schema,
                                     partition_spec=partition_spec(iceberg_schema, fields), properties=NEW_TABLE)
    except TableAlreadyExistsError:
        return catalog.load_table(identifier)
    log.info("iceberg_table_created", table=".".join(identifier), location=table.location(),
             partitioned_by=[f"{t}({c})" for c, t in fields])
    return table
