"""What a run did to one dataset: its tasks' outcome, what it published and committed, for the summary, the
history and the exit code."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

from gobblin_py.runtime.execute.dataset_outputs import (
    DATA_FAILURE_KEY,
    BranchOutput,
    attempt_records,
    branch_outputs,
    first_start_ms,
    task_counts,
    task_errors,
    usage_errors,
)
from gobblin_py.sdk.run_states import DatasetState
from gobblin_py.sdk.states import RunningState, TaskState
from gobblin_py.store.startpoints import used_startpoints


@dataclass
class DatasetResult:
    """What happened to one dataset in a run (for the summary and the exit code)."""

    urn: str
    state: RunningState
    tasks: int
    failed_tasks: int
    records_extracted: int
    records_written: int
    published: list[str] = field(default_factory=list)
    commits: list[str] = field(default_factory=list)  # what its commit made (a table's snapshot), once it ran
    persisted: bool = False
    error: str | None = None
    low_watermarks: list = field(default_factory=list)
    high_watermarks: list = field(default_factory=list)
    partitions: list[list[int]] = field(default_factory=list)  # per task, the partitions its watermarks cover
    quality: list[str] = field(default_factory=list)
    commit_pending: bool = False  # its commit log is left for the next run: keep this run's output files
    branches: list[BranchOutput] = field(default_factory=list)  # per fork branch: records, files, bytes published
    task_errors: list[str] = field(default_factory=list)  # one line per failed task
    task_attempts: list[dict] = field(default_factory=list)  # every failed attempt of each task that had one
    usage_errors: list[str] = field(default_factory=list)  # failed tasks the configuration or input failed (exit 2)
    data_errors: list[str] = field(default_factory=list)  # failed tasks a value of their input failed (exit 65)
    started_ms: int = 0  # its first task's start
    ended_ms: int = 0  # the end of its commit
    saved: DatasetState | None = None  # the state this run saved as the dataset's latest
    startpoints: list[dict] = field(default_factory=list)  # the operators' startpoints its tasks were planned from
    task_counts: list[dict] = field(default_factory=list)  # per task: records read and written, bytes, times
    schema: str | None = None  # its first branch's schema as its tasks wrote it (extract.schema: JSON fields)

    @property
    def files(self) -> int:
        return sum(b.files for b in self.branches)

    @property
    def bytes_written(self) -> int:
        return sum(b.bytes_written for b in self.branches)

    @property
    def seconds(self) -> float:
        return max(0, self.ended_ms - self.started_ms) / 1000 if self.ended_ms else 0.0


def quality_lines(tasks: list[TaskState]) -> list[str]:
    """Task-policy outcomes and rows dropped by row policies, summed over the dataset's tasks."""
    outcomes: dict[tuple[str, str, str], int] = {}
    dropped: dict[tuple[str, str], int] = {}
    for task in tasks:
        for key, value in task.properties.items():
            if key.startswith("qualitychecker.task.policy.results"):
                for item in json.loads(value):
                    name = (item["policy"].rsplit(".", 1)[-1], item["type"], item["result"])
                    outcomes[name] = outcomes.get(name, 0) + 1
            elif key.startswith("qualitychecker.row.policy.results"):
                for item in json.loads(value):
                    row_policy = (item["policy"].rsplit(".", 1)[-1], item["type"])
                    dropped[row_policy] = dropped.get(row_policy, 0) + item["failed_rows"]
    lines = [f"task policy {p} ({t}): {r} in {n} task(s)" for (p, t, r), n in sorted(outcomes.items())]
    lines += [f"row policy {p} ({t}): {n} row(s) failed" for (p, t), n in sorted(dropped.items()) if n]
    return lines


def describe_outputs(result: DatasetResult, tasks: list[TaskState], run_started_ms: int) -> DatasetResult:
    """``result`` with what its tasks wrote per branch, its failed tasks' causes and when it started and ended."""
    result.branches = branch_outputs(tasks)
    result.task_errors = task_errors(tasks)
    result.task_attempts = attempt_records(tasks)
    result.usage_errors = [*usage_errors(tasks), *result.usage_errors]  # the publisher's own, if it had any
    result.data_errors = usage_errors(tasks, DATA_FAILURE_KEY)
    result.started_ms = first_start_ms(tasks, run_started_ms)
    result.startpoints = used_startpoints(tasks)
    result.task_counts = task_counts(tasks)
    result.schema = next((s for t in tasks for s in [t.get_prop("extract.schema") or t.get_prop("extract.schema.0")]
                          if s), None)
    result.ended_ms = int(time.time() * 1000)
    return result
