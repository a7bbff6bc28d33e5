"""Value concatenation as typesafe config's ``ConfigConcatenation`` does it (``${num}" items"``, ``${a} [x]``).

Adjacent strings join into one string, lists into one list and objects merge; whatever contains a
substitution stays a :class:`HConcat` until resolution. Mixing a list or object with a string is an error.
"""

from __future__ import annotations

from .values import HConcat, HList, HMergeObj, HObj, HStr, HValue, Origin

__all__ = ["WrongType", "concatenate", "consolidate"]


class WrongType(Exception):
    """Values that cannot be concatenated (typesafe ``ConfigException.WrongType``)."""

    def __init__(self, message: str, origin: Origin) -> None:
        super().__init__(message)
        self.origin = origin


def _join(builder: list[HValue], right: HValue) -> None:
    left = builder[-1]
    joined: HValue | None
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


def consolidate(pieces: list[HValue]) -> list[HValue]:
    """Join what can be joined now; the pieces left are separated by substitutions."""
    if len(pieces) < 2:
        return pieces
    flattened: list[HValue] = []
    for piece in pieces:
        if isinstance(piece, HConcat):
            flattened.extend(piece.pieces)
        else:
            flattened.append(piece)
    consolidated: list[HValue] = []
    for piece in flattened:
        if not consolidated:
            consolidated.append(piece)
        else:
            _join(consolidated, piece)
    return consolidated


def concatenate(pieces: list[HValue], origin: Origin) -> HValue | None:
    """The value of a concatenation: one joined value, an :class:`HConcat` to resolve later, or None."""
    consolidated = consolidate(pieces)
    if not consolidated:
        return None
    if len(consolidated) == 1:
        return consolidated[0]
    return HConcat(consolidated, origin)
