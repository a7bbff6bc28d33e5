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


# Each field a date-only folder name can hold, the coarser field it needs beside it to name one time, and what
# the letters read as (Joda's letters: y/Y year, M month, D day of year, d day of month, H/k/h/K hour, m minute,
# s second, S fraction of a second).
_FIELD_NAMES = {"y": "year", "Y": "year", "M": "month", "D": "day of year", "d": "day of month", "H": "hour",
                "k": "hour", "h": "hour", "K": "hour", "m": "minute", "s": "second", "S": "fraction of a second"}
_NEEDS = {"M": ("yY", "a year"), "D": ("yY", "a year"), "d": ("M", "a month (MM)"), "H": ("dD", "a day"),
          "k": ("dD", "a day"), "h": ("dD", "a day"), "K": ("dD", "a day"), "m": ("HkhK", "an hour"),
          "s": ("m", "a minute (mm)"), "S": ("s", "a second (ss)")}


def version_pattern_problem(pattern: str) -> str | None:
    """Why a date pattern cannot name the times of the folders it matches, or None when it can.

    Each field must come with the coarser ones that make it a point in time: a year always (without one every
    folder reads as 1900), a month for a day of the month, a day for an hour, an hour for minutes (``yyyy/mm/dd``
    reads minutes where the month stands: every folder a January), a minute for seconds; a 12-hour clock
    (``hh``) needs its AM/PM (``a``)."""
    letters = {text[0] for kind, text in tokens(pattern) if kind == "field"}
    if not letters & set("yY"):
        return "has no year (yyyy): every folder would read as a day of 1900"
    if "m" in letters and not letters & set("HkhK"):
        return "has minutes (mm) and no hour: 'mm' is minutes, a month is 'MM'"
    for letter, (needed, name) in _NEEDS.items():
        if letter in letters and not letters & set(needed):
            return f"has a {_FIELD_NAMES[letter]} ({letter * 2 if letter != 'S' else 'SSS'}) without {name}"
    if letters & set("hK") and "a" not in letters:
        return "has a 12-hour clock (hh) without AM/PM (a): write HH for a 24-hour clock"
    return None
