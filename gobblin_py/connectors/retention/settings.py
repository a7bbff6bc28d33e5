"""The keys of the retention job, Gobblin's names: the dataset finder, the selection policy and its parameters,
and the version finder of published datasets."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.settings import Settings, same_as, setting
from gobblin_py.store.mysql_db import MysqlStoreSettings

FINDER_KEY = "gobblin.retention.dataset.finder.class"
POLICY_KEY = "gobblin.retention.selection.policy.class"
VERSION_FINDER_KEY = "gobblin.retention.version.finder.class"
COMBINE_KEY = "gobblin.retention.selection.combine.policy.classes"
STATE_LOOKBACK_KEY = "selection.timeBased.lookbackTime"
LOOKBACK_KEY = "gobblin.retention.selection.timeBased.lookbackTime"
MIN_LOOKBACK_KEY = "gobblin.retention.selection.timeBased.minLookbackTime"
MAX_LOOKBACK_KEY = "gobblin.retention.selection.timeBased.maxLookbackTime"
NEWEST_KEY = "gobblin.retention.selection.newestK.versionsSelected"
NEWEST_NOT_KEY = "gobblin.retention.selection.newestK.versionsNotSelected"
OPERATION_KEY = "gobblin.retention.selection.combine.operation"
PATTERN_KEY = "gobblin.retention.dataset.pattern"
DATETIME_PATTERN_KEY = "gobblin.retention.version.datetime.pattern"
STORE_TYPE_KEY = "state.store.type"
_PERIOD_DOC = "a period as 30d, 18h, 1d12h, 30m (y years, M months, d days, h hours, m minutes)"


@dataclass(frozen=True)
class CleanerSettings(Settings):
    """The keys of :class:`DatasetCleanerJob` (Gobblin's retention keys)."""

    finder: str = setting(FINDER_KEY, required=True,
                          example="org.apache.gobblin.data.management.retention.dataset.finder."
                                  "TimeBasedDatasetStoreDatasetFinder",
                          doc="what is cleaned: TimeBasedDatasetStoreDatasetFinder (the state store's run files), "
                              "GlobCleanableDatasetFinder (published dataset versions), IcebergTableDatasetFinder "
                              "or DeltaTableDatasetFinder (the tables the job's Iceberg or Delta publisher keys "
                              "name, maintained by the table.maintenance.* keys)")
    simulate: bool = setting("gobblin.retention.simulate", default=False,
                             doc="list what would be deleted, delete nothing (as gpy run --dry-run)")
    state_lookback: str | None = setting(STATE_LOOKBACK_KEY, doc="state-store runs written longer ago than this "
                                         f"are deleted: {_PERIOD_DOC}")
    store_name: str | None = setting("datasetStoreDatasetFinder.filter.storeName",
                                     doc="only this job's state (its job.name); default: every job in the store")
    store_type: str = setting(STORE_TYPE_KEY, default="fs", choices=("fs", "mysql"),
                              doc="the state store cleaned: fs (state.store.dir) or mysql (a Gobblin "
                                  "MysqlDatasetStateStore, state.store.db.*)")
    db_url: str | None = same_as(MysqlStoreSettings, "url")
    db_user: str | None = same_as(MysqlStoreSettings, "user")
    db_password: str | None = same_as(MysqlStoreSettings, "password")
    db_table: str = same_as(MysqlStoreSettings, "table")
    policy: str | None = setting(POLICY_KEY, doc="the selection policy: SelectBeforeTimeBasedPolicy, "
                                 "SelectBetweenTimeBasedPolicy, NewestKSelectionPolicy, CombineSelectionPolicy, "
                                 "SelectAllPolicy, SelectNothingPolicy")
    lookback: str | None = setting(LOOKBACK_KEY, doc=f"SelectBeforeTimeBasedPolicy: versions older than this; {_PERIOD_DOC}")
    min_lookback: str | None = setting(MIN_LOOKBACK_KEY, doc="SelectBetweenTimeBasedPolicy: only versions older "
                                       "than this (default: now)")
    max_lookback: str | None = setting(MAX_LOOKBACK_KEY, doc="SelectBetweenTimeBasedPolicy: only versions newer "
                                       "than this (default: any age)")
    newest: int | None = setting(NEWEST_KEY, minimum=1, maximum=1_000_000, default_doc="2",
                                 doc="NewestKSelectionPolicy: select the newest k versions")
    newest_not: int | None = setting(NEWEST_NOT_KEY, minimum=1, maximum=1_000_000,
                                     doc="NewestKSelectionPolicy: select all but the newest k versions")
    combined: str | None = setting(COMBINE_KEY, doc="CombineSelectionPolicy: the policies combined (a list)")
    operation: str | None = setting(OPERATION_KEY, doc="CombineSelectionPolicy: intersect or union")
    pattern: str | None = setting(PATTERN_KEY, aliases=("gobblin.dataset.pattern",), example="/data/published/shop/*",
                                  doc="GlobCleanableDatasetFinder: glob of the dataset folders whose versions are "
                                      "cleaned")
    blacklist: re.Pattern | None = setting("gobblin.retention.dataset.blacklist",
                                           aliases=("gobblin.dataset.blacklist",),
                                           doc="a dataset whose path contains a match is not cleaned")
    version_finder: str | None = setting(VERSION_FINDER_KEY, doc="how a dataset's versions are found: "
                                         "DateTimeDatasetVersionFinder (folders named by date)")
    datetime_pattern: str | None = setting(DATETIME_PATTERN_KEY, example="yyyy/MM/dd",
                                           doc="the Joda date pattern of the version folders, below the dataset; a "
                                               "folder <date>_append (a publish's extract id) is read as <date>")
    timezone: str = setting("gobblin.retention.version.datetime.timezone", default="America/Los_Angeles",
                            doc="time zone of the version folders' dates (Gobblin's default)")
    version_glob: str | None = setting("gobblin.retention.version.globPattern",
                                       doc="glob of the version folders below a dataset (default: the date pattern "
                                           "with each part a *; * when it ends in _append)")

    def check(self) -> list[ConfigError]:
        problems = []
        if self.newest is not None and self.newest_not is not None:
            problems.append(ConfigError("only one of it and " + NEWEST_KEY + " can be set", key=NEWEST_NOT_KEY))
        if self.operation is not None and self.operation.strip().lower() not in ("intersect", "union"):
            problems.append(ConfigError(f"{self.operation!r} is not intersect or union", key=OPERATION_KEY))
        return problems
