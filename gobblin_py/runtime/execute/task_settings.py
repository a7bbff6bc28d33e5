"""The keys of a task: retries, the fork and its queues, the writer of each branch."""

from __future__ import annotations

from dataclasses import dataclass

from gobblin_py.sdk.settings import Scope, Settings, setting

DEFAULT_WRITER_BUILDER = "gobblin_py.connectors.files.builder.FsDataWriterBuilder"
DEFAULT_FORK_OPERATOR = "gobblin_py.transforms.forks.identity.IdentityForkOperator"


@dataclass(frozen=True)
class TaskSettings(Settings):
    """The keys of a task: retries, the fork and its queues, the writer of each branch."""

    max_retries: int = setting("task.maxretries", default=5, minimum=0, maximum=100,
                               doc="retries of a failed task, each with fresh plugins (Gobblin's default); "
                                   "none after a permanent failure, nor once the run's gpy.retry.budget.seconds "
                                   "is spent")
    retry_interval_s: float = setting("task.retry.intervalinsec", default=300.0, minimum=0, maximum=86400,
                                      doc="the k-th retry waits (k-1) times this many seconds, within the run's "
                                          "gpy.retry.budget.seconds")
    fork_operator: str = setting("fork.operator.class", default=DEFAULT_FORK_OPERATOR,
                                 default_doc="IdentityForkOperator", doc="routes records to the branches")
    queue_capacity: int = setting("fork.record.queue.capacity", default=100, minimum=1, maximum=100000,
                                  doc="batches queued per branch when a task has several (back pressure)")
    queue_timeout_ms: float = setting("fork.record.queue.timeout", default=1000.0, minimum=1,
                                      doc="milliseconds a put or get waits before checking the branch is alive")
    writer_builder: str = setting("writer.builder.class", default=DEFAULT_WRITER_BUILDER, scope=Scope.BRANCH,
                                  default_doc="FsDataWriterBuilder", doc="builds each branch's writer")
