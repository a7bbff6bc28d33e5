"""The settings classes of the runtime itself (not of a plugin), in the order the key reference lists them: what
``gpy validate`` checks in every job and what ``gpy validate --explain`` calls the runtime's keys."""

from __future__ import annotations

from gobblin_py.io.fs_settings import FsSettings
from gobblin_py.jobconf.encrypted import EncryptionSettings
from gobblin_py.runtime.commit.sequence_settings import CommitSequenceSettings
from gobblin_py.runtime.engines.base import EngineSettings
from gobblin_py.runtime.engines.pack_settings import PackSettings
from gobblin_py.runtime.execute.job_settings import CommitSettings, JobSettings, ReplaySettings
from gobblin_py.runtime.execute.row_checker import RowQualitySettings
from gobblin_py.runtime.execute.task_quality import QualitySettings
from gobblin_py.runtime.execute.task_settings import TaskSettings
from gobblin_py.runtime.monitor.gobblin_reporter_settings import REPORTER_SETTINGS
from gobblin_py.runtime.monitor.settings import LineageSettings, MetricsSettings, PrometheusSettings
from gobblin_py.runtime.plan.locks import LockSettings
from gobblin_py.sdk.branches import ForkSettings
from gobblin_py.sdk.commit import DeliverySettings
from gobblin_py.sdk.job_keys import CommitPolicySettings
from gobblin_py.sdk.retry import RetrySettings
from gobblin_py.sdk.retry_budget import RetryBudgetSettings
from gobblin_py.sdk.settings import Settings
from gobblin_py.store.mysql_db import MysqlStoreSettings
from gobblin_py.store.run_history import HistorySettings
from gobblin_py.store.store import StateStoreSettings

CORE_SETTINGS: tuple[type[Settings], ...] = (
    JobSettings, CommitPolicySettings, CommitSettings, ReplaySettings, DeliverySettings, CommitSequenceSettings,
    TaskSettings, RetryBudgetSettings, EngineSettings, PackSettings, LockSettings, StateStoreSettings,
    MysqlStoreSettings, HistorySettings, FsSettings, RetrySettings, QualitySettings, RowQualitySettings, ForkSettings,
    MetricsSettings, PrometheusSettings, LineageSettings, EncryptionSettings, *REPORTER_SETTINGS,
)
