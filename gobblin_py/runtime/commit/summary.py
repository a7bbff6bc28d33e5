"""The end-of-run summary: one screen, one block per dataset, for people reading cron mail or Airflow logs."""

from __future__ import annotations

from gobblin_py.runtime.commit.job_result import JobResult
from gobblin_py.store.report import watermark_text
from gobblin_py.store.startpoints import used_text


def render(result: JobResult) -> str:
    lines = [
        f"job {result.job_name}  {result.job_id}  {result.state.value}  {result.seconds:.1f} s  engine {result.engine}"
        f"  exit {result.exit_code}"
    ]
    if result.message:
        lines.append(f"  {result.message}")
    for d in result.datasets:
        urn = d.urn if d.urn else '"" (default)'
        ok = d.tasks - d.failed_tasks
        lines.append(
            f"  dataset {urn}: {d.state.value}  tasks {ok}/{d.tasks} committed  "
            f"records extracted {d.records_extracted}  written {d.records_written}"
            f"  state {'saved' if d.persisted else 'unchanged'}"
        )
        lows = sorted({watermark_text(w) for w in d.low_watermarks} - {"-"})
        highs = sorted({watermark_text(w) for w in d.high_watermarks} - {"-"})
        if lows or highs:
            lines.append(f"    watermarks low {', '.join(lows) or '-'} → actual high {', '.join(highs) or '-'}")
        for used in d.startpoints:
            lines.append(f"    startpoint {used_text(used)}")
        for line in d.quality:
            lines.append(f"    quality: {line}")
        for path in d.published:
            lines.append(f"    published {path}")
        if d.error:
            lines.append(f"    error: {d.error}")
    return "\n".join(lines)
