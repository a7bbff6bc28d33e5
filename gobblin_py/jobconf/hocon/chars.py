"""The characters of HOCON as typesafe config 1.4.1 classifies them: whitespace, number and reserved characters."""

from __future__ import annotations

import unicodedata

__all__ = [
    "is_whitespace",
    "unicode_trim",
    "describe_char",
    "FIRST_NUMBER_CHARS",
    "NUMBER_CHARS",
    "NOT_IN_UNQUOTED",
]

_JAVA_WS_CONTROLS = frozenset("\t\n\x0b\f\r\x1c\x1d\x1e\x1f")
_TYPESAFE_EXTRA_WS = frozenset(" \n\u00a0\u2007\u202f\ufeff")


def _java_is_whitespace(ch: str) -> bool:
    """``Character.isWhitespace``."""
    if ch in _JAVA_WS_CONTROLS:
        return True
    if ch in "\u00a0\u2007\u202f":
        return False
    return unicodedata.category(ch) in ("Zs", "Zl", "Zp")


def is_whitespace(ch: str) -> bool:
    """typesafe ``ConfigImplUtil.isWhitespace`` (Java whitespace plus the no-break spaces and the BOM)."""
    return ch in _TYPESAFE_EXTRA_WS or _java_is_whitespace(ch)


def unicode_trim(text: str) -> str:
    """typesafe ``ConfigImplUtil.unicodeTrim``: strip :func:`is_whitespace` characters from both ends."""
    start, end = 0, len(text)
    while start < end and is_whitespace(text[start]):
        start += 1
    while end > start and is_whitespace(text[end - 1]):
        end -= 1
    return text[start:end]


FIRST_NUMBER_CHARS = "0123456789-"
NUMBER_CHARS = "0123456789eE+-."
NOT_IN_UNQUOTED = '$"{}[]:=,+#`^?!@*&\\'


def describe_char(ch: str) -> str:
    """How typesafe names a character in error messages."""
    if ch == "\n":
        return "newline"
    if ch == "\t":
        return "tab"
    if ch == "":
        return "end of file"
    if ord(ch) < 0x20:
        return f"control character 0x{ord(ch):x}"
    return ch

