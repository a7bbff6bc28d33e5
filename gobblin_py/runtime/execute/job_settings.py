"""The keys of a job run itself: its name, its source, how its datasets commit, where its tasks write and how it
replays; the runtime reads them, no plugin does (the few a plugin may read are in :mod:`gobblin_py.sdk.job_keys`)."""

from __future__ import annotations

from dataclasses import dataclass

from gobblin_py.sdk.job_keys import CommitPolicySettings
from gobblin_py.sdk.settings import Kind, Settings, same_as, setting


@dataclass(frozen=True)
class JobSettings(Settings):
    """Keys the launcher reads."""

    name: str = setting("job.name", kind=Kind.NAME, required=True,
                        doc="the job's name: it names its state folder and its lock")
    job_id: str | None = setting("job.id", kind=Kind.NAME, default_doc="job_<name>_<millis>",
                                 doc="a fixed run id (only with AT_LEAST_ONCE delivery); it names the run's folders")
    source_class: str = setting("source.class", required=True, doc="the Source that plans the job's work units")
    fail_on_empty: bool = setting("job.fail.on.empty", default=False,
                                  doc="a run whose source finds nothing at all to pull (a pattern matching no file, "
                                      "an empty file list) fails with exit code 4 naming why; false: a first run "
                                      "that finds nothing warns, a later one says why")
    task_data_root: str | None = setting("task.data.root.dir",
                                         doc="root of each run's task-staging and task-output folders")
    staging_dir: str | None = setting("writer.staging.dir", default_doc="<task.data.root.dir>/<job>/<run>/task-staging",
                                      doc="where writers stage files")
    output_dir: str | None = setting("writer.output.dir", default_doc="<task.data.root.dir>/<job>/<run>/task-output",
                                     doc="where a task's committed files wait to be published")

    def check(self) -> list:
        from gobblin_py.sdk.config_errors import ConfigError

        if not self.task_data_root and not (self.staging_dir and self.output_dir):
            return [ConfigError("is not set", key="task.data.root.dir",
                                hint="set it, or both writer.staging.dir and writer.output.dir")]
        return []


@dataclass(frozen=True)
class CommitSettings(Settings):
    """Keys of how a run's datasets commit."""

    commit_policy: str = same_as(CommitPolicySettings, "commit_policy")
    partial_fails_job: bool = setting("job.commit.partial.fail.task.fails.job.commit", default=False,
                                      doc="under successful/partial, a failed task still fails the job")
    parallel_commit: bool = setting("job.commit.parallelize", default=True, doc="commit datasets in parallel")
    commit_threads: int | None = setting("job.commit.parallelCommits", minimum=1, maximum=1024,
                                         default_doc="20; 1 when the state store and data.publisher.final.dir are "
                                                     "on local disk",
                                         doc="threads committing datasets in parallel")
    publisher: str | None = setting("data.publisher.type", default_doc="BaseDataPublisher",
                                    doc="the publisher of the job's datasets")
    job_publisher: str | None = setting("data.publisher.job.type", doc="overrides data.publisher.type")


@dataclass(frozen=True)
class ReplaySettings(Settings):
    """Keys of startpoints and timestamp replay."""

    store_dir: str | None = setting("gobblin.startpoint.store.dir", default_doc="<state.store.dir>/_startpoints",
                                    doc="where operators' startpoints wait for the next run")
    timestamp_filter: bool = setting("startpoint.timestamp.filter", default=True,
                                     doc="a run replaying from a time drops records with an earlier event time")
    max_pairs: int = setting("gpy.replay.pairs.max", default=1000, minimum=1, maximum=1_000_000,
                             doc="(watermark, event time) pairs kept per partition for timestamp replay")
