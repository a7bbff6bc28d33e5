"""Which unknown keys are misspellings of a key the job's own plugins read: those are errors, not warnings.

A key nothing declares is most often either a typo or a key of another Gobblin module gpy does not port. The
first matters — the value the user set is silently not used (``writer.output.fromat=JSON`` writes Parquet) —
the second does not. A key is taken for a misspelling of a key ``K`` the job's plugins or the runtime declare
(``K`` itself, or an alias; never a ``prefix.*`` family) when:

- it has as many dotted segments as ``K``, all equal but one, and that one differs from ``K``'s by case only,
  or, when ``K``'s segment has 4 characters or more, by one edit (Damerau–Levenshtein as optimal string
  alignment: an insertion, a deletion, a substitution or a swap of two neighbours) other than in digits alone
  (``key1`` and ``key2`` are two numbered keys). A segment under 4 characters must match but for case. One
  edit, not two: among the 594 key names gpy and Gobblin know, two edits would take real sibling keys for
  typos of each other (``minLookbackTime``/``maxLookbackTime``, ``serializer``/``deserializer``), one edit
  only a plural or an alias (``uri``/``uris``), which are known keys and never checked;
- or it equals ``K`` once case, dots, ``_`` and ``-`` are ignored (``writer.outputformat``,
  ``source.filebased.max.files.per.run``).

Keys are compared after their branch suffix (``.0``, ``.1``) and a ``source.querybased.entity.<name>.``
prefix are taken off, as the settings read them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_SEPARATORS = re.compile(r"[._-]")
_DIGITS = re.compile(r"\d")


def edit_distance(a: str, b: str, limit: int) -> int:
    """The optimal-string-alignment distance of ``a`` and ``b``, or ``limit + 1`` once it exceeds ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    before: list[int] = []
    previous = list(range(len(b) + 1))
    for i, char in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, other in enumerate(b, 1):
            cost = 0 if char == other else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and char == b[j - 2] and a[i - 2] == other:
                current[j] = min(current[j], before[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        before, previous = previous, current
    return min(previous[-1], limit + 1)


def allowed_edits(segment: str) -> int:
    """How many edits a misspelling of ``segment`` may be away from it (beyond case)."""
    return 0 if len(segment) < 4 else 1


def _squashed(key: str) -> str:
    return _SEPARATORS.sub("", key).lower()


def misspelt(key: str, declared: str) -> bool:
    """Whether ``key`` (a plain key: no branch suffix) reads as a misspelling of the declared key ``declared``."""
    if key == declared:
        return False
    if _squashed(key) == _squashed(declared):
        return True
    typed, meant = key.split("."), declared.split(".")
    if len(typed) != len(meant):
        return False
    differing = [(t, m) for t, m in zip(typed, meant, strict=True) if t != m]
    if len(differing) != 1:
        return False
    t, m = differing[0]
    if _DIGITS.sub("", t) == _DIGITS.sub("", m):
        return t.lower() == m.lower()
    return t.lower() == m.lower() or edit_distance(t, m, allowed_edits(m)) <= allowed_edits(m)


def meant_key(key: str, declared: Iterable[str]) -> str | None:
    """The declared key ``key`` misspells (the one fewest edits away, then the first by name), or None."""
    found = sorted((name for name in declared if not name.endswith(".*") and misspelt(key, name)),
                   key=lambda name: (edit_distance(key, name, len(name)), name))
    return found[0] if found else None
