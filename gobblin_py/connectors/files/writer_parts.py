"""What a writer made of several writers (a file per partition, a file per roll) does with its parts."""

from __future__ import annotations

from collections.abc import Iterable

from gobblin_py.sdk.contracts import DataWriter


def clean_up_all(parts: Iterable[DataWriter]) -> None:
    """Clean up every part, then raise the first part's failure, if any: one failing part must not leave the
    others' staged files behind."""
    first_error: BaseException | None = None
    for part in parts:
        try:
            part.cleanup()
        except Exception as exc:  # noqa: BLE001 - the others are still cleaned up; the first failure is raised
            first_error = first_error or exc
    if first_error is not None:
        raise first_error
