"""Iceberg table maintenance as a job (``job.class=IcebergMaintenanceJob``), for each table the job's keys name
(one a fork branch, with ``fork.branches``: the tables its Iceberg publisher wrote):

1. the data files smaller than ``table.maintenance.target.file.size`` are rewritten into files of about that
   size, partition by partition, in one snapshot (:mod:`.rewrite`); nothing small, no snapshot;
2. the snapshots older than ``table.maintenance.retention.hours`` are expired, in one metadata commit through
   pyiceberg's ``table.maintenance.expire_snapshots()``; the current snapshot, tags and branch heads are never
   expired, and the table properties gpy's replay finds a run's commit by (``gpy.commit.<hash>``) stay;
3. the files under the table's location that no snapshot or metadata file references and that are older than
   the retention are deleted (:mod:`.orphans`), on local disk and object stores alike.

A kill mid-run leaves the table at the metadata it had or at the new one (the catalog swaps the metadata pointer
atomically); the files a killed rewrite wrote are orphans step 3 deletes later. ``gpy run --dry-run`` lists the
files that would be rewritten, the snapshots that would be expired and the files that are orphans now.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from gobblin_py.connectors.iceberg import rewrite
from gobblin_py.connectors.iceberg.catalog import open_catalog
from gobblin_py.connectors.iceberg.orphans import Orphans
from gobblin_py.connectors.iceberg.publisher import table_name
from gobblin_py.connectors.iceberg.settings import IcebergSettings, table_identifier
from gobblin_py.connectors.tables.maintenance import (
    ENFORCE_KEY,
    ICEBERG_MINIMUM_HOURS,
    RETENTION_KEY,
    MaintenanceSettings,
    problems_of,
)
from gobblin_py.io.crash_points import phase
from gobblin_py.sdk.branches import branch_count
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.contracts import StandaloneJob
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.states import State


def identifiers(props: Mapping[str, str]) -> list[tuple[str, ...]]:
    """The tables the job's keys name, as its Iceberg publisher resolves them: one a fork branch (``iceberg.table.N``
    with several), each once."""
    state, branches = State(dict(props)), branch_count(props)
    found: list[tuple[str, ...]] = []
    for branch in range(branches):
        identifier = table_identifier(*table_name(state, branches, branch))
        if identifier not in found:
            found.append(identifier)
    return found


def expirable(table: Any, cutoff_ms: int) -> list[Any]:
    """The snapshots of ``table`` older than ``cutoff_ms`` that no branch or tag (the current one included)
    points at, oldest first."""
    protected = {ref.snapshot_id for ref in table.metadata.refs.values()}
    return [s for s in table.snapshots() if s.timestamp_ms < cutoff_ms and s.snapshot_id not in protected]


def _rewrite(table: Any, name: str, target_size: int, dry_run: bool) -> list[str]:
    found = rewrite.plan(table, target_size)
    verb = "would rewrite" if dry_run else "rewrote"
    lines = [f"{verb}  {len(b.tasks)} file(s) of {b.partition or 'the table'} into 1" for b in found.bins]
    if found.with_deletes:
        lines.append(f"kept  {found.with_deletes} small file(s) of {name} that delete files apply to (merge-on-read): "
                     "their rows are only right with their deletes")
    if found.old_spec:
        lines.append(f"kept  {found.old_spec} small file(s) of {name} of an earlier partition spec")
    if found.bins and not dry_run:
        snapshot = rewrite.rewrite(table, found, name)
        return lines + [f"rewrote {found.files} small file(s) of {name} into {len(found.bins)} of about "
                        f"{target_size} bytes in snapshot {snapshot}"]
    return lines + [f"{found.files} small file(s) of {name} " + ("would be rewritten into "
                    f"{len(found.bins)} (dry run)" if dry_run else "rewritten: none to compact")]


def _expire(table: Any, name: str, hours: int, dry_run: bool) -> list[str]:
    expired = expirable(table, int((time.time() - hours * 3600) * 1000))
    verb = "would expire" if dry_run else "expired"
    lines = [f"{verb}  snapshot {s.snapshot_id} of "
             f"{datetime.fromtimestamp(s.timestamp_ms / 1000, timezone.utc):%Y-%m-%d %H:%M:%S} UTC"
             for s in expired]
    if expired and not dry_run:
        with phase("table.expire"):
            table.maintenance.expire_snapshots().by_ids([s.snapshot_id for s in expired]).commit()
    return lines + [f"{len(expired)} snapshot(s) of {name} older than {hours} h "
                    + ("would be expired (dry run)" if dry_run else "expired")]


def _remove_orphans(table: Any, hours: int, dry_run: bool) -> list[str]:
    orphans = Orphans(table, time.time() - hours * 3600)
    if not dry_run:
        with phase("table.orphans"):
            orphans.delete()
    verb = "would delete" if dry_run else "deleted"
    return [f"{verb}  {path}" for path in orphans.names()] + [
        f"{len(orphans.paths)} file(s) no snapshot references, older than {hours} h, "
        + ("would be deleted (dry run; the files of the snapshots expired now are not counted)"
           if dry_run else "deleted")]


class IcebergMaintenanceJob(StandaloneJob):
    """Rewrites an Iceberg table's small files and expires its snapshots and files older than a retention (see
    the module)."""

    settings_class = MaintenanceSettings

    @classmethod
    def validate(cls, props: Mapping[str, str]) -> list[ConfigError]:
        return problems_of(lambda: (IcebergSettings.load(props), identifiers(props)))

    def run(self, props: Mapping[str, str], dry_run: bool) -> list[str]:
        settings = MaintenanceSettings.load(props)
        if settings.enforce_retention and settings.retention_hours < ICEBERG_MINIMUM_HOURS:
            raise UsageError(f"{RETENTION_KEY}={settings.retention_hours}: shorter than {ICEBERG_MINIMUM_HOURS} h, "
                             "the least an Iceberg table's unreferenced files are kept (a writer's files wait in "
                             f"the table's folder for its commit). Set {ENFORCE_KEY}=false to delete them anyway")
        lines: list[str] = []
        hours = settings.retention_hours
        for identifier in identifiers(props):
            name = ".".join(identifier)
            table = open_catalog(props).load_table(identifier)
            lines += _rewrite(table, name, settings.target_size, dry_run)
            lines += _expire(table, name, hours, dry_run)
            lines += _remove_orphans(open_catalog(props).load_table(identifier), hours, dry_run)
        return lines


class IcebergTableDatasetFinder:
    """A retention job's dataset finder (``gobblin.retention.dataset.finder.class``): the Iceberg tables the job's
    Iceberg keys name, maintained by :class:`IcebergMaintenanceJob` with its ``table.maintenance.*`` keys."""

    maintenance_job = IcebergMaintenanceJob
