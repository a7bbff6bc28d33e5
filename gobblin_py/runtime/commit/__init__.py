"""Committing a run's datasets: each dataset's publisher steps and new state logged as one commit sequence and
run (exactly once), an earlier run's unfinished commits finished first, the run's history and summary, and the
crash points the crash tests kill runs at."""

from __future__ import annotations

import importlib
import warnings
from typing import Any

_DATASETS_NAMES = frozenset({
    "DEFAULT_PUBLISHER", "DatasetResult", "FINAL_DIR_KEY", "LoggedCommit", "REMOTE_COMMIT_THREADS", "commit_batch",
    "commit_dataset", "commit_policy", "commit_threads", "describe_outputs", "group_by_urn", "quality_lines",
})


def __getattr__(name: str) -> Any:
    # ``gobblin_py.runtime.commit`` was one module before it became this package: its names keep resolving, with a
    # warning, for one release
    if name not in _DATASETS_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(f"gobblin_py.runtime.commit.{name} moved to gobblin_py.runtime.commit.datasets.{name}",
                  DeprecationWarning, stacklevel=2)
    return getattr(importlib.import_module("gobblin_py.runtime.commit.datasets"), name)
