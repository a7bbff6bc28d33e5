"""The text rules of Java-properties files as commons-configuration 1.10 (with commons-lang 2.6) applies them.

Physical and logical lines (comments, Java ``trim``, continuation backslashes), the key/value split, Java
unescaping of keys and values, and list splitting on ``,``.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = [
    "LIST_DELIMITER",
    "DISABLED_DELIMITER",
    "PROPERTY_RE",
    "INCLUDE_KEY_RE",
    "UnicodeEscapeError",
    "java_trim",
    "split_list",
    "split_omit_empty",
    "unescape_java",
    "count_trailing_backslashes",
    "is_comment_line",
    "physical_lines",
]

LIST_DELIMITER = ","
DISABLED_DELIMITER = "\0"
_ESCAPE = "\\"

# Java String.trim(): every char <= U+0020.
_JAVA_TRIM_CHARS = "".join(chr(c) for c in range(0x21))

# java.util.regex without UNICODE_CHARACTER_CLASS: \s is [ \t\n\x0B\f\r]; "." excludes line terminators.
_WS = r"[ \t\n\x0b\f\r]"
_ANY = r"[^\n\r\u0085\u2028\u2029]"
PROPERTY_RE = re.compile(
    r"((?:[^ \t\n\x0b\f\r\\=:]|\\" + _ANY + r")*)"  # key
    r"(" + _WS + r"*(?:" + _WS + r"+|[=:])" + _WS + r"*)"  # separator (with surrounding whitespace)
    r"(" + _ANY + r"*)"  # value
)
_PHYSICAL_LINE_RE = re.compile(r"\r\n|\r|\n")
# String.equalsIgnoreCase("include"), including the two Unicode i's that Java case-folds to 'i'.
INCLUDE_KEY_RE = re.compile("[iI\u0130\u0131][nN][cC][lL][uU][dD][eE]")


def java_trim(text: str) -> str:
    """Java ``String.trim()``: strip every character <= U+0020 from both ends."""
    return text.strip(_JAVA_TRIM_CHARS)


def split_list(text: str, delimiter: str = LIST_DELIMITER, trim: bool = True) -> list[str]:
    """commons-configuration ``PropertyConverter.split``: split on ``delimiter`` honouring ``\\`` escapes.

    ``\\<delimiter>`` gives a literal delimiter and ``\\\\`` a single backslash; any other escaped character
    keeps its backslash. Empty pieces are kept; with ``trim`` every piece is Java-trimmed.
    """
    pieces: list[str] = []
    token: list[str] = []
    in_escape = False
    for ch in text:
        if in_escape:
            if ch != delimiter and ch != _ESCAPE:
                token.append(_ESCAPE)
            token.append(ch)
            in_escape = False
        elif ch == delimiter:
            piece = "".join(token)
            pieces.append(java_trim(piece) if trim else piece)
            token = []
        elif ch == _ESCAPE:
            in_escape = True
        else:
            token.append(ch)
    if in_escape:
        token.append(_ESCAPE)
    piece = "".join(token)
    pieces.append(java_trim(piece) if trim else piece)
    return pieces


def split_omit_empty(text: str, separator: str) -> list[str]:
    """commons-lang ``StringUtils.split(str, char)``: no empty tokens, no trimming."""
    return [piece for piece in text.split(separator) if piece]


class UnicodeEscapeError(ValueError):
    """A ``\\u`` escape whose four characters are not hex digits (the message is those characters)."""


def _java_hex_digit(ch: str) -> int:
    """``Character.digit(ch, 16)``."""
    code = ord(ch)
    if 0x30 <= code <= 0x39:
        return code - 0x30
    if 0x61 <= code <= 0x66:
        return code - 0x61 + 10
    if 0x41 <= code <= 0x46:
        return code - 0x41 + 10
    if 0xFF21 <= code <= 0xFF26:  # fullwidth A-F
        return code - 0xFF21 + 10
    if 0xFF41 <= code <= 0xFF46:  # fullwidth a-f
        return code - 0xFF41 + 10
    digit = unicodedata.decimal(ch, -1)
    return digit if digit < 16 else -1


def _java_parse_hex(text: str) -> int:
    """``Integer.parseInt(text, 16)`` for the 4-character window of a ``\\uXXXX`` escape."""
    sign = 1
    digits = text
    if text[:1] in ("+", "-"):
        sign = -1 if text[0] == "-" else 1
        digits = text[1:]
    if not digits:
        raise UnicodeEscapeError(text)
    value = 0
    for ch in digits:
        digit = _java_hex_digit(ch)
        if digit < 0:
            raise UnicodeEscapeError(text)
        value = value * 16 + digit
    return sign * value


def _join_surrogates(text: str) -> str:
    """Java strings are UTF-16: turn ``\\uD83D\\uDE00`` escape pairs into one code point."""
    if not any(0xD800 <= ord(ch) <= 0xDFFF for ch in text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def unescape_java(text: str, delimiter: str | None) -> str:
    """``unescapeJava``: commons-lang 2.6 for keys (``delimiter=None``), PropertiesConfiguration for values.

    Escapes ``\\t \\n \\r \\f \\b \\\\ \\" \\'`` and ``\\uXXXX``; any other escaped char stands for itself, except
    that an escaped list delimiter keeps its backslash (values only). A lone trailing backslash is kept. A ``\\u``
    cut short by the end of the text raises :class:`UnicodeEscapeError`, as ``java.util.Properties`` does
    (commons-lang drops it silently, which loses part of the value without a word).
    """
    if _ESCAPE not in text:
        return text
    out: list[str] = []
    unicode_buf: list[str] = []
    had_slash = False
    in_unicode = False
    for ch in text:
        if in_unicode:
            unicode_buf.append(ch)
            if len(unicode_buf) == 4:
                value = _java_parse_hex("".join(unicode_buf))
                out.append(chr(value & 0xFFFF))
                unicode_buf = []
                in_unicode = False
                had_slash = False
            continue
        if had_slash:
            had_slash = False
            if ch == "\\":
                out.append("\\")
            elif ch == "'":
                out.append("'")
            elif ch == '"':
                out.append('"')
            elif ch == "r":
                out.append("\r")
            elif ch == "f":
                out.append("\f")
            elif ch == "t":
                out.append("\t")
            elif ch == "n":
                out.append("\n")
            elif ch == "b":
                out.append("\b")
            elif delimiter is not None and ch == delimiter:
                out.append("\\")
                out.append(delimiter)
            elif ch == "u":
                in_unicode = True
            else:
                out.append(ch)
            continue
        if ch == "\\":
            had_slash = True
            continue
        out.append(ch)
    if in_unicode:
        raise UnicodeEscapeError("".join(unicode_buf))
    if had_slash:
        out.append("\\")
    return _join_surrogates("".join(out))


def count_trailing_backslashes(line: str) -> int:
    """How many backslashes end ``line`` (an odd number continues the line)."""
    count = 0
    for ch in reversed(line):
        if ch != "\\":
            break
        count += 1
    return count


def is_comment_line(line: str) -> bool:
    """A blank line, or one whose first non-blank character is ``#`` or ``!``."""
    stripped = java_trim(line)
    return not stripped or stripped[0] in "#!"


def physical_lines(text: str) -> list[str]:
    """``BufferedReader.readLine`` semantics: terminators ``\\n``, ``\\r``, ``\\r\\n``; no trailing empty line."""
    lines = _PHYSICAL_LINE_RE.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines
