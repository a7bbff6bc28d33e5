"""Building and walking object trees: objects from paths, and the leaves of a resolved tree."""

from __future__ import annotations

from typing import Dict, Iterator, Sequence, Tuple

from .values import HObj, HValue

__all__ = ["empty_object", "create_value_under_path", "object_from_path_map", "iter_leaves"]


def empty_object() -> HObj:
    """A new empty object."""
    return HObj({})


def create_value_under_path(path: Sequence[str], value: HValue) -> HObj:
    """``value`` wrapped in one object per element of ``path`` (``a.b.c = 1`` -> ``{a {b {c = 1}}}``)."""
    result: HValue = value
    for element in reversed(path):
        result = HObj({element: result}, value.origin)
    assert isinstance(result, HObj)
    return result


def object_from_path_map(entries: Sequence[Tuple[Tuple[str, ...], HValue]]) -> HObj:
    """Build an object from ``(path, value)`` pairs whose paths never prefix each other."""
    root: Dict[str, object] = {}
    for path, value in entries:
        node = root
        for element in path[:-1]:
            child = node.get(element)
            if not isinstance(child, dict):
                child = {}
                node[element] = child
            node = child
        node[path[-1]] = value

    def build(node: Dict[str, object]) -> HObj:
        return HObj({k: (build(v) if isinstance(v, dict) else v) for k, v in node.items()})  # type: ignore[misc]

    return build(root)


def iter_leaves(obj: HObj, prefix: Tuple[str, ...] = ()) -> Iterator[Tuple[Tuple[str, ...], HValue]]:
    """Depth-first ``(path, value)`` for every non-object value of a resolved object (``Config.entrySet``)."""
    for key, value in obj.fields.items():
        path = prefix + (key,)
        if isinstance(value, HObj):
            yield from iter_leaves(value, path)
        else:
            yield path, value
