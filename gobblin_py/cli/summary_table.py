"""The end-of-run summary as a table on a terminal: one row per dataset and fork branch.

Off a terminal ``gpy run`` prints the plain summary (:mod:`gobblin_py.runtime.commit.summary`) and logs one
``dataset_summary`` event per dataset, carrying what the run history records of it.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from gobblin_py.runtime.commit.history import dataset_record
from gobblin_py.runtime.commit.job_result import JobResult
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.states import RunningState

log = get_logger("gpy.summary")

_STATE_STYLE = {RunningState.COMMITTED: "green", RunningState.FAILED: "bold red"}


def _watermarks(values: list[str]) -> str:
    return ", ".join(values) if values else "-"


def summary_table(result: JobResult) -> Table:
    """Rows in and out per branch, files, bytes, watermark from → to, duration and status of each dataset."""
    title = (f"job {result.job_name}  {result.job_id}  {result.state.value}  {result.seconds:.1f} s  "
             f"engine {result.engine}  exit {result.exit_code}")
    table = Table(title=title, title_justify="left", caption="\n".join([result.message, *(f"warning: {w}" for w in result.warnings)]).strip() or None, caption_justify="left")
    for name, justify in (("dataset", "left"), ("status", "left"), ("tasks", "right"), ("rows in", "right"),
                          ("branch", "left"), ("rows out", "right"), ("files", "right"), ("bytes", "right"),
                          ("watermark from → to", "left"), ("duration", "right")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for d in result.datasets:
        record = dataset_record(d)
        branches = d.branches or []
        tasks = f"{d.tasks - d.failed_tasks}/{d.tasks}"
        status = Text(d.state.value, style=_STATE_STYLE.get(d.state, ""))
        marks = f"{_watermarks(record['watermark_from'])} → {_watermarks(record['watermark_to'])}"
        first = branches[0] if branches else None
        table.add_row(d.urn or '"" (default)', status, tasks, f"{d.records_extracted:,}",
                      first.name if first else "-", f"{(first.records_written if first else d.records_written):,}",
                      f"{first.files if first else 0:,}", f"{first.bytes_written if first else 0:,}", marks,
                      f"{d.seconds:.1f} s")
        for branch in branches[1:]:
            table.add_row("", "", "", "", branch.name, f"{branch.records_written:,}", f"{branch.files:,}",
                          f"{branch.bytes_written:,}", "", "")
        if d.error:
            table.add_row("", Text(f"error: {d.error}", style="red"), *[""] * 8)
    return table


def print_summary_table(result: JobResult, console: Console | None = None) -> None:
    """The summary table, then each dataset's published paths and quality lines, on ``console`` (stdout)."""
    console = console or Console()
    console.print(summary_table(result))
    for d in result.datasets:
        urn = d.urn or '"" (default)'
        for line in d.quality:
            console.print(f"  {urn} quality: {line}", highlight=False)
        for path in d.published:
            console.print(f"  {urn} published {path}", highlight=False, soft_wrap=True)
