"""The end-of-run summary: one screen, one block per dataset, for people reading cron mail or Airflow logs."""

from __future__ import annotations

from typing import Any

from gobblin_py.runtime.commit.dataset_result import DatasetResult
from gobblin_py.runtime.commit.job_result import JobResult
from gobblin_py.sdk.redact import redact
from gobblin_py.sdk.watermarks import by_partition, watermark_sort_key
from gobblin_py.store.report import watermark_text
from gobblin_py.store.startpoints import used_text


def _distinct(values: list[Any]) -> list[str]:
    """Distinct watermarks as text, in their order (numbers as numbers)."""
    texts: dict[str, Any] = {}
    for value in sorted((v for v in values if v is not None), key=watermark_sort_key):
        texts.setdefault(watermark_text(value), value)
    return list(texts)


def partition_watermarks(d: DatasetResult) -> tuple[list[tuple[int, str, str]], list[str], list[str]]:
    """The dataset's watermarks: ``(partition, low, actual high)`` for each partition its tasks name, by partition
    number; then the distinct lows and highs of the tasks that name none."""
    labelled: dict[int, tuple[str, str]] = {}
    lows, highs = [], []
    for i, (low, high) in enumerate(zip(d.low_watermarks, d.high_watermarks, strict=False)):
        rows = by_partition(d.partitions[i] if i < len(d.partitions) else [], low, high)
        if rows is None:
            lows.append(low)
            highs.append(high)
        for partition, lo, hi in rows or []:
            labelled[partition] = (watermark_text(lo), watermark_text(hi))
    return [(p, *labelled[p]) for p in sorted(labelled)], _distinct(lows), _distinct(highs)


def watermark_ranges(d: DatasetResult) -> list[str]:
    """One line per partition (``partition 2: 5946 → 10188``), by partition number, and one ``lows → highs``
    line for the tasks that name no partition; empty when the dataset has no watermarks."""
    partitions, lows, highs = partition_watermarks(d)
    lines = [f"partition {p}: {low} → {high}" for p, low, high in partitions]
    if lows or highs:
        lines.append(f"{', '.join(lows) or '-'} → {', '.join(highs) or '-'}")
    return lines


def render(result: JobResult) -> str:
    lines = [
        f"job {result.job_name}  {result.job_id}  {result.state.value}  {result.seconds:.1f} s  engine {result.engine}"
        f"  exit {result.exit_code}"
    ]
    if result.message:
        lines.append(f"  {result.message}")
    lines += [f"  warning: {line}" for line in result.warnings]
    for d in result.datasets:
        urn = d.urn if d.urn else '"" (default)'
        ok = d.tasks - d.failed_tasks
        lines.append(
            f"  dataset {urn}: {d.state.value}  tasks {ok}/{d.tasks} committed  "
            f"records extracted {d.records_extracted}  written {d.records_written}"
            f"  state {'saved' if d.persisted else 'unchanged'}"
        )
        partitions, lows, highs = partition_watermarks(d)
        if partitions:
            lines.append("    watermarks by partition: " + ", ".join(f"{p}: {lo} → {hi}" for p, lo, hi in partitions))
        if lows or highs:
            lines.append(f"    watermarks low {', '.join(lows) or '-'} → actual high {', '.join(highs) or '-'}")
        for used in d.startpoints:
            lines.append(f"    startpoint {used_text(used)}")
        for line in d.quality:
            lines.append(f"    quality: {line}")
        for path in d.published:
            lines.append(f"    published {path}")
        for made in d.commits:
            lines.append(f"    committed {made}")
        if d.error:
            lines.append(f"    error: {d.error}")
    return redact("\n".join(lines))  # errors quote what failed: never a credential
