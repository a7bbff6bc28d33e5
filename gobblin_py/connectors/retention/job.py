"""Gobblin's ``DatasetCleanerJob``: a job file with ``job.class=…DatasetCleanerJob`` runs retention instead of an
ingestion pipeline.

Its ``gobblin.retention.dataset.finder.class`` says what is cleaned:

- ``TimeBasedDatasetStoreDatasetFinder``: the state store (``state.store.dir``, or with ``state.store.type=mysql``
  the rows of a Gobblin MySQL store, :mod:`.mysql_store`): each job's run files written
  before ``selection.timeBased.lookbackTime`` (Gobblin's ``TimeBasedDatasetStoreDataset``), or as a
  ``gobblin.retention.selection.policy.class`` selects; a dataset's ``current`` state and the run it copies are
  never deleted (:mod:`gobblin_py.store.retention`);
- ``GlobCleanableDatasetFinder``: published dataset versions (:mod:`.versions`);
- ``IcebergTableDatasetFinder``, ``DeltaTableDatasetFinder``: the Iceberg or Delta tables the job's table keys
  name (those of the publisher that wrote them): the table maintenance job of that format is run on them, with its
  ``table.maintenance.*`` keys (:func:`table_job`).

``gobblin.retention.simulate=true`` or ``gpy run --dry-run`` lists what would be deleted and deletes nothing.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from gobblin_py.connectors.retention.folder_naming import folder_naming_warnings
from gobblin_py.connectors.retention.mysql_store import check_connection, delete_rows, plan_rows, where
from gobblin_py.connectors.retention.policies import policy_class
from gobblin_py.connectors.retention.settings import (
    FINDER_KEY,
    POLICY_KEY,
    STATE_LOOKBACK_KEY,
    VERSION_FINDER_KEY,
    CleanerSettings,
)
from gobblin_py.connectors.retention.versions import (
    DateTimeDatasetVersionFinder,
    GlobCleanableDatasetFinder,
    delete_versions,
    plan_versions,
)
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.contracts import StandaloneJob
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.plugins import resolve_class
from gobblin_py.sdk.settings import SettingsError
from gobblin_py.store.retention import Lookback, Policy, delete_state_files, plan_state_clean, select_before
from gobblin_py.store.store import FsDatasetStateStore, StateStoreSettings


class TimeBasedDatasetStoreDatasetFinder:
    """Gobblin's ``TimeBasedDatasetStoreDatasetFinder``: every job's run files in the state store are versions of
    their dataset, timestamped by when they were written."""


def table_job(finder: type) -> type[StandaloneJob] | None:
    """The job that maintains the tables a table dataset finder names (its ``maintenance_job``: the Iceberg and
    Delta finders are declared beside their formats' maintenance jobs, a layer above this one); None for any other
    finder."""
    job = getattr(finder, "maintenance_job", None)
    return job if isinstance(job, type) and issubclass(job, StandaloneJob) else None


def _state_policy(settings: CleanerSettings) -> Policy:
    if settings.policy:
        return policy_class(settings.policy, POLICY_KEY).policy(settings)
    if not settings.state_lookback:
        raise UsageError(f"{STATE_LOOKBACK_KEY}: is not set; state-store runs older than it are deleted "
                         f"(or name a {POLICY_KEY})")
    return select_before(Lookback.parse(settings.state_lookback, STATE_LOOKBACK_KEY))


def _version_policy(settings: CleanerSettings) -> Policy:
    if not settings.policy:
        raise UsageError(f"{POLICY_KEY}: is not set; which versions to delete (SelectBeforeTimeBasedPolicy with "
                         "gobblin.retention.selection.timeBased.lookbackTime, say)")
    if not settings.version_finder or resolve_class(settings.version_finder, VERSION_FINDER_KEY) \
            is not DateTimeDatasetVersionFinder:
        raise UsageError(f"{VERSION_FINDER_KEY}: set it to DateTimeDatasetVersionFinder (version folders named by "
                         "date)")
    DateTimeDatasetVersionFinder(settings)  # its keys checked before any work
    return policy_class(settings.policy, POLICY_KEY).policy(settings)


class DatasetCleanerJob(StandaloneJob):
    """Gobblin's ``DatasetCleanerJob``: deletes old state-store entries or old published dataset versions."""

    settings_class = CleanerSettings
    plugin_keys = (FINDER_KEY, POLICY_KEY, "gobblin.retention.selection.combine.policy.classes", VERSION_FINDER_KEY)

    @classmethod
    def validate(cls, props: Mapping[str, str]) -> list[ConfigError]:
        try:
            settings = CleanerSettings.load(props)
            finder = resolve_class(settings.finder, FINDER_KEY)
        except (SettingsError, UsageError):
            return []  # reported by the key and plugin checks
        tables = table_job(finder)
        if tables is not None:
            return list(tables.settings_class.problems(props)) or tables.validate(props)
        problems: list[ConfigError] = []
        try:
            if finder is TimeBasedDatasetStoreDatasetFinder:
                if settings.store_type == "mysql":
                    check_connection(settings)
                else:
                    problems = StateStoreSettings.problems(props)
                _state_policy(settings)
                return problems
            if finder is GlobCleanableDatasetFinder:
                _version_policy(settings)
                return [*problems, *folder_naming_warnings(settings)]
        except SettingsError as exc:
            return problems + list(exc.problems)
        except UsageError as exc:
            return problems + [exc if isinstance(exc, ConfigError) else ConfigError(str(exc))]
        return [ConfigError(f"{settings.finder} is not a retention dataset finder", key=FINDER_KEY,
                            hint="use TimeBasedDatasetStoreDatasetFinder, GlobCleanableDatasetFinder, "
                                 "IcebergTableDatasetFinder or DeltaTableDatasetFinder")]

    def run(self, props: Mapping[str, str], dry_run: bool) -> list[str]:
        settings = CleanerSettings.load(props)
        dry_run = dry_run or settings.simulate
        verb = "would delete" if dry_run else "deleted"
        now = time.time()
        finder = resolve_class(settings.finder, FINDER_KEY)
        tables = table_job(finder)
        if tables is not None:
            return tables().run(props, dry_run)
        if finder is GlobCleanableDatasetFinder:
            policy = _version_policy(settings)
            cutoff = policy_class(settings.policy, POLICY_KEY).newest_selected(settings, now)  # type: ignore[arg-type]
            versions = plan_versions(settings, policy, now, cutoff)
            count = len(versions.deletions) if dry_run else delete_versions(versions.fs, versions.root,
                                                                            versions.deletions)
            lines = [f"{verb}  {v.path}" for v in versions.deletions] + [f"kept  {k.describe()}" for k in versions.kept]
            return lines + [f"{count} dataset version(s) under {versions.root} {verb}"
                            + (" (dry run)" if dry_run else "")
                            + (f"; {len(versions.kept)} kept: modified within the lookback" if versions.kept else "")]
        if settings.store_type == "mysql":
            rows = plan_rows(settings, _state_policy(settings), settings.store_name, now)
            count = len(rows) if dry_run else delete_rows(settings, rows)
            lines = [f"{verb}  {row.store}/{row.table}" for row in rows]
            return lines + [f"{count} state row(s) of {where(settings)} {verb}"
                            + (" (dry run)" if dry_run else "")]
        store = FsDatasetStateStore.from_properties(props)
        plan = plan_state_clean(store, _state_policy(settings), [settings.store_name] if settings.store_name else None,
                                now)
        count = len(plan) if dry_run else delete_state_files(store, plan)
        lines = [f"{verb}  {store.display_path(d.path)}" for d in plan]
        return lines + [f"{count} state file(s) under {store.url} {verb}" + (" (dry run)" if dry_run else "")]
