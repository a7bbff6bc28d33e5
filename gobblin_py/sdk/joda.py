"""Joda-Time date patterns (what Gobblin's keys use) as C ``strftime``/``strptime`` formats.

Supported letters: ``yyyy``/``yy`` (year), ``MM``/``M`` (month), ``MMM`` (month name), ``dd``/``d``, ``DDD``
(day of year), ``HH``/``H``, ``hh``/``h``, ``a``, ``mm``/``m``, ``ss``/``s``, ``SSS`` (milliseconds), ``Z``/``ZZ``
(offset), ``EEE``; ``'quoted'`` text and other characters are literal.
"""

from __future__ import annotations

_TOKENS = {"yyyy": "%Y", "YYYY": "%Y", "yy": "%y", "YY": "%y", "MM": "%m", "M": "%m", "MMM": "%b", "dd": "%d",
           "d": "%d", "DDD": "%j", "HH": "%H", "H": "%H", "hh": "%I", "h": "%I", "a": "%p", "mm": "%M", "m": "%M",
           "ss": "%S", "s": "%S", "SSS": "%f", "Z": "%z", "ZZ": "%z", "EEE": "%a"}
# for formatting (partition paths): only letter runs whose strftime output is what Joda prints
FORMAT_TOKENS = {"yyyy": "%Y", "YYYY": "%Y", "yy": "%y", "YY": "%y", "MM": "%m", "MMM": "%b", "dd": "%d",
                 "DDD": "%j", "HH": "%H", "hh": "%I", "a": "%p", "mm": "%M", "ss": "%S", "EEE": "%a", "ww": "%V"}
DATE_LETTERS = set("yYMdDE")
# Gobblin's DatePartitionType.getLowestIntervalUnit: the first of these letters found anywhere in the pattern
_UNIT_ORDER = (("s", "SECOND"), ("m", "MINUTE"), ("h", "HOUR"), ("H", "HOUR"), ("K", "HOUR"), ("d", "DAY"),
               ("D", "DAY"), ("e", "DAY"), ("w", "WEEK"), ("M", "MONTH"), ("y", "YEAR"), ("Y", "YEAR"))


def tokens(pattern: str) -> list[tuple[str, str]]:
    """``(kind, text)`` pieces of a pattern: kind ``field`` (a letter run) or ``literal``."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "'":
            end = pattern.find("'", i + 1)
            if end < 0:
                raise ValueError(f"unclosed quote in date pattern {pattern!r}")
            out.append(("literal", "'" if end == i + 1 else pattern[i + 1:end]))
            i = end + 1
        elif c.isalpha():
            j = i
            while j < len(pattern) and pattern[j] == c:
                j += 1
            out.append(("field", pattern[i:j]))
            i = j
        else:
            out.append(("literal", c))
            i += 1
    return out


def to_strftime(pattern: str, table: dict[str, str] | None = None) -> str:
    """The C format of a Joda pattern (letter runs from ``table``, default: every run gpy parses); ValueError
    naming an unsupported letter run."""
    table = _TOKENS if table is None else table
    out = []
    for kind, text in tokens(pattern):
        if kind == "literal":
            out.append(text.replace("%", "%%"))
        elif text in table:
            out.append(table[text])
        else:
            raise ValueError(f"date pattern {pattern!r}: '{text}' is not supported "
                             f"(use {', '.join(sorted(table))} and 'quoted text')")
    return "".join(out)


def has_date(pattern: str) -> bool:
    """Whether the pattern has a date field (else it is a time of day, parsed onto 1970-01-01)."""
    return any(kind == "field" and text[0] in DATE_LETTERS for kind, text in tokens(pattern))


def lowest_unit(pattern: str) -> str | None:
    """Gobblin's step unit of a partition pattern: SECOND … YEAR by the first letter found (quoted text too)."""
    for letter, unit in _UNIT_ORDER:
        if letter in pattern:
            return unit
    return None
