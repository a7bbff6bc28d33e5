"""The run history as people read it: a list of runs, newest first, and one run in full."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gobblin_py.store.run_history import effective_status
from gobblin_py.store.startpoints import used_text


def _seconds(value: Any) -> str:
    return f"{float(value):.1f} s" if value is not None else "-"


def _count(value: Any) -> str:
    return f"{int(value or 0):,}"


def list_rows(records: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One summary row per run (what ``gpy history --json`` prints)."""
    rows = []
    for record in records:
        datasets = record.get("datasets") or []
        rows.append({
            "run_id": record.get("run_id"), "started": record.get("started"), "ended": record.get("ended"),
            "seconds": record.get("seconds"), "status": effective_status(record), "exit_code": record.get("exit_code"),
            "engine": record.get("engine"), "datasets": len(datasets),
            "records_read": sum(int(d.get("records_read") or 0) for d in datasets),
            "records_written": sum(int(d.get("records_written") or 0) for d in datasets),
            "message": record.get("message") or record.get("error") or "",
        })
    return rows


def render_list(job: str, rows: Sequence[Mapping[str, Any]], where: str) -> str:
    """An aligned table of runs, newest first."""
    if not rows:
        return f"{job}: no runs recorded yet (under {where})"
    header = ["RUN ID", "STARTED", "DURATION", "STATUS", "EXIT", "DATASETS", "READ", "WRITTEN", "NOTE"]
    table = [[str(r["run_id"]), str(r["started"] or "-"), _seconds(r["seconds"]), str(r["status"]),
              "-" if r["exit_code"] is None else str(r["exit_code"]), str(r["datasets"]), _count(r["records_read"]),
              _count(r["records_written"]), str(r["message"]).splitlines()[0][:60] if r["message"] else ""]
             for r in rows]
    widths = [max(len(row[i]) for row in [header, *table]) for i in range(len(header))]
    lines = [f"{job}: {len(rows)} run(s), newest first"]
    for row in [header, *table]:
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    return "\n".join(lines)


def render_run(record: Mapping[str, Any]) -> str:
    """One run in full: its outcome, then each dataset with its branches, watermarks and errors."""
    status = effective_status(record)
    code = record.get("exit_code")
    lines = [
        f"run {record.get('run_id')} of job {record.get('job')}",
        f"  status    {status}" + (f" (exit {code})" if code is not None else ""),
        f"  started   {record.get('started') or '-'} on {record.get('host')} (pid {record.get('pid')}), "
        f"engine {record.get('engine')}",
        f"  ended     {record.get('ended') or 'not recorded'}" +
        (f"  ({_seconds(record.get('seconds'))})" if record.get("seconds") is not None else ""),
    ]
    for label in ("message", "error"):
        if record.get(label):
            lines.append(f"  {label:<9} {record[label]}")
    lines += [f"  warning   {line}" for line in record.get("warnings") or []]
    datasets = record.get("datasets") or []
    if not datasets:
        lines.append("  no dataset committed or failed in this run")
    for d in datasets:
        urn = d.get("urn") or '"" (default)'
        ok = int(d.get("tasks") or 0) - int(d.get("failed_tasks") or 0)
        lines.append(
            f"  dataset {urn}: {d.get('state')}  tasks {ok}/{d.get('tasks')} committed  read {_count(d.get('records_read'))}"
            f"  written {_count(d.get('records_written'))}  files {d.get('files', 0)}  bytes {_count(d.get('bytes'))}"
            f"  {_seconds(d.get('seconds'))}  state {'saved' if d.get('state_saved') else 'unchanged'}")
        for branch in d.get("branches") or []:
            lines.append(f"    branch {branch.get('name')}: written {_count(branch.get('records_written'))}  "
                         f"files {branch.get('files')}  bytes {_count(branch.get('bytes_written'))}")
        low, high = d.get("watermark_from") or [], d.get("watermark_to") or []
        if low or high:
            lines.append(f"    watermark {', '.join(low) or '-'} → {', '.join(high) or '-'}")
        lines += [f"    startpoint {used_text(u)}" for u in d.get("startpoints") or []]
        lines += [f"    quality: {q}" for q in d.get("quality") or []]
        lines += [f"    published {p}" for p in d.get("published") or []]
        lines += [f"    committed {c}" for c in d.get("commits") or []]
        if d.get("error"):
            lines.append(f"    error: {d['error']}")
        lines += [f"    failed task {e}" for e in d.get("task_errors") or []]
        for task in d.get("task_attempts") or []:
            for a in task.get("attempts") or []:
                wait = a.get("retry_in_s")
                then = f"retried after {float(wait):g} s" if wait is not None else "not retried"
                lines.append(f"    task {task.get('task')} attempt {a.get('attempt')}: {a.get('kind')}, {then} — "
                             f"{a.get('error')}")
    return "\n".join(lines)
