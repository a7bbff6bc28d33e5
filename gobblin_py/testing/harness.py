"""A contract's job, run for real: properties in a folder, a run in-process or as ``gpy run``, and what it left.

:class:`ContractJob` keeps a job's properties (with its own staging, output, final and state folders under one
root), the keys of every record a test made available to it, and runs it:

- :meth:`ContractJob.run` in this process through :class:`~gobblin_py.runtime.launcher.JobLauncher`, on the
  local engine or on Spark (the process's SparkSession, started once);
- :meth:`ContractJob.gpy` as the ``gpy`` command in a subprocess — what cron would do, and what a crash test
  needs (the run may kill itself at a commit boundary).

:func:`run_tasks` runs one run's tasks without committing them, for tests of a publisher's ``plan``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa

from gobblin_py.runtime.launcher import JobLauncher, JobResult
from gobblin_py.sdk.run_states import DatasetState
from gobblin_py.sdk.states import State, TaskState, WorkingState
from gobblin_py.store import FsDatasetStateStore
from gobblin_py.testing.outputs import keys_under, read_tree

SPARK_MASTER = "local[2]"


def escape(value: str) -> str:
    """A value as a Java properties file must spell it to read it back unchanged."""
    return (value.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")
            .replace("\t", "\\t").replace("\f", "\\f"))


class ContractJob:
    """One job in a folder of its own: ``data/`` for inputs, ``published/``, ``state/``, staging and output.

    ``expected`` collects the keys of every record made available to the job so far; ``key_columns`` names
    the published columns those keys are read back from.
    """

    def __init__(self, root: Path, props: Mapping[str, str | None], key_columns: Iterable[str] = ("id",),
                 name: str = "ContractJob") -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.data = self.root / "data"
        self.data.mkdir(exist_ok=True)
        self.final = self.root / "published"
        self.state_dir = self.root / "state"
        self.file = self.root / "job.pull"
        self.key_columns = tuple(key_columns)
        self.expected: list[Any] = []
        #: the keys of each batch of data made available, in order (``expected`` is their concatenation)
        self.batch_keys: list[list[Any]] = []
        self.batches = 0
        self.runs = 0
        self.props: dict[str, str] = {
            "job.name": name,
            "writer.staging.dir": str(self.root / "staging"),
            "writer.output.dir": str(self.root / "output"),
            "data.publisher.final.dir": str(self.final),
            "state.store.dir": str(self.state_dir),
            "writer.output.format": "PARQUET",
            "task.maxretries": "0",
            "taskexecutor.threadpool.size": "2",
        }
        self.set(**props)

    @property
    def name(self) -> str:
        return self.props["job.name"]

    def set(self, **props: str | None) -> ContractJob:
        """Set (or, with None, remove) properties and rewrite the job file."""
        for key, value in props.items():
            if value is None:
                self.props.pop(key, None)
            else:
                self.props[key] = str(value)
        self.file.write_text("".join(f"{key}={escape(value)}\n" for key, value in self.props.items()))
        return self

    def update(self, props: Mapping[str, str | None]) -> ContractJob:
        """:meth:`set` for keys that are not Python names."""
        return self.set(**dict(props))

    # ------------------------------------------------------------------ running

    def run(self, engine: str = "local", **props: str | None) -> JobResult:
        """Run the job in this process (``props`` override the job's for this run only)."""
        run_props = {k: v for k, v in {**self.props, **props}.items() if v is not None}
        self.runs += 1
        master = SPARK_MASTER if engine == "spark" else None
        return JobLauncher(run_props, engine=engine, master=master).run()

    def gpy(self, *args: str, env: Mapping[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
        """The ``gpy`` command in a subprocess, e.g. ``job.gpy("run", str(job.file), "--engine", "local")``."""
        return subprocess.run([sys.executable, "-m", "gobblin_py.cli", *args], capture_output=True, text=True,
                              env={**os.environ, **(env or {})}, timeout=timeout)

    def run_cli(self, engine: str = "local", env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess:
        """``gpy run JOB --engine ENGINE`` in a subprocess (each ``--engine spark`` run starts its own JVM)."""
        self.runs += 1
        return self.gpy("--log-format", "json", "run", str(self.file), "--engine", engine, env=env)

    # ------------------------------------------------------------------ what it left

    def published(self) -> pa.Table:
        """Every row published under the final folder, read by its files' formats."""
        return read_tree(self.final)

    def published_keys(self) -> list[Any]:
        """The key of every published row (duplicates kept)."""
        return keys_under(self.final, self.key_columns)

    def dataset_states(self) -> dict[str, DatasetState]:
        """Each dataset's latest committed state, by URN (empty when the job keeps none)."""
        if not self.state_dir.exists():
            return {}
        return FsDatasetStateStore(str(self.state_dir)).get_latest_dataset_states_by_urns(self.name)

    def pending_commits(self) -> list[Path]:
        """Commit sequences left for the next run to finish."""
        root = self.state_dir / "_commit_sequences"
        return sorted(root.rglob("*.json")) if root.exists() else []


def run_tasks(job: ContractJob, previous: Mapping[str, DatasetState] | None = None) -> tuple[dict[str, str], list[TaskState]]:
    """Plan a run of ``job`` and run its tasks on the local engine, committing nothing.

    Returns the run's properties (with its own staging and output folders and ``job.id``) and the tasks' states,
    as the launcher would hand them to the publisher.
    """
    from gobblin_py.runtime.engines.base import task_groups
    from gobblin_py.runtime.engines.local import LocalEngine
    from gobblin_py.runtime.plan.run_folders import RunFolders
    from gobblin_py.sdk.contracts import Source
    from gobblin_py.sdk.plugins import canonical_plugin_props, instantiate
    from gobblin_py.sdk.run_states import SourceState

    millis = int(time.time() * 1000)
    job_id = f"job_{job.name}_{millis}"
    props = canonical_plugin_props(job.props)
    run_props = RunFolders({**props, "job.id": job_id}, job.name, job_id).job_props()
    source: Source = instantiate(run_props["source.class"], "source.class", Source)  # type: ignore[assignment]
    units = source.get_workunits(SourceState(run_props, previous_dataset_states=dict(previous or {})))
    states = LocalEngine().run(run_props, job_id, task_groups(units, job.name, millis))
    job_state = State(run_props)
    for task in states:
        task.job_state = job_state
    return run_props, states


def successful(tasks: Iterable[TaskState]) -> list[TaskState]:
    """The tasks whose attempt succeeded (what a publisher is given)."""
    return [t for t in tasks if t.working_state is WorkingState.SUCCESSFUL]
