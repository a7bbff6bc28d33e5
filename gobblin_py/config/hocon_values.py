"""The HOCON value model and typesafe's ``withFallback`` merge rules.

Mirrors typesafe config's ``AbstractConfigValue`` family: resolved values (strings, numbers that keep their
text, booleans, null, lists, objects) and unresolved ones (substitutions, concatenations containing a
substitution, and delayed merges that wait for resolution before they can be merged). ``with_fallback``
implements the rules that give "the higher-priority level's shape wins": a resolved non-object ignores
everything below it, objects merge field by field, an object hides a non-object below it, and anything
unresolved becomes a delayed merge.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from .hocon_syntax import render_path

__all__ = [
    "Origin",
    "HValue",
    "HStr",
    "HNum",
    "HBool",
    "HNull",
    "HList",
    "HObj",
    "HRef",
    "HConcat",
    "HMerge",
    "HMergeObj",
    "WrongType",
    "concatenate",
    "consolidate",
    "empty_object",
    "create_value_under_path",
    "object_from_path_map",
    "iter_leaves",
    "java_double_to_string",
]

Origin = Tuple[Optional[str], Optional[int]]
_NO_ORIGIN: Origin = (None, None)
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1

# ----------------------------------------------------------------------------------------------------
# Values
# ----------------------------------------------------------------------------------------------------


class HValue:
    """Base of the HOCON value model (mirrors typesafe's ``AbstractConfigValue``)."""

    __slots__ = ("origin",)
    unmergeable = False

    def __init__(self, origin: Origin = _NO_ORIGIN) -> None:
        self.origin = origin

    @property
    def resolved(self) -> bool:
        return True

    def ignores_fallbacks(self) -> bool:
        return self.resolved

    def transform_to_string(self) -> Optional[str]:
        return None

    def relativized(self, prefix: Tuple[str, ...]) -> "HValue":
        return self

    def unmerged_values(self) -> List["HValue"]:
        return [self]

    def with_fallback(self, other: "HValue") -> "HValue":
        """typesafe ``withFallback``: ``self`` wins, ``other`` fills in (or is kept for resolution)."""
        if self.ignores_fallbacks():
            return self
        if other.unmergeable:
            return self._merged_with_unmergeable(other)
        if isinstance(other, HObj):
            return self._merged_with_object(other)
        return self._merged_with_non_object(other)

    def _merged_with_unmergeable(self, other: "HValue") -> "HValue":
        return HMerge([self] + other.unmerged_values(), self.origin)

    def _merged_with_object(self, other: "HObj") -> "HValue":
        return self._merged_with_non_object(other)

    def _merged_with_non_object(self, other: "HValue") -> "HValue":
        if self.resolved:
            return self
        return HMerge([self, other], self.origin)


class HStr(HValue):
    """A string; ``quoted`` is False for unquoted text (it matters in concatenations)."""

    __slots__ = ("text", "quoted")

    def __init__(self, text: str, quoted: bool = True, origin: Origin = _NO_ORIGIN) -> None:
        super().__init__(origin)
        self.text = text
        self.quoted = quoted

    def transform_to_string(self) -> Optional[str]:
        return self.text

    def __repr__(self) -> str:
        return f"HStr({self.text!r})"


class HNum(HValue):
    """A number, keeping its original text (``1.50`` stays ``1.50`` when read as a string)."""

    __slots__ = ("text", "is_double")

    def __init__(self, text: str, is_double: bool, origin: Origin = _NO_ORIGIN) -> None:
        super().__init__(origin)
        self.text = text
        self.is_double = is_double

    def transform_to_string(self) -> Optional[str]:
        return self.text

    def unwrapped(self):
        """The Java number ``unwrapped()`` would give (int for integral doubles, like ``ConfigNumber``)."""
        if not self.is_double:
            return int(self.text)
        value = float(self.text)
        if math.isfinite(value) and value == int(value) and _LONG_MIN <= int(value) <= _LONG_MAX:
            return int(value)
        return value

    def __repr__(self) -> str:
        return f"HNum({self.text})"


class HBool(HValue):
    """``true`` or ``false``."""

    __slots__ = ("value",)

    def __init__(self, value: bool, origin: Origin = _NO_ORIGIN) -> None:
        super().__init__(origin)
        self.value = value

    def transform_to_string(self) -> Optional[str]:
        return "true" if self.value else "false"

    def __repr__(self) -> str:
        return f"HBool({self.value})"


class HNull(HValue):
    """``null`` (overrides fallbacks; omitted when flattened)."""

    __slots__ = ()

    def transform_to_string(self) -> Optional[str]:
        return "null"

    def __repr__(self) -> str:
        return "HNull"


class HList(HValue):
    """A list of values."""

    __slots__ = ("items", "_resolved")

    def __init__(self, items: List[HValue], origin: Origin = _NO_ORIGIN) -> None:
        super().__init__(origin)
        self.items = items
        self._resolved = all(item.resolved for item in items)

    @property
    def resolved(self) -> bool:
        return self._resolved

    def relativized(self, prefix: Tuple[str, ...]) -> "HValue":
        return HList([item.relativized(prefix) for item in self.items], self.origin)

    def __repr__(self) -> str:
        return f"HList({self.items!r})"


class HObj(HValue):
    """An object (ordered fields); ``ignores`` marks an object that has hidden a non-object fallback."""

    __slots__ = ("fields", "ignores", "_resolved")

    def __init__(self, fields: Dict[str, HValue], origin: Origin = _NO_ORIGIN, ignores: bool = False) -> None:
        super().__init__(origin)
        self.fields = fields
        self.ignores = ignores
        self._resolved = all(value.resolved for value in fields.values())

    @property
    def resolved(self) -> bool:
        return self._resolved

    def ignores_fallbacks(self) -> bool:
        return self.ignores

    def relativized(self, prefix: Tuple[str, ...]) -> "HValue":
        return HObj({k: v.relativized(prefix) for k, v in self.fields.items()}, self.origin, self.ignores)

    def _merged_with_unmergeable(self, other: HValue) -> HValue:
        return HMergeObj([self] + other.unmerged_values(), self.origin)

    def _merged_with_object(self, other: "HObj") -> HValue:
        # Field order: the fallback's fields first, then new ones (so a file reads in its own order).
        merged: Dict[str, HValue] = {}
        for key, fallback in other.fields.items():
            mine = self.fields.get(key)
            merged[key] = fallback if mine is None else mine.with_fallback(fallback)
        for key, mine in self.fields.items():
            if key not in merged:
                merged[key] = mine
        return HObj(merged, self.origin, other.ignores_fallbacks())

    def _merged_with_non_object(self, other: HValue) -> HValue:
        if self.resolved:
            return HObj(self.fields, self.origin, True)
        return HMergeObj([self, other], self.origin)

    def __repr__(self) -> str:
        return f"HObj({self.fields!r})"


class HRef(HValue):
    """A substitution ``${path}`` / ``${?path}`` (``prefix_len``: elements added by an include point)."""

    __slots__ = ("path", "optional", "prefix_len")
    unmergeable = True

    def __init__(
        self, path: Tuple[str, ...], optional: bool, origin: Origin = _NO_ORIGIN, prefix_len: int = 0
    ) -> None:
        super().__init__(origin)
        self.path = path
        self.optional = optional
        self.prefix_len = prefix_len

    @property
    def resolved(self) -> bool:
        return False

    def ignores_fallbacks(self) -> bool:
        return False

    def relativized(self, prefix: Tuple[str, ...]) -> HValue:
        return HRef(prefix + self.path, self.optional, self.origin, self.prefix_len + len(prefix))

    def expression(self) -> str:
        return "${" + ("?" if self.optional else "") + render_path(self.path[self.prefix_len :]) + "}"

    def __repr__(self) -> str:
        return f"HRef({self.expression()})"


class HConcat(HValue):
    """A value concatenation that contains at least one substitution."""

    __slots__ = ("pieces",)
    unmergeable = True

    def __init__(self, pieces: List[HValue], origin: Origin = _NO_ORIGIN) -> None:
        super().__init__(origin)
        self.pieces = pieces

    @property
    def resolved(self) -> bool:
        return False

    def ignores_fallbacks(self) -> bool:
        return False

    def relativized(self, prefix: Tuple[str, ...]) -> HValue:
        return HConcat([piece.relativized(prefix) for piece in self.pieces], self.origin)

    def __repr__(self) -> str:
        return f"HConcat({self.pieces!r})"


class HMerge(HValue):
    """A delayed merge: a stack (highest priority first) that can only be merged after resolution."""

    __slots__ = ("stack",)
    unmergeable = True

    def __init__(self, stack: List[HValue], origin: Origin = _NO_ORIGIN) -> None:
        super().__init__(origin)
        self.stack = stack

    @property
    def resolved(self) -> bool:
        return False

    def ignores_fallbacks(self) -> bool:
        return self.stack[-1].ignores_fallbacks()

    def unmerged_values(self) -> List[HValue]:
        return list(self.stack)

    def relativized(self, prefix: Tuple[str, ...]) -> HValue:
        return type(self)([v.relativized(prefix) for v in self.stack], self.origin)

    def _merged_with_unmergeable(self, other: HValue) -> HValue:
        return type(self)(self.stack + other.unmerged_values(), self.origin)

    def _merged_with_object(self, other: "HObj") -> HValue:
        return type(self)(self.stack + [other], self.origin)

    def _merged_with_non_object(self, other: HValue) -> HValue:
        return type(self)(self.stack + [other], self.origin)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.stack!r})"


class HMergeObj(HMerge):
    """A delayed merge whose top is an object (typesafe ``ConfigDelayedMergeObject``)."""

    __slots__ = ()


def empty_object() -> HObj:
    """A new empty object."""
    return HObj({})


def create_value_under_path(path: Sequence[str], value: HValue) -> HObj:
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


class WrongType(Exception):
    def __init__(self, message: str, origin: Origin) -> None:
        super().__init__(message)
        self.origin = origin


def _join(builder: List[HValue], right: HValue) -> None:
    left = builder[-1]
    joined: Optional[HValue]
    if isinstance(left, (HObj, HMergeObj)) and isinstance(right, (HObj, HMergeObj)):
        joined = right.with_fallback(left)
    elif isinstance(left, HList) and isinstance(right, HList):
        joined = HList(left.items + right.items, left.origin)
    elif isinstance(left, (HList, HObj)) and isinstance(right, HStr) and not right.quoted:
        joined = left
    elif left.unmergeable or right.unmergeable:
        joined = None
    else:
        s1 = left.transform_to_string()
        s2 = right.transform_to_string()
        if s1 is None or s2 is None:
            raise WrongType(
                "Cannot concatenate object or list with a non-object-or-list, "
                f"{_describe_value(left)} and {_describe_value(right)} are not compatible",
                left.origin,
            )
        joined = HStr(s1 + s2, True, left.origin)
    if joined is None:
        builder.append(right)
    else:
        builder[-1] = joined


def _describe_value(value: HValue) -> str:
    if isinstance(value, HObj):
        return "an object"
    if isinstance(value, HList):
        return "a list"
    text = value.transform_to_string()
    return repr(text) if text is not None else type(value).__name__


def consolidate(pieces: List[HValue]) -> List[HValue]:
    if len(pieces) < 2:
        return pieces
    flattened: List[HValue] = []
    for piece in pieces:
        if isinstance(piece, HConcat):
            flattened.extend(piece.pieces)
        else:
            flattened.append(piece)
    consolidated: List[HValue] = []
    for piece in flattened:
        if not consolidated:
            consolidated.append(piece)
        else:
            _join(consolidated, piece)
    return consolidated


def concatenate(pieces: List[HValue], origin: Origin) -> Optional[HValue]:
    consolidated = consolidate(pieces)
    if not consolidated:
        return None
    if len(consolidated) == 1:
        return consolidated[0]
    return HConcat(consolidated, origin)


def iter_leaves(obj: HObj, prefix: Tuple[str, ...] = ()) -> Iterator[Tuple[Tuple[str, ...], HValue]]:
    """Depth-first ``(path, value)`` for every non-object value of a resolved object (``Config.entrySet``)."""
    for key, value in obj.fields.items():
        path = prefix + (key,)
        if isinstance(value, HObj):
            yield from iter_leaves(value, path)
        else:
            yield path, value


def java_double_to_string(value: float) -> str:
    """Java ``Double.toString`` (shortest round-trip digits)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign = "-" if value < 0 else ""
    magnitude = abs(value)
    digits_tuple = Decimal(repr(magnitude)).as_tuple()
    digits = "".join(str(d) for d in digits_tuple.digits).rstrip("0") or "0"
    # decimal exponent of the first digit: magnitude = 0.d1d2... * 10^(point)
    point = len(digits_tuple.digits) + digits_tuple.exponent  # type: ignore[operator]
    if 1e-3 <= magnitude < 1e7:
        if point <= 0:
            text = "0." + "0" * (-point) + digits
        elif point >= len(digits):
            text = digits + "0" * (point - len(digits)) + ".0"
        else:
            text = digits[:point] + "." + digits[point:]
        return sign + text
    exponent = point - 1
    mantissa = digits[0] + "." + (digits[1:] or "0")
    return f"{sign}{mantissa}E{exponent}"
