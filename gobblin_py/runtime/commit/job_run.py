"""One run of a job: what its launcher, its tasks' planning and each dataset's commit share."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from gobblin_py.runtime.commit.commit_sequence import CommitSequenceStore
from gobblin_py.runtime.execute.job_settings import CommitSettings, ReplaySettings
from gobblin_py.sdk.run_states import DatasetState
from gobblin_py.store import FsDatasetStateStore
from gobblin_py.store.startpoints import StartpointStore


@dataclass
class JobRun:
    """A run: its properties (with its own folders and ``job.id``), ids, start, state store and commit log.

    ``store`` is None when the job keeps no state (``state.store.enabled=false``); ``sequences`` is None unless
    datasets commit exactly once. ``previous`` holds each dataset's latest committed state, by URN;
    ``startpoints`` the store of operators' startpoints (None without a state store). Its settings are read
    once: a run's properties do not change once it has begun.
    """

    props: dict[str, str]
    job_name: str
    job_id: str
    started_ms: int
    store: FsDatasetStateStore | None = None
    sequences: CommitSequenceStore | None = None
    previous: dict[str, DatasetState] = field(default_factory=dict)
    startpoints: StartpointStore | None = None

    @cached_property
    def commit_settings(self) -> CommitSettings:
        return CommitSettings.load(self.props)

    @cached_property
    def replay_settings(self) -> ReplaySettings:
        return ReplaySettings.load(self.props)
