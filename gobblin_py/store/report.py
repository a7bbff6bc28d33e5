"""What ``gpy state show`` and ``gpy state history`` print: plain data for ``--json``, a table for people."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from gobblin_py.sdk.run_states import PUBLISHED_KEY, DatasetState
from gobblin_py.sdk.states import TaskState
from gobblin_py.sdk.watermarks import by_partition, partition_ids, to_compact_json
from gobblin_py.store import progress
from gobblin_py.store.store import FsDatasetStateStore, StoredRun

RECORDS_EXTRACTED_KEY = "qualitychecker.rows.extracted"
RECORDS_WRITTEN_KEY = "writer.records.written"


def iso_time(epoch_ms: int) -> str | None:
    """An epoch-millisecond time as ISO 8601 UTC; None for Gobblin's 'not set' values (0 and -1)."""
    if epoch_ms <= 0:
        return None
    stamp = dt.datetime.fromtimestamp(epoch_ms / 1000, tz=dt.timezone.utc)
    return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _int_or_none(value: str | None) -> int | None:
    try:
        return None if value is None else int(value)
    except ValueError:
        return None


def _json_or_text(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def _partitions(summary: dict[str, Any], ids: list[int]) -> list[dict[str, Any]]:
    """Each partition's low, expected and actual high watermarks, by partition number (empty for tasks of no
    partitions, or whose watermarks do not have one entry per partition)."""
    rows = by_partition(ids, summary["low_watermark"], summary["expected_high_watermark"],
                        summary["actual_high_watermark"]) or []
    return [{"partition": p, "low": low, "expected_high": high, "actual_high": actual} for p, low, high, actual in rows]


def task_summary(task: TaskState) -> dict[str, Any]:
    summary = _task_summary(task)
    summary["partitions"] = _partitions(summary, partition_ids(task.workunit.get_prop))
    return summary


def _task_summary(task: TaskState) -> dict[str, Any]:
    interval = task.workunit.watermark_interval
    return {
        "task_id": task.task_id,
        "working_state": task.working_state.value,
        "low_watermark": interval.low_json if interval else _json_or_text(task.get_prop("workunit.low.water.mark")),
        "expected_high_watermark": (
            interval.expected_high_json if interval else _json_or_text(task.get_prop("workunit.high.water.mark"))
        ),
        "actual_high_watermark": task.actual_high_watermark()
        if interval or "workunit.state.actual.high.water.mark" in task.properties
        else _json_or_text(task.get_prop("workunit.state.runtime.high.water.mark")),
        "records_extracted": _int_or_none(task.get_prop(RECORDS_EXTRACTED_KEY)),
        "records_written": _int_or_none(task.get_prop(RECORDS_WRITTEN_KEY)),
        "start_time": iso_time(task.start_time),
        "end_time": iso_time(task.end_time),
        "duration_ms": task.task_duration,
    }


def dataset_summary(job_name: str, urn: str, state: DatasetState, path: str) -> dict[str, Any]:
    return {
        "job": job_name,
        "urn": urn,
        "job_id": state.job_id,
        "state": state.state.value,
        "start_time": iso_time(state.start_time),
        "end_time": iso_time(state.end_time),
        "duration_ms": state.duration,
        "task_count": state.task_count,
        "job_failures": state.job_failures,
        "file": path,
        "published": json.loads(state.get_prop(PUBLISHED_KEY) or "[]"),
        "completeness": completeness_summary(state),
        "tasks": sorted((task_summary(task) for task in state.all_task_states()), key=_first_partition),
    }


def _first_partition(task: dict[str, Any]) -> float:
    """Tasks of partitions in the order of their first partition's number; the others keep their place, last."""
    return task["partitions"][0]["partition"] if task["partitions"] else float("inf")


def completeness_summary(state: DatasetState) -> dict[str, Any] | None:
    """The dataset's completeness watermark and each partition's committed event-time progress (None if none)."""
    watermark = progress.completeness(state)
    partitions = progress.partition_event_progress(state)
    if watermark is None and not partitions:
        return None
    return {"watermark_ms": watermark, "watermark": iso_time(watermark) if watermark is not None else None,
            "partitions": {p: {"ms": ms, "time": iso_time(ms)} for p, ms in sorted(partitions.items())}}


def show(store: FsDatasetStateStore, job_names: list[str], urn: str | None = None) -> list[dict[str, Any]]:
    """Summaries of the latest state of each dataset of each job (or only of dataset ``urn``)."""
    rows = []
    for job in job_names:
        if urn:  # one dataset: read its own current file only
            state = store.get_latest_dataset_state(job, urn)
            latest = {urn: state} if state is not None else {}
        else:
            latest = store.get_latest_dataset_states_by_urns(job)
        for dataset_urn in sorted(latest):
            if urn is not None and dataset_urn != urn:
                continue
            path = store.location(job, store.current_table_name(dataset_urn))
            rows.append(dataset_summary(job, dataset_urn, latest[dataset_urn], path))
    return rows


def history(store: FsDatasetStateStore, job_names: list[str], urn: str) -> list[dict[str, Any]]:
    rows = []
    for job in job_names:
        run: StoredRun
        for run in store.history(job, urn):
            summary = dataset_summary(job, urn, run.state, run.path)
            summary.pop("tasks")
            rows.append(summary)
    return rows


def watermark_text(value: Any) -> str:
    """A watermark's JSON value as people read it: the number, the time, or compact JSON."""
    if value is None:
        return "-"
    if isinstance(value, dict) and "value" in value and isinstance(value.get("time"), str):
        return value["time"]  # a time watermark that carries its readable form
    if isinstance(value, dict) and set(value) == {"value"}:
        return str(value["value"])
    if isinstance(value, dict) and set(value) == {"values"}:
        return "[" + ",".join(str(v) for v in value["values"]) + "]"
    return to_compact_json(value) if not isinstance(value, str) else value


def _table(header: list[str], rows: list[list[str]], indent: str = "    ") -> list[str]:
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    return [
        indent + "  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in [header, *rows]
    ]


def _count(value: int | None) -> str:
    return "-" if value is None else str(value)


def _task_table(tasks: list[dict[str, Any]]) -> list[str]:
    """The tasks' watermarks and counts; for tasks of partitions (Kafka) one row per partition, by partition
    number, a task's counts on its first row."""
    header = ["task", "state", "low", "expected high", "actual high", "extracted", "written"]
    if not any(t["partitions"] for t in tasks):
        return _table(header, [[t["task_id"], t["working_state"], watermark_text(t["low_watermark"]),
                                watermark_text(t["expected_high_watermark"]), watermark_text(t["actual_high_watermark"]),
                                _count(t["records_extracted"]), _count(t["records_written"])] for t in tasks]) \
            if tasks else []
    rows: list[tuple[float, list[str]]] = []
    for t in tasks:
        marks = [(p["partition"], p["low"], p["expected_high"], p["actual_high"]) for p in t["partitions"]] or \
            [(float("inf"), t["low_watermark"], t["expected_high_watermark"], t["actual_high_watermark"])]
        for i, (partition, low, high, actual) in enumerate(marks):
            counts = [_count(t["records_extracted"]), _count(t["records_written"])] if i == 0 else ["", ""]
            rows.append((partition, [t["task_id"], "-" if partition == float("inf") else str(partition),
                                     t["working_state"], watermark_text(low), watermark_text(high),
                                     watermark_text(actual), *counts]))
    rows.sort(key=lambda r: r[0])
    return _table([header[0], "partition", *header[1:]], [cells for _, cells in rows])


def render_show(rows: list[dict[str, Any]], store_url: str) -> str:
    if not rows:
        return f"no dataset state in {store_url}"
    lines: list[str] = []
    for row in rows:
        urn = row["urn"] if row["urn"] else '"" (default)'
        lines.append(f"job {row['job']}  dataset {urn}")
        seconds = row["duration_ms"] / 1000
        lines.append(
            f"  last run  {row['job_id']}  {row['state']}  {row['start_time'] or '-'} → {row['end_time'] or '-'}"
            f" ({seconds:.3f} s)  tasks {row['task_count']}  job failures {row['job_failures']}"
        )
        lines.append(f"  file      {row['file']}")
        for place in row.get("published") or []:  # a table: its commit by this run carries the run's job id
            lines.append(f"  published {place}")
        complete = row.get("completeness")
        if complete and complete["watermark"]:
            lagging = min(complete["partitions"].items(), key=lambda item: item[1]["ms"], default=None)
            behind = f" (held by partition {lagging[0]!r})" if lagging and len(complete["partitions"]) > 1 else ""
            lines.append(f"  complete  up to {complete['watermark']}{behind}")
        lines += _task_table(row["tasks"])
        lines.append("")
    return "\n".join(lines).rstrip()


def render_history(rows: list[dict[str, Any]], urn: str) -> str:
    if not rows:
        return f"no stored runs of dataset {urn!r}"
    table = [
        [r["job"], r["job_id"], r["state"], r["start_time"] or "-", r["end_time"] or "-", str(r["task_count"]), r["file"]]
        for r in rows
    ]
    return "\n".join(_table(["job", "job id", "state", "start", "end", "tasks", "file"], table, indent=""))
