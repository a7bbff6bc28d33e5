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

from .paths import render_path

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
]

Origin = tuple[str | None, int | None]
_NO_ORIGIN: Origin = (None, None)
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1


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

    def transform_to_string(self) -> str | None:
        return None

    def relativized(self, prefix: tuple[str, ...]) -> HValue:
        return self

    def unmerged_values(self) -> list[HValue]:
        return [self]

    def with_fallback(self, other: HValue) -> HValue:
        """typesafe ``withFallback``: ``self`` wins, ``other`` fills in (or is kept for resolution)."""
        if self.ignores_fallbacks():
            return self
        if other.unmergeable:
            return self._merged_with_unmergeable(other)
        if isinstance(other, HObj):
            return self._merged_with_object(other)
        return self._merged_with_non_object(other)

    def _merged_with_unmergeable(self, other: HValue) -> HValue:
        return HMerge([self] + other.unmerged_values(), self.origin)

    def _merged_with_object(self, other: HObj) -> HValue:
        return self._merged_with_non_object(other)

    def _merged_with_non_object(self, other: HValue) -> HValue:
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

    def transform_to_string(self) -> str | None:
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

    def transform_to_string(self) -> str | None:
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

    def transform_to_string(self) -> str | None:
        return "true" if self.value else "false"

    def __repr__(self) -> str:
        return f"HBool({self.value})"


class HNull(HValue):
    """``null`` (overrides fallbacks; omitted when flattened)."""

    __slots__ = ()

    def transform_to_string(self) -> str | None:
        return "null"

    def __repr__(self) -> str:
        return "HNull"


class HList(HValue):
    """A list of values."""

    __slots__ = ("items", "_resolved")

    def __init__(self, items: list[HValue], origin: Origin = _NO_ORIGIN) -> None:
        super().__init__(origin)
        self.items = items
        self._resolved = all(item.resolved for item in items)

    @property
    def resolved(self) -> bool:
        return self._resolved

    def relativized(self, prefix: tuple[str, ...]) -> HValue:
        return HList([item.relativized(prefix) for item in self.items], self.origin)

    def __repr__(self) -> str:
        return f"HList({self.items!r})"


class HObj(HValue):
    """An object (ordered fields); ``ignores`` marks an object that has hidden a non-object fallback."""

    __slots__ = ("fields", "ignores", "_resolved")

    def __init__(self, fields: dict[str, HValue], origin: Origin = _NO_ORIGIN, ignores: bool = False) -> None:
        super().__init__(origin)
        self.fields = fields
        self.ignores = ignores
        self._resolved = all(value.resolved for value in fields.values())

    @property
    def resolved(self) -> bool:
        return self._resolved

    def ignores_fallbacks(self) -> bool:
        return self.ignores

    def relativized(self, prefix: tuple[str, ...]) -> HValue:
        return HObj({k: v.relativized(prefix) for k, v in self.fields.items()}, self.origin, self.ignores)

    def _merged_with_unmergeable(self, other: HValue) -> HValue:
        return HMergeObj([self] + other.unmerged_values(), self.origin)

    def _merged_with_object(self, other: HObj) -> HValue:
        # Field order: the fallback's fields first, then new ones (so a file reads in its own order).
        merged: dict[str, HValue] = {}
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
        self, path: tuple[str, ...], optional: bool, origin: Origin = _NO_ORIGIN, prefix_len: int = 0
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

    def relativized(self, prefix: tuple[str, ...]) -> HValue:
        return HRef(prefix + self.path, self.optional, self.origin, self.prefix_len + len(prefix))

    def expression(self) -> str:
        return "${" + ("?" if self.optional else "") + render_path(self.path[self.prefix_len :]) + "}"

    def __repr__(self) -> str:
        return f"HRef({self.expression()})"


class HConcat(HValue):
    """A value concatenation that contains at least one substitution."""

    __slots__ = ("pieces",)
    unmergeable = True

    def __init__(self, pieces: list[HValue], origin: Origin = _NO_ORIGIN) -> None:
        super().__init__(origin)
        self.pieces = pieces

    @property
    def resolved(self) -> bool:
        return False

    def ignores_fallbacks(self) -> bool:
        return False

    def relativized(self, prefix: tuple[str, ...]) -> HValue:
        return HConcat([piece.relativized(prefix) for piece in self.pieces], self.origin)

    def __repr__(self) -> str:
        return f"HConcat({self.pieces!r})"


class HMerge(HValue):
    """A delayed merge: a stack (highest priority first) that can only be merged after resolution."""

    __slots__ = ("stack",)
    unmergeable = True

    def __init__(self, stack: list[HValue], origin: Origin = _NO_ORIGIN) -> None:
        super().__init__(origin)
        self.stack = stack

    @property
    def resolved(self) -> bool:
        return False

    def ignores_fallbacks(self) -> bool:
        return self.stack[-1].ignores_fallbacks()

    def unmerged_values(self) -> list[HValue]:
        return list(self.stack)

    def relativized(self, prefix: tuple[str, ...]) -> HValue:
        return type(self)([v.relativized(prefix) for v in self.stack], self.origin)

    def _merged_with_unmergeable(self, other: HValue) -> HValue:
        return type(self)(self.stack + other.unmerged_values(), self.origin)

    def _merged_with_object(self, other: HObj) -> HValue:
        return type(self)(self.stack + [other], self.origin)

    def _merged_with_non_object(self, other: HValue) -> HValue:
        return type(self)(self.stack + [other], self.origin)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.stack!r})"


class HMergeObj(HMerge):
    """A delayed merge whose top is an object (typesafe ``ConfigDelayedMergeObject``)."""

    __slots__ = ()
