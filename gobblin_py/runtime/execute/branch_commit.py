"""The end of a task: each branch judged by its task-level policies, then every branch's writer committed.

If a ``FAIL`` policy fails and ``data.quality.enforce.failure`` is true, no branch commits (the task fails).
The task state gets Gobblin's per-branch counters (``qualitychecker.rows.written[.i]``,
``writer.records.written[.i]``, ``writer.bytes.written[.i]``, ``writer.final.output.file.paths[.i]``, ``fork.state[.i]``), the branch's output
schema (``extract.schema[.i]``, for the next run's schema-compatibility check) and the policy results.
"""

from __future__ import annotations

import json

import pyarrow as pa

from gobblin_py.runtime.execute import task_quality
from gobblin_py.runtime.execute.fork import Branch
from gobblin_py.sdk.branches import branch_key, fork_key
from gobblin_py.sdk.commit import FILE_RECORDS_KEY
from gobblin_py.sdk.contracts import CountedOutput
from gobblin_py.sdk.errors import GobblinPyError
from gobblin_py.sdk.states import TaskState, WorkUnitState


class TaskPolicyFailure(GobblinPyError):
    """A FAIL-type task policy failed and ``data.quality.enforce.failure`` is true."""


def schema_json(schema: pa.Schema) -> str:
    """A stable text form of a schema, stored as ``extract.schema`` for schema-compatibility checks."""
    return json.dumps([{"name": f.name, "type": str(f.type), "nullable": f.nullable} for f in schema],
                      separators=(",", ":"))


def _judge(task: TaskState, branch: Branch | None, index: int, count: int) -> tuple[str, list[dict]] | None:
    """Record branch ``index``'s counters and schema; evaluate its task policies (None when it has none)."""
    key = lambda k: branch_key(k, count, index)  # noqa: E731 - Gobblin's per-branch counter keys
    written = branch.writer.records_written if branch is not None and branch.writer is not None else 0
    expected = task.get_prop("qualitychecker.rows.expected")
    task.set_prop(key("qualitychecker.rows.written"), written)
    state = WorkUnitState(task.workunit, {"qualitychecker.rows.written": str(written),
                                          "qualitychecker.rows.expected": str(expected)}, job_state=task)
    if branch is not None:
        task.set_prop(key("extract.schema"), schema_json(branch.schema))
        state.set_prop("extract.schema", task.get_prop(key("extract.schema")))
        previous = task.get_prop(key("previous.extract.schema"))
        if previous:
            state.set_prop("previous.extract.schema", previous)
        if branch.row_checker is not None:
            task.set_prop(fork_key("qualitychecker.row.policy.results", index), json.dumps(branch.row_checker.results()))
    policies = task_quality.build_task_policies(task, count, index)
    if not policies:
        return None
    status, results = task_quality.evaluate(policies, state)
    task.set_prop(key("qualitychecker.task.policy.results"), json.dumps(results))
    return status, results


def commit_branches(task: TaskState, branches: list[Branch | None]) -> None:
    """Evaluate each branch's task policies, then commit every writer (or none when a FAIL policy blocks)."""
    count = len(branches)
    verdicts = {index: _judge(task, branch, index, count) for index, branch in enumerate(branches)}
    statuses = [v[0] for v in verdicts.values() if v is not None]
    if statuses:
        overall = "FAILED" if "FAILED" in statuses else "NOT_EVALUATED" if "NOT_EVALUATED" in statuses else "PASSED"
        task.set_prop("gobblin.task.level.policy.result", overall)
    blocked = [(i, v[1]) for i, v in verdicts.items() if v is not None and v[0] == "FAILED"]
    if blocked and task_quality.enforce(task):
        failed = "; ".join(
            f"branch {i}: " + ", ".join(r["policy"] for r in results if r["result"] == "FAILED" and r["type"] == "FAIL")
            for i, results in blocked
        )
        raise TaskPolicyFailure(f"task-level quality policy failed ({failed}); data.quality.enforce.failure=true")
    total_records = total_bytes = 0
    for index, branch in enumerate(branches):
        key = lambda k, index=index: branch_key(k, count, index)  # noqa: E731
        outputs: list[str] = []
        if branch is not None and branch.writer is not None:
            try:
                outputs = branch.writer.commit()
            finally:
                branch.writer.cleanup()
            if isinstance(branch.writer, CountedOutput):
                task.set_prop(key(FILE_RECORDS_KEY), json.dumps(branch.writer.file_records(), separators=(",", ":")))
            total_records += branch.writer.records_written
            total_bytes += branch.writer.bytes_written
            task.set_prop(key("writer.records.written"), branch.writer.records_written)
            task.set_prop(key("writer.bytes.written"), branch.writer.bytes_written)
        if branch is not None:
            branch.check_written()  # after the commit: some writers count only acknowledged records
        if outputs:
            task.set_prop(key("writer.final.output.file.paths"), ",".join(outputs))
        task.set_prop(key("fork.state"), "COMMITTED" if branch is not None else "ABSENT")
    task.set_prop("writer.records.written", total_records)
    task.set_prop("writer.bytes.written", total_bytes)
