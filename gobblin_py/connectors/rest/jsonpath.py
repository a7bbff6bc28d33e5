"""Where the records are in a JSON answer: a dotted path (``data.items``; ``*`` for every member of an object or
element of a list; a number for one element of a list)."""

from __future__ import annotations

from typing import Any


def select(document: Any, path: str) -> list[Any]:
    """Every value ``path`` leads to in ``document``; a list at the end is its elements. Missing parts give none."""
    return locate(document, path)[0]


def locate(document: Any, path: str, flatten: bool = True) -> tuple[list[Any], bool]:
    """:func:`select`'s values, and whether the path led anywhere (False when a part of it is missing: an empty
    list at its end is a place with no values). Without ``flatten`` a list at the end is one value."""
    found = [document]
    for part in [p for p in path.split(".") if p] if path else []:
        step: list[Any] = []
        for value in found:
            if part == "*":
                step.extend(value.values() if isinstance(value, dict) else value if isinstance(value, list) else [])
            elif isinstance(value, dict):
                step.extend([value[part]] if part in value else [])
            elif isinstance(value, list) and part.lstrip("-").isdigit() and -len(value) <= int(part) < len(value):
                step.append(value[int(part)])
        if not step and (part != "*" or not any(isinstance(v, (dict, list)) for v in found)):
            return [], False  # ("*" of an empty object or list is a place with nothing in it)
        found = step
    if not flatten:
        return found, True
    out: list[Any] = []
    for value in found:
        out.extend(value if isinstance(value, list) else [value])
    return out, True


def first(document: Any, path: str) -> Any:
    """The first value ``path`` leads to, or None."""
    values = select(document, path)
    return values[0] if values else None
