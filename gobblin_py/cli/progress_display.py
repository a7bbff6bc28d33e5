"""How ``gpy run`` shows a run going on a terminal: a live display (off a terminal see ``progress_log``).

On a terminal (stderr a TTY, console logs) a rich live display sits at the bottom of stderr: work units done of
planned (counted from the moment the tasks are planned), rows read, rows/s (from the first task's start), rows
written per fork branch, and while Spark starts, "starting Spark (<master>)…". Log lines (warnings, the JVM's
errors) print above it; the INFO events it shows are not printed as lines.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from gobblin_py.runtime.execute.run_progress import RunProgress, Snapshot
from gobblin_py.sdk import logs

SHOWN_EVENTS = frozenset({"task_finished"})  # what the live display shows instead of a line per task


def render_snapshot(snap: Snapshot) -> Group:
    """The live display's lines for one snapshot."""
    head = Table.grid(padding=(0, 1))
    head.add_row(
        Text("work units", style="bold"),
        ProgressBar(total=max(snap.planned, 1), completed=snap.done, width=30),
        Text(f"{snap.done}/{snap.planned}" + (f" ({snap.failed} failed)" if snap.failed else "")),
        Text(f"rows read {snap.rows_read:,}"),
        Text(f"{snap.rows_per_second:,.0f} rows/s", style="cyan"),
        Text(f"{snap.seconds:.1f} s", style="dim"),
    )
    parts: list[Any] = [head]
    if snap.status:
        parts.append(Text(f"  {snap.status}", style="yellow"))
    if snap.written:
        branches = Table.grid(padding=(0, 2))
        for name, rows in snap.written.items():
            branches.add_row(Text(f"  branch {name}"), Text(f"rows written {rows:,}", style="green"))
        parts.append(branches)
    parts += [Text(f"  {line}", style="yellow") for line in snap.retries]
    return Group(*parts)


class LiveDisplay(RunProgress):
    """The run's progress live on the terminal (use as a context manager around the run)."""

    shows_tasks = True  # executors need not log each task: the display shows them

    def __init__(self, console: Console | None = None) -> None:
        super().__init__()
        self.console = console or Console(stderr=True)
        self._live = Live(console=self.console, get_renderable=lambda: render_snapshot(self.snapshot()),
                          refresh_per_second=4, redirect_stderr=True, transient=False)

    def _take(self, level: str, event: MutableMapping[str, Any]) -> bool:
        shown = self.observe(event)
        return level == "info" and (shown or event.get("event") in SHOWN_EVENTS)

    def __enter__(self) -> LiveDisplay:
        logs.add_listener(self._take)
        self._live.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self._live.stop()  # draws the final numbers once more
        finally:
            logs.remove_listener(self._take)
