"""Iceberg table maintenance as a job (``job.class=IcebergMaintenanceJob``): the table's snapshots older than
``table.maintenance.retention.hours`` are expired, in one metadata commit through pyiceberg's
``table.maintenance.expire_snapshots()``; then the files under the table's location that no snapshot or metadata
file references and that are older than the retention are deleted (:mod:`.orphans`, tables on local disk). The
current snapshot, tags and branch heads are never expired, and the table properties gpy's replay finds a run's
commit by (``gpy.commit.<hash>``) stay.

Not built: rewriting small files (pyiceberg 0.12 has no rewrite), orphan files on object stores. A kill mid-run
leaves the table at the metadata it had or at the new one (the catalog swaps the metadata pointer atomically) and
deletes only unreferenced files. ``gpy run --dry-run`` lists the snapshots that would be expired and the files
that are orphans now.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from gobblin_py.connectors.iceberg.catalog import open_catalog
from gobblin_py.connectors.iceberg.orphans import orphan_files
from gobblin_py.connectors.iceberg.publisher import table_name
from gobblin_py.connectors.iceberg.settings import IcebergSettings, table_identifier
from gobblin_py.connectors.tables.maintenance import (
    ENFORCE_KEY,
    ICEBERG_MINIMUM_HOURS,
    RETENTION_KEY,
    RetentionSettings,
    problems_of,
)
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.contracts import StandaloneJob
from gobblin_py.sdk.crash_points import phase
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.states import State


def _identifier(props: Mapping[str, str]) -> tuple[str, ...]:
    name, key = table_name(State(dict(props)), 1, 0)
    return table_identifier(name, key)


def expirable(table: Any, cutoff_ms: int) -> list[Any]:
    """The snapshots of ``table`` older than ``cutoff_ms`` that no branch or tag (the current one included)
    points at, oldest first."""
    protected = {ref.snapshot_id for ref in table.metadata.refs.values()}
    return [s for s in table.snapshots() if s.timestamp_ms < cutoff_ms and s.snapshot_id not in protected]


class IcebergMaintenanceJob(StandaloneJob):
    """Expires an Iceberg table's snapshots older than a retention (see the module)."""

    settings_class = RetentionSettings

    @classmethod
    def validate(cls, props: Mapping[str, str]) -> list[ConfigError]:
        return problems_of(lambda: (IcebergSettings.load(props), _identifier(props)))

    def run(self, props: Mapping[str, str], dry_run: bool) -> list[str]:
        settings = RetentionSettings.load(props)
        if settings.enforce_retention and settings.retention_hours < ICEBERG_MINIMUM_HOURS:
            raise UsageError(f"{RETENTION_KEY}={settings.retention_hours}: shorter than {ICEBERG_MINIMUM_HOURS} h, "
                             "the least an Iceberg table's unreferenced files are kept (a writer's files wait in "
                             f"the table's folder for its commit). Set {ENFORCE_KEY}=false to delete them anyway")
        identifier = _identifier(props)
        name = ".".join(identifier)
        table = open_catalog(props).load_table(identifier)
        cutoff_ms = int((time.time() - settings.retention_hours * 3600) * 1000)
        expired = expirable(table, cutoff_ms)
        verb = "would expire" if dry_run else "expired"
        lines = [f"{verb}  snapshot {s.snapshot_id} of "
                 f"{datetime.fromtimestamp(s.timestamp_ms / 1000, timezone.utc):%Y-%m-%d %H:%M:%S} UTC"
                 for s in expired]
        if expired and not dry_run:
            with phase("table.expire"):
                table.maintenance.expire_snapshots().by_ids([s.snapshot_id for s in expired]).commit()
        lines.append(f"{len(expired)} snapshot(s) of {name} older than {settings.retention_hours} h "
                     + ("would be expired (dry run)" if dry_run else "expired"))
        orphans = orphan_files(open_catalog(props).load_table(identifier), time.time() - settings.retention_hours * 3600)
        if orphans is None:
            return lines + [f"files of {name} no snapshot references are kept: orphan-file removal is built for "
                            "tables on local disk only"]
        if not dry_run:
            with phase("table.orphans"):
                for path in orphans:
                    os.remove(path)
        verb = "would delete" if dry_run else "deleted"
        lines += [f"{verb}  {path}" for path in orphans]
        lines.append(f"{len(orphans)} file(s) no snapshot references, older than {settings.retention_hours} h, "
                     + ("would be deleted (dry run; the files of the snapshots expired now are not counted)"
                        if dry_run else "deleted"))
        return lines
