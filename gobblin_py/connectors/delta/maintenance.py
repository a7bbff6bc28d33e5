"""Delta table maintenance as a job (``job.class=DeltaMaintenanceJob``): ``OPTIMIZE`` rewrites the table's small
files into files of ``table.maintenance.target.file.size`` in one commit, then ``VACUUM`` deletes the files no
version within ``table.maintenance.retention.hours`` references.

Crash-safe by construction: delta-rs commits a rewrite atomically (a kill before its log entry leaves the table
at the version it had; the files it had written are unreferenced and a later vacuum deletes them), and vacuum
deletes only files the current version does not reference. ``gpy run --dry-run`` lists what would be done.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from gobblin_py.connectors.delta.settings import URI_KEY, DeltaSettings, storage_options, table_uri
from gobblin_py.connectors.tables.maintenance import ENFORCE_KEY, RETENTION_KEY, MaintenanceSettings, problems_of
from gobblin_py.io.crash_points import phase
from gobblin_py.sdk.branches import branch_count
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.contracts import StandaloneJob
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.states import State

FINAL_DIR_KEY = "data.publisher.final.dir"


def _table_props(props: Mapping[str, str]) -> dict[str, str]:
    """The job's properties as the Delta publisher's keys read them: a table named by ``delta.table.uri`` (or a
    branch's ``delta.table.uri.N``) needs no ``data.publisher.final.dir`` (that only places a table named by
    namespace and table name)."""
    view = dict(props)
    for key in [k for k in props if k == URI_KEY or k.startswith(URI_KEY + ".")]:
        final = FINAL_DIR_KEY + key[len(URI_KEY):]
        if view.get(key) and not view.get(final):
            view[final] = view[key]
    return view


def table_uris(props: Mapping[str, str]) -> list[str]:
    """The tables the job's keys name, as its Delta publisher resolves them: one a fork branch
    (``delta.table.uri.N`` with several), each once."""
    view = _table_props(props)
    state, branches = State(view), branch_count(view)
    return list(dict.fromkeys(table_uri(state, branches, branch)[0] for branch in range(branches)))


def _small_files(dt: Any, target_size: int) -> dict[str, list[str]]:
    """The files below ``target_size`` by partition (``""`` unpartitioned): what ``OPTIMIZE`` would rewrite (a
    partition with a single small file is left as it is)."""
    actions = pa.table(dt.get_add_actions(flatten=True))
    partition_columns = [c for c in actions.column_names if c.startswith("partition.")]
    by_partition: dict[str, list[str]] = defaultdict(list)
    for row in actions.select(["path", "size_bytes", *partition_columns]).to_pylist():
        if row["size_bytes"] < target_size:
            name = "/".join(f"{c[len('partition.'):]}={row[c]}" for c in partition_columns)
            by_partition[name].append(row["path"])
    return {name: files for name, files in by_partition.items() if len(files) > 1}


def _vacuum(dt: Any, settings: MaintenanceSettings, dry_run: bool) -> list[str]:
    try:
        return list(dt.vacuum(retention_hours=settings.retention_hours, dry_run=dry_run,
                              enforce_retention_duration=settings.enforce_retention, full=True))
    except Exception as exc:
        if "Invalid retention period" not in str(exc):
            raise
        raise UsageError(f"{RETENTION_KEY}={settings.retention_hours}: shorter than the table's minimum retention "
                         f"({exc}); readers of older versions may still need those files. Set {ENFORCE_KEY}=false "
                         "to delete them anyway") from None


class DeltaMaintenanceJob(StandaloneJob):
    """Compacts a Delta table's small files (``OPTIMIZE``) and deletes the files it no longer references past a
    retention (``VACUUM``)."""

    settings_class = MaintenanceSettings

    @classmethod
    def validate(cls, props: Mapping[str, str]) -> list[ConfigError]:
        return problems_of(lambda: (DeltaSettings.load(_table_props(props)), table_uris(props)))

    def run(self, props: Mapping[str, str], dry_run: bool) -> list[str]:
        from deltalake import DeltaTable

        settings = MaintenanceSettings.load(props)
        view = _table_props(props)
        tables = [(uri, DeltaTable(uri, storage_options=storage_options(view, uri) or None))
                  for uri in table_uris(props)]
        for _, dt in tables:
            _vacuum(dt, settings, dry_run=True)  # a retention a table refuses is refused before any rewrite
        return [line for uri, dt in tables for line in _maintain(uri, dt, settings, dry_run)]


def _maintain(uri: str, dt: Any, settings: MaintenanceSettings, dry_run: bool) -> list[str]:
    """Optimize and vacuum the table at ``uri``."""
    lines: list[str] = []
    version = dt.version()
    if dry_run:
        small = _small_files(dt, settings.target_size)
        for partition, files in sorted(small.items()):
            lines.append(f"would compact  {len(files)} file(s) of {partition or 'the table'}")
        removed = sum(len(files) for files in small.values())
        lines.append(f"{removed} small file(s) of {uri} would be compacted into files of about "
                     f"{settings.target_size} bytes (dry run)")
    else:
        with phase("table.optimize"):
            metrics = dt.optimize.compact(target_size=settings.target_size)
        lines.append(f"compacted {metrics['numFilesRemoved']} file(s) of {uri} into {metrics['numFilesAdded']}"
                     f" (version {version} -> {dt.version()})")
    with phase("table.vacuum"):
        deleted = _vacuum(dt, settings, dry_run)
    verb = "would delete" if dry_run else "deleted"
    lines += [f"{verb}  {path}" for path in sorted(deleted)]
    lines.append(f"{len(deleted)} unreferenced file(s) older than {settings.retention_hours} h "
                 + ("would be deleted (dry run)" if dry_run else "deleted"))
    return lines


class DeltaTableDatasetFinder:
    """A retention job's dataset finder (``gobblin.retention.dataset.finder.class``): the Delta tables the job's
    Delta keys name, maintained by :class:`DeltaMaintenanceJob` with its ``table.maintenance.*`` keys."""

    maintenance_job = DeltaMaintenanceJob
