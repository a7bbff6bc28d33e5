"""The keys of table maintenance, declared once: the size small files are compacted into and how long files no
longer referenced by a table (Delta) or old snapshots (Iceberg) are kept."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.settings import Settings, SettingsError, setting

TARGET_SIZE_KEY = "table.maintenance.target.file.size"
RETENTION_KEY = "table.maintenance.retention.hours"
ENFORCE_KEY = "table.maintenance.enforce.retention"
MIB = 1024 * 1024
ICEBERG_MINIMUM_HOURS = 168  # an Iceberg table states no minimum: a week, as Delta's default


@dataclass(frozen=True)
class RetentionSettings(Settings):
    """The retention of the table maintenance jobs: how long what a table no longer needs is kept."""

    retention_hours: int = setting(RETENTION_KEY, default=168, minimum=0, maximum=100 * 365 * 24,
                                   doc="hours: Delta: files the table no longer references are deleted once they "
                                       "have been unreferenced this long; Iceberg: snapshots older than this are "
                                       "expired (never the current one) and files none of its snapshots "
                                       "references, older than this, deleted; readers of older versions need "
                                       "them until then")
    enforce_retention: bool = setting(ENFORCE_KEY, default=True,
                                      doc="refuse a retention shorter than the table's minimum before deleting "
                                          "files: Delta's delta.deletedFileRetentionDuration (7 days unless the "
                                          "table says otherwise); Iceberg: 7 days (a writer's files wait in the "
                                          "table's folder for its commit); false: delete after the retention "
                                          "given, however short")


@dataclass(frozen=True)
class MaintenanceSettings(RetentionSettings):
    """The keys of the table maintenance jobs: the target file size and the retention of unreferenced files."""

    target_size: int = setting(TARGET_SIZE_KEY, default=128 * MIB, minimum=MIB, maximum=16 * 1024 * MIB,
                               doc="bytes: the table's smaller files are rewritten into files of about this size, "
                                   "in one commit")


def problems_of(check: Callable[[], object]) -> list[ConfigError]:
    """What ``check`` (loading a job's table keys) finds wrong, as configuration problems: none when it passes."""
    try:
        check()
    except SettingsError as exc:
        return list(exc.problems)
    except UsageError as exc:
        return [exc if isinstance(exc, ConfigError) else ConfigError(str(exc))]
    return []
