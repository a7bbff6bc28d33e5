"""Saying where a bad value came from: an extractor that knows the file and line of the rows it gives.

A converter that finds a value it cannot convert raises :class:`~gobblin_py.sdk.errors.DataError` with the
value's row in the batch; the task asks its extractor where that row came from, when the extractor can tell.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class RecordLocating(Protocol):
    """An extractor that can say where a row of the batch it gave last came from."""

    def locate(self, row: int) -> str | None:
        """``<file> line N`` (or ``<file> record N``) of row ``row`` of the last batch; None when it cannot tell."""
        ...
