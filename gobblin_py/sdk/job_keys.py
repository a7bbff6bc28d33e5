"""The few keys of the runtime a plugin may read: the job's commit policy (which of the previous run's work units a
source runs again depends on it) and how many tasks run at once (a source may size its work units to them).

The runtime's other keys (the job's name and folders, how datasets commit, replay) are declared in the runtime
(:mod:`gobblin_py.runtime.execute.job_settings`); a plugin does not read them.
"""

from __future__ import annotations

from dataclasses import dataclass

from gobblin_py.sdk.settings import Settings, setting

COMMIT_POLICIES = ("full", "successful", "partial")


@dataclass(frozen=True)
class CommitPolicySettings(Settings):
    """The job's commit policy: which of a dataset's tasks a run publishes."""

    commit_policy: str = setting("job.commit.policy", default="full", choices=COMMIT_POLICIES,
                                 doc="full: a dataset with a failed task publishes nothing; successful/partial: its "
                                     "successful tasks are published")


@dataclass(frozen=True)
class TaskSlotSettings(Settings):
    """How many of a job's tasks run at once on ``--engine local``: the engine's keys, declared here, below the
    runtime, so a source may size its work units to them."""

    threads: int = setting("taskexecutor.threadpool.size", default=2, minimum=1, maximum=1024,
                           doc="tasks run at once by --engine local")
    processes: int = setting("gpy.taskexecutor.processes", default=0, minimum=0, maximum=1024,
                             doc="--engine local: run tasks in this many worker processes instead of threads "
                                 "(0: threads); for many small tasks or tasks that spend their time in Python")

    @property
    def slots(self) -> int:
        """Tasks run at once: the worker processes when the job asks for them, else the task threads."""
        return self.processes or self.threads
