"""Building and walking object trees: objects from paths, the leaves of a resolved tree, plain Python values."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from .values import HBool, HList, HNull, HNum, HObj, HStr, HValue

__all__ = ["empty_object", "create_value_under_path", "object_from_path_map", "iter_leaves", "unwrap"]


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


def object_from_path_map(entries: Sequence[tuple[tuple[str, ...], HValue]]) -> HObj:
    """Build an object from ``(path, value)`` pairs whose paths never prefix each other."""
    root: dict[str, object] = {}
    for path, value in entries:
        node = root
        for element in path[:-1]:
            child = node.get(element)
            if not isinstance(child, dict):
                child = {}
                node[element] = child
            node = child
        node[path[-1]] = value

    def build(node: dict[str, object]) -> HObj:
        return HObj({k: (build(v) if isinstance(v, dict) else v) for k, v in node.items()})  # type: ignore[misc]

    return build(root)


def iter_leaves(obj: HObj, prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], HValue]]:
    """Depth-first ``(path, value)`` for every non-object value of a resolved object (``Config.entrySet``)."""
    for key, value in obj.fields.items():
        path = prefix + (key,)
        if isinstance(value, HObj):
            yield from iter_leaves(value, path)
        else:
            yield path, value


def unwrap(value: HValue) -> Any:
    """typesafe ``ConfigValue.unwrapped()`` of a resolved value: str, int/float, bool, None, list or dict."""
    if isinstance(value, HStr):
        return value.text
    if isinstance(value, HNum):
        return value.unwrapped()
    if isinstance(value, HBool):
        return value.value
    if isinstance(value, HNull):
        return None
    if isinstance(value, HList):
        return [unwrap(item) for item in value.items]
    if isinstance(value, HObj):
        return {key: unwrap(child) for key, child in value.fields.items()}
    raise TypeError(f"unresolved value {value!r}")


# Objects and lists inside one another, a dotted key's every part counted: Gobblin's job files nest a few levels,
# and what reads the tree (merging, substitutions, flattening to properties) recurses once a level or more.
MAX_NESTING = 100


def nested_beyond(value: HValue, limit: int) -> HValue | None:
    """A value that objects and lists nest more than ``limit`` deep in ``value`` (walked without recursion), or
    None when there is none."""
    stack: list[tuple[HValue, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return node
        children = (node.fields.values() if isinstance(node, HObj) else node.items if isinstance(node, HList)
                    else getattr(node, "pieces", None) or getattr(node, "stack", None) or ())
        stack.extend((child, depth + 1) for child in children)
    return None
