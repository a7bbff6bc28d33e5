"""Reading the run summary's table as a user sees it."""

from __future__ import annotations


def summary_cells(header: str, row: str) -> dict[str, str]:
    """A row of the summary table by its header's column names."""
    names = [cell.strip() for cell in header.split("┃")[1:-1]]
    cells = [cell.strip() for cell in row.split("│")[1:-1]]
    assert len(names) == len(cells), (header, row)
    return dict(zip(names, cells, strict=True))
