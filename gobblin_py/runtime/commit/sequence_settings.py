"""The keys of the commit log of exactly-once commits: where unfinished commits are logged, how often an earlier
run's commit is tried again, and how many datasets one log holds. The runtime reads them; no plugin does."""

from __future__ import annotations

from dataclasses import dataclass

from gobblin_py.sdk.settings import Settings, setting

STORE_DIR_KEY = "gobblin.runtime.commit.sequence.store.dir"
STORE_FS_URI_KEY = "gobblin.runtime.commit.sequence.store.fs.uri"
MAX_RETRIES_KEY = "gobblin.runtime.commit.sequence.max.retries"
BATCH_SIZE_KEY = "gobblin.runtime.commit.sequence.batch.size"


@dataclass(frozen=True)
class CommitSequenceSettings(Settings):
    """The keys of exactly-once commits."""

    store_dir: str | None = setting(STORE_DIR_KEY, default_doc="<state.store.dir>/_commit_sequences",
                                    doc="where unfinished commits are logged")
    store_fs_uri: str | None = setting(STORE_FS_URI_KEY, default_doc="state.store.fs.uri",
                                       doc="filesystem of a bare commit sequence store dir")
    max_retries: int = setting(MAX_RETRIES_KEY, default=3, minimum=1, maximum=100,
                               doc="tries to finish an earlier run's commit before its dataset is skipped (the "
                                   "waits between them within the run's gpy.retry.budget.seconds)")
    batch_size: int = setting(BATCH_SIZE_KEY, default=100, minimum=1, maximum=10_000,
                              doc="most datasets one commit log holds when a run commits many (1: a log each)")
