"""What each dataset of a run wrote, per fork branch: records, files and bytes, read from its task states.

The summary table, the run history and the progress display show these; they come from Gobblin's per-branch
counters on each task state (``writer.records.written[.i]``, ``writer.final.output.file.paths[.i]``,
``writer.bytes.written[.i]``), so they are the same numbers a Gobblin user would look for.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from gobblin_py.sdk.branches import branch_key, branch_name
from gobblin_py.sdk.states import TaskState, WorkingState

MAX_ERRORS = 10  # failed tasks named per dataset: enough to see the pattern, short enough to read
# set on a failed task's state when its failure is the user's configuration or input (a UsageError, a corrupt
# file): rerunning cannot help until a person fixes the job, so the run exits 2. It travels with the TaskState
# from threads, worker processes and Spark executors alike.
USAGE_FAILURE_KEY = "gpy.task.failure.usage"
# likewise when it is a value of the input that does not fit (a DataError): the run exits 65 with this message
DATA_FAILURE_KEY = "gpy.task.failure.data"
# a task's failed attempts (JSON: attempt number, error, kind, the wait before the next) and the kind of its last
# failure (transient, permanent or unknown: see gobblin_py.sdk.failures), set by the task runner on every engine
ATTEMPTS_KEY = "gpy.task.attempts"
FAILURE_KIND_KEY = "gpy.task.failure.kind"
BUDGET_SPENT_KEY = "gpy.task.retry.budget.spent"  # why a retryable failure was not retried: the run's budget


@dataclass
class BranchOutput:
    """One fork branch of a dataset: what its committed tasks wrote."""

    name: str
    records_written: int = 0
    files: int = 0
    bytes_written: int = 0

    def as_json(self) -> dict:
        # spelt out: dataclasses.asdict deep-copies field by field, once per dataset of a run's history and log
        return {"name": self.name, "records_written": self.records_written, "files": self.files,
                "bytes_written": self.bytes_written}


def int_value(value: object) -> int:
    """A task property read as a whole number: 0 when absent or not a number."""
    try:
        return int(str(value)) if value is not None else 0
    except ValueError:
        return 0


def branch_count(task: TaskState) -> int:
    """How many branches the task forked into (1 when it never got that far)."""
    return max(1, int_value(task.get_prop("fork.branches")) or 1)


def written_by_branch(task: TaskState) -> dict[str, int]:
    """Rows each branch of one task wrote, by branch name (whether or not the task committed)."""
    count = branch_count(task)
    return {branch_name(task, i): int_value(task.get_prop(branch_key("writer.records.written", count, i)))
            for i in range(count)}


def branch_outputs(tasks: list[TaskState]) -> list[BranchOutput]:
    """Per branch, the records, files and bytes of the tasks that committed (what was published)."""
    outputs: dict[int, BranchOutput] = {}
    for task in tasks:
        count = branch_count(task)
        for index in range(count):
            output = outputs.setdefault(index, BranchOutput(branch_name(task, index)))
            if task.working_state is not WorkingState.COMMITTED:
                continue
            key = lambda k, n=count, i=index: branch_key(k, n, i)  # noqa: E731 - Gobblin's per-branch counter keys
            output.records_written += int_value(task.get_prop(key("writer.records.written")))
            paths = task.get_prop(key("writer.final.output.file.paths")) or ""
            output.files += len([p for p in paths.split(",") if p])
            output.bytes_written += int_value(task.get_prop(key("writer.bytes.written")))
    return [outputs[i] for i in sorted(outputs)]


def task_counts(tasks: list[TaskState]) -> list[dict]:
    """Per task (committed or not): its state, records read and written, bytes written, start and end (epoch ms),
    for the metric reporters' per-task numbers."""
    counts = []
    for task in tasks:
        count = branch_count(task)
        counts.append({
            "task": task.task_id, "state": task.working_state.value,
            "records_read": int_value(task.get_prop("qualitychecker.rows.extracted")),
            "records_written": sum(written_by_branch(task).values()),
            "bytes": sum(int_value(task.get_prop(branch_key("writer.bytes.written", count, i))) for i in range(count)),
            "started_ms": task.start_time, "ended_ms": task.end_time,
        })
    return counts


def failure_line(task: TaskState) -> str:
    """The one-line cause of a failed task: its id, the last line of its recorded exception, and whether it was
    retried (``permanent (ArrowInvalid): … — not retried``, ``… — failed 6 attempts``)."""
    trace = task.get_prop("task.failure.exception") or ""
    lines = [line for line in trace.strip().splitlines() if line.strip()]
    cause = lines[-1].strip() if lines else task.working_state.value
    attempts = task_attempts(task)
    if task.get_prop(FAILURE_KIND_KEY) == "permanent":
        why = f" ({attempts[-1].get('reason')})" if attempts and attempts[-1].get("reason") else ""
        return f"{task.task_id}: permanent{why}: {cause} — not retried"
    spent = task.get_prop(BUDGET_SPENT_KEY)
    return f"{task.task_id}: {cause}" + (f" — failed {len(attempts)} attempts" if len(attempts) > 1 else "") + (
        f" — not retried: {spent}" if spent and spent not in cause else "")  # (a REST client's error says it)


def task_attempts(task: TaskState) -> list[dict]:
    """The task's failed attempts, as the task runner recorded them (none when its first attempt succeeded)."""
    try:
        attempts = json.loads(task.get_prop(ATTEMPTS_KEY) or "[]")
    except ValueError:
        return []
    return attempts if isinstance(attempts, list) else []


def attempt_records(tasks: list[TaskState]) -> list[dict]:
    """Every attempt of each task that failed one (at most :data:`MAX_ERRORS` tasks), for the run history:
    ``{"task": id, "state": ..., "attempts": [{"attempt", "error", "kind", "reason", "retry_in_s"}, ...]}``."""
    records = [{"task": t.task_id, "state": t.working_state.value, "attempts": task_attempts(t)} for t in tasks]
    return [r for r in records if r["attempts"]][:MAX_ERRORS]


def task_errors(tasks: list[TaskState]) -> list[str]:
    """One line per failed task (at most :data:`MAX_ERRORS`): its id and the last line of its exception."""
    failed = [t for t in tasks if t.working_state is WorkingState.FAILED]
    lines = [failure_line(t) for t in failed[:MAX_ERRORS]]
    if len(failed) > MAX_ERRORS:
        lines.append(f"… and {len(failed) - MAX_ERRORS} more failed task(s)")
    return lines


def usage_errors(tasks: list[TaskState], key: str = USAGE_FAILURE_KEY) -> list[str]:
    """``<task id>: <message>`` of each failed task (at most :data:`MAX_ERRORS`) whose failure was the user's
    configuration or input (``key`` :data:`DATA_FAILURE_KEY`: a value of its input)."""
    failed = [t for t in tasks if t.working_state is WorkingState.FAILED and t.get_prop(key)]
    return [f"{t.task_id}: {t.get_prop(key)}" for t in failed[:MAX_ERRORS]]


def first_start_ms(tasks: list[TaskState], default: int) -> int:
    """When the dataset's first task started (``default`` when none did)."""
    starts = [t.start_time for t in tasks if t.start_time and t.start_time > 0]
    return min(starts) if starts else default
