"""The end-of-run summary as a table on a terminal: one row per dataset and fork branch.

The table fits the terminal's width (the terminal's own size, else ``COLUMNS``, else 80). Numbers and
states are never cut: names and watermarks wrap, and on a narrow terminal the less important columns (duration,
bytes, files, then watermarks) leave the table for a line per dataset below it.

Off a terminal ``gpy run`` prints the plain summary (:mod:`gobblin_py.runtime.commit.summary`) and logs one
``dataset_summary`` event per dataset, carrying what the run history records of it.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from rich.console import Console
from rich.table import Table
from rich.text import Text

from gobblin_py.runtime.commit.dataset_result import DatasetResult
from gobblin_py.runtime.commit.job_result import JobResult
from gobblin_py.runtime.commit.summary import render, watermark_ranges
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.states import RunningState

log = get_logger("gpy.summary")

_STATE_STYLE = {RunningState.COMMITTED: "green", RunningState.FAILED: "bold red"}
WRAPPED_MIN = 8  # the narrowest a name column is allowed when the table is laid out


@dataclass(frozen=True)
class _Column:
    name: str
    justify: str
    whole: bool  # numbers and states: never wrapped nor cut
    drop_rank: int  # 0: always shown; otherwise dropped on a narrow terminal, lowest rank first


_COLUMNS = (
    _Column("dataset", "left", False, 0), _Column("status", "left", True, 0), _Column("tasks", "right", True, 0),
    _Column("rows in", "right", True, 0), _Column("branch", "left", False, 0),
    _Column("rows out", "right", True, 0), _Column("files", "right", True, 3), _Column("bytes", "right", True, 2),
    _Column("watermark from → to", "left", False, 4), _Column("duration", "right", True, 1),
)
_WATERMARKS = 8  # its words (numbers) stay whole too


def _marks(d: DatasetResult) -> str:
    ranges = watermark_ranges(d)
    return "\n".join(ranges) if ranges else "-"


def _rows(d: DatasetResult) -> list[list[str]]:
    """The dataset's cells, column by column: its first branch on its row, each other branch on one of its own."""
    branches = d.branches or []
    first = branches[0] if branches else None
    rows = [[d.urn or '"" (default)', d.state.value, f"{d.tasks - d.failed_tasks}/{d.tasks}",
             f"{d.records_extracted:,}", first.name if first else "-",
             f"{(first.records_written if first else d.records_written):,}", f"{first.files if first else 0:,}",
             f"{first.bytes_written if first else 0:,}", _marks(d), f"{d.seconds:.1f} s"]]
    for branch in branches[1:]:
        rows.append(["", "", "", "", branch.name, f"{branch.records_written:,}", f"{branch.files:,}",
                     f"{branch.bytes_written:,}", "", ""])
    return rows


def _longest(cells: list[str], words: bool) -> int:
    """The longest line (or word) of ``cells``."""
    return max([0] + [len(part) for cell in cells for line in cell.splitlines()
                      for part in (line.split() if words else [line])])


def _widths(rows: list[list[str]], width: int) -> dict[int, int] | None:
    """The width of each column shown within ``width``: whole columns at their longest value (their header may
    wrap), wrapping ones sharing the rest, never below their longest word (or :data:`WRAPPED_MIN` for names).
    The least important columns are dropped until that fits; None when even the rest does not."""
    cells = {i: [r[i] for r in rows] + [column.name] for i, column in enumerate(_COLUMNS)}
    shown = list(range(len(_COLUMNS)))
    for rank in [0, *sorted({c.drop_rank for c in _COLUMNS} - {0})]:
        shown = [i for i in shown if _COLUMNS[i].drop_rank != rank or rank == 0]
        least = {i: _longest(cells[i], True) if _COLUMNS[i].whole or i == _WATERMARKS
                 else min(WRAPPED_MIN, _longest(cells[i], False)) for i in shown}
        spare = width - (sum(least.values()) + 3 * len(shown) + 1)  # a column's padding and border: 3
        if spare >= 0:
            break
    else:
        return None
    for i in shown:  # columns grow towards their longest line (a header on one line), in order, while there is room
        grow = min(spare, max(0, _longest(cells[i], False) - least[i]))
        least[i] += grow
        spare -= grow
    return least


def summary_table(result: JobResult, width: int = 200) -> tuple[Table, list[str]] | None:
    """Rows in and out per branch, files, bytes, watermark from → to, duration and status of each dataset, as
    fits ``width`` columns, and the names of the columns left out; None when ``width`` is too narrow for a table."""
    title = (f"job {result.job_name}  {result.job_id}  {result.state.value}  {result.seconds:.1f} s  "
             f"engine {result.engine}  exit {result.exit_code}")
    rows = [row for d in result.datasets for row in _rows(d)]
    widths = _widths(rows, width)
    if widths is None:
        return None
    caption = "\n".join([result.message, *(f"warning: {w}" for w in result.warnings)]).strip()
    table = Table(title=title, title_justify="left", caption=caption or None, caption_justify="left")
    for i, column_width in widths.items():
        column = _COLUMNS[i]
        table.add_column(column.name, justify=column.justify, width=column_width,  # type: ignore[arg-type]
                         overflow="fold")
    states = {d.urn or '"" (default)': d.state for d in result.datasets}
    shown = list(widths)
    for row in rows:
        cells: list[str | Text] = [row[i] for i in shown]
        if row[1]:
            cells[shown.index(1)] = Text(row[1], style=_STATE_STYLE.get(states[row[0]], ""))
        table.add_row(*cells)
    return table, [_COLUMNS[i].name for i in range(len(_COLUMNS)) if i not in widths]


def _left_out(d: DatasetResult, rows: list[list[str]], names: list[str]) -> str:
    """The values of the columns the table left out, for one dataset (per branch where they differ)."""
    parts = []
    for name in names:
        i = next(k for k, c in enumerate(_COLUMNS) if c.name == name)
        values = [row[i] for row in rows if row[i]]
        if len(values) > 1:
            shown = ", ".join(f"{row[4]} {row[i]}" for row in rows)
        else:
            shown = ", ".join(v.replace("\n", ", ") for v in values)
        parts.append(f"{'watermarks' if i == _WATERMARKS else name} {shown}")
    return "  ".join(parts)


def terminal_width() -> int | None:
    """Stdout's terminal's own width; None off a terminal. (Rich takes ``COLUMNS`` first, which a shell may
    have exported before the window was resized.)"""
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns or None
    except (OSError, ValueError, AttributeError):
        return None


def print_summary_table(result: JobResult, console: Console | None = None) -> None:
    """The summary table, then each dataset's left-out columns, errors, published paths and quality lines, on
    ``console`` (stdout)."""
    console = console or Console(width=terminal_width())
    laid_out = summary_table(result, console.width)
    if laid_out is None:  # narrower than any table: the plain summary, wrapped
        console.print(render(result), highlight=False)
        return
    table, left_out = laid_out
    console.print(table)
    for d in result.datasets:
        urn = d.urn or '"" (default)'
        if left_out:
            console.print(f"  {urn}: {_left_out(d, _rows(d), left_out)}", highlight=False)
        if d.error:
            console.print(Text(f"  {urn} error: {d.error}", style="red"))
        for line in d.quality:
            console.print(f"  {urn} quality: {line}", highlight=False)
        for path in d.published:
            console.print(f"  {urn} published {path}", highlight=False, soft_wrap=True)
        for made in d.commits:
            console.print(f"  {urn} committed {made}", highlight=False, soft_wrap=True)
