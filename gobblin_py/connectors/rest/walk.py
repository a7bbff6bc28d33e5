"""A walk through an endpoint's pages, which a run stopped at ``rest.paging.max`` leaves to the next: what its
resume point holds, so that the next run goes on exactly (:func:`check_shape`, :class:`Walk`).

- ``shape``: the keys that decide which records a page number, offset or cursor names (``rest.url``,
  ``rest.query.*``, ``rest.records.path``, ``rest.paging.type``, ``.param``, ``.size``, ``.size.param``,
  ``rest.watermark.field`` and ``.param``; credentials masked). A run resuming the walk with any of them changed
  would skip or repeat records: :func:`check_shape` refuses it before any work.
- ``position``: the next page's number, offset or cursor.
- what the walk pulled (:class:`Walk`): the lowest and highest watermark value, the order they came in, the value
  it reached last (its frontier) and a digest of each record pulled at that value.

Numbered pages and offsets move when records arrive between two runs of a walk (newest first: every page moves
down by as many records as arrived), so records the walk pulled come again. While the walk's values came in
order, those are known: a value between the frontier and the far end of what was pulled, or one at the frontier
whose record was pulled there (its digest), is skipped. Records deleted between runs move the pages the other way,
and as many records as were deleted are then not seen: nothing in an answer tells that. A cursor names its place
exactly: none of this is needed there.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from gobblin_py.connectors.rest.http import split_user_info
from gobblin_py.connectors.rest.settings import RestSettings
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.redact import MASK, credential_name, redact

EDGE_MAX = 10_000  # digests of records at the frontier's value kept in the state (16 characters each)
SHIFTING = ("page", "offset")  # pagings whose pages move when records arrive or go


def shape(settings: RestSettings) -> dict[str, Any]:
    """The values of the keys that shape a walk, ``rest.query.*`` one key each, credentials masked (they never reach the
    state store)."""
    s = settings
    query = {f"rest.query.{k}": MASK if credential_name(k) else redact(str(v)) for k, v in (s.query or {}).items()}
    return {"rest.url": redact(split_user_info(s.url)[0]), **dict(sorted(query.items())),
            "rest.records.path": s.records_path, "rest.paging.type": s.paging, "rest.paging.param": s.paging_param,
            "rest.paging.size": s.page_size, "rest.paging.size.param": s.page_size_param,
            "rest.watermark.field": s.watermark_field, "rest.watermark.param": s.watermark_param}


def check_shape(settings: RestSettings, resume: dict[str, Any] | None) -> None:
    """Refuse to resume a walk whose shaping keys changed since it began (exit 2, naming each and both values)."""
    if resume is None:
        return
    saved = resume.get("shape")
    where = f"the last run stopped at rest.paging.max at position {resume.get('position')!r} of a walk through the pages"
    if not isinstance(saved, dict):
        raise UsageError(f"{where}, without the keys that shape it (saved by an earlier gpy): it cannot be resumed "
                         "safely; start over with `gpy state reset` (every record is pulled again)")
    now = shape(settings)
    changed = [key for key in dict.fromkeys([*now, *saved]) if saved.get(key) != now.get(key)]
    if not changed:
        return
    what = "; ".join(f"{key} is {_shown(now.get(key))}, the walk began with {_shown(saved.get(key))}"
                     for key in changed)
    raise UsageError(f"{what}: {where}, made with the earlier value, and going on with another would skip or repeat "
                     f"records. Set {' and '.join(changed)} back until a run reads the walk's last page (the next "
                     "walk then takes the new value), or start over with `gpy state reset` (every record is pulled "
                     "again)")


def _shown(value: Any) -> str:
    return "(not set)" if value is None else json.dumps(value)


@dataclass
class Walk:
    """What one walk through the pages pulled so far, over the runs it took (see the module)."""

    shifting: bool  # page numbers or offsets: pages may move between runs
    low: int | None = None
    high: int | None = None
    order: str | None = None  # "asc", "desc", "mixed"; None while every value pulled was one
    frontier: int | None = None
    edge: Counter[int] = field(default_factory=Counter)
    overflow: bool = False  # more records at the frontier's value than EDGE_MAX
    _before: tuple[str | None, int | None, int | None, int | None, Counter[int]] | None = None

    @classmethod
    def resumed(cls, resume: dict[str, Any] | None, paging: str) -> Walk:
        """The walk a resume point carries on (a new one without)."""
        walk = cls(paging in SHIFTING)
        if resume:
            walk.low, walk.high = _int(resume.get("low")), _int(resume.get("high"))
            walk.order = resume.get("order") if resume.get("order") in ("asc", "desc", "mixed") else None
            walk.frontier = _int(resume.get("frontier"))
            edge = resume.get("edge")
            walk.edge = Counter({int(k, 16): int(v) for k, v in edge.items()}) if isinstance(edge, dict) else Counter()
            walk.overflow = bool(resume.get("overflow"))
        return walk

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"low": self.low, "high": self.high, "order": self.order, "frontier": self.frontier}
        if self.shifting:
            out["edge"] = {f"{d:016x}": n for d, n in self.edge.items()}
            if self.overflow:
                out["overflow"] = True
        return out

    def page(self) -> None:
        """A new page begins: what it holds is compared with what the walk pulled before it."""
        self._before = (self.order, self.low, self.high, self.frontier, Counter(self.edge))

    def pulled_before(self, value: int, digest: int) -> bool:
        """Whether the record (of watermark ``value``, JSON digest ``digest``) is one the walk pulled on an earlier
        page, come again because the pages moved."""
        if not self.shifting or self._before is None:
            return False
        order, low, high, frontier, edge = self._before
        if frontier is None or order == "mixed":
            return False
        if value == frontier:
            if edge[digest] > 0:
                edge[digest] -= 1  # each record pulled there once: an equal record after it is another one
                return True
            return False
        if order == "desc":
            return frontier < value <= (high if high is not None else frontier)
        if order == "asc":
            return (low if low is not None else frontier) <= value < frontier
        return False

    def add(self, value: int, digest: int) -> None:
        """A record of watermark ``value`` was pulled."""
        self.low = value if self.low is None else min(self.low, value)
        self.high = value if self.high is None else max(self.high, value)
        if self.frontier is not None and value != self.frontier:
            direction = "asc" if value > self.frontier else "desc"
            self.order = direction if self.order in (None, direction) else "mixed"
            self.edge.clear()
            self.overflow = False
        self.frontier = value
        if not self.shifting:
            return
        if len(self.edge) < EDGE_MAX or digest in self.edge:
            self.edge[digest] += 1
        else:
            self.overflow = True

    def limit_note(self, settings: RestSettings) -> str:
        """What the next run can and cannot know, said when a run stops at the page limit."""
        if not self.shifting:
            return "rest.paging.max reached: the next run goes on from this cursor"
        if not settings.watermark_field or self.order == "mixed":
            why = ("the records have no rest.watermark.field to know them by" if not settings.watermark_field
                   else "the records do not come in rest.watermark.field order, so they cannot be known by it")
            return ("rest.paging.max reached: the next run goes on from this page, but records added or deleted "
                    f"before it move the pages, and as many records can be pulled twice or missed ({why}): use "
                    "cursor paging, or a rest.paging.max the walk fits in")
        note = ("rest.paging.max reached: the next run goes on from this page; records added before it move the "
                "pages, and those this walk pulled are known by their watermark and skipped; records deleted "
                "before it move them back, and as many records can be missed")
        if self.overflow:
            note += (f"; more than {EDGE_MAX} records share the watermark value {self.frontier}, and those beyond "
                     f"{EDGE_MAX} can be pulled twice")
        return note


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
