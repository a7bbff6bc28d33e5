"""Iceberg table maintenance as a job (``job.class=IcebergMaintenanceJob``): the table's snapshots older than
``table.maintenance.retention.hours`` are expired, in one metadata commit through pyiceberg's
``table.maintenance.expire_snapshots()``. The current snapshot, tags and branch heads are never expired, and the
table properties gpy's replay finds a run's commit by (``gpy.commit.<hash>``) stay.

Not built: deleting the files only expired snapshots referenced (orphan files) and rewriting small files; pyiceberg
0.12 does neither. A kill mid-run leaves the table at the metadata it had or at the new one (the catalog swaps
the metadata pointer atomically). ``gpy run --dry-run`` lists the snapshots that would be expired.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from gobblin_py.connectors.iceberg.catalog import open_catalog
from gobblin_py.connectors.iceberg.publisher import table_name
from gobblin_py.connectors.iceberg.settings import IcebergSettings, table_identifier
from gobblin_py.connectors.tables.maintenance import RetentionSettings
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.contracts import StandaloneJob
from gobblin_py.sdk.crash_points import phase
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.settings import SettingsError
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
        try:
            IcebergSettings.load(props)
            _identifier(props)
        except SettingsError as exc:
            return list(exc.problems)
        except UsageError as exc:
            return [exc if isinstance(exc, ConfigError) else ConfigError(str(exc))]
        return []

    def run(self, props: Mapping[str, str], dry_run: bool) -> list[str]:
        settings = RetentionSettings.load(props)
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
                     + ("would be expired (dry run)" if dry_run else "expired")
                     + "; no data file is deleted (orphan-file removal is not built for Iceberg)")
        return lines
