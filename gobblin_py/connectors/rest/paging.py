"""Walking through an endpoint's pages: page numbers, offsets or cursors, from where the last run stopped.

A run requests at most ``rest.paging.max`` pages. When it stops there before the last page, :attr:`Pager.position`
is the next page's number, offset or cursor: the run's watermark keeps it (``resume``) and the next run starts
there, so no page is skipped. A server that loops is caught (:class:`Repeats`): a cursor the walk already asked,
a page holding the records of an earlier page in whatever order, or one whose every record came before (a server
ignoring the page number or offset), fails the task, or with
``rest.paging.repeated=stop`` ends the walk there with a warning; either way nothing is pulled twice. An answer
without a body is a failed request (retried as ``rest.retry.*`` says), never the end of the pages.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gobblin_py.connectors.rest.http import ApiError, JsonHttpClient, with_query
from gobblin_py.connectors.rest.jsonpath import first, locate
from gobblin_py.connectors.rest.settings import RestSettings
from gobblin_py.connectors.rest.watermark import NONE
from gobblin_py.sdk.errors import PermanentError
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.redact import redact

log = get_logger(__name__)
SEEN_MAX = 1_000_000  # records of a run remembered by their digest (some 70 MB at most)


@dataclass
class Page:
    """One answer's records, the request that brought them (credentials masked) and its number in the run."""

    number: int
    url: str
    records: list[Any]
    digests: list[int]  # of each record's JSON (:func:`digest`); none without paging


class Pager:
    """The pages of one run, in order (see the module)."""

    def __init__(self, settings: RestSettings, client: JsonHttpClient, floor: int,
                 resume: dict[str, Any] | None) -> None:
        self.settings, self.client, self.floor = settings, client, floor
        s = settings
        self.start: Any = s.first_page if s.first_page is not None else 0 if s.paging == "offset" else 1
        if s.paging == "cursor":
            self.start = None  # the first request carries no cursor
        if resume is not None and "position" in resume:  # (its shape checked while planning: walk.check_shape)
            self.start = resume["position"]
        self.position: Any = self.start
        self.complete = False  # the last page was read (or a repeat ended the walk)

    def pages(self) -> Iterator[Page]:
        """Every page of the run; :attr:`complete` and :attr:`position` say where it ended."""
        s = self.settings
        params: dict[str, str] = {k: str(v) for k, v in (s.query or {}).items()}
        if s.watermark_param and self.floor != NONE:
            params[s.watermark_param] = str(self.floor)
        if s.page_size and s.paging != "none":
            params[s.page_size_param] = str(s.page_size)
        cursors = {self.position} if s.paging == "cursor" and self.position is not None else set()
        repeats = Repeats()
        for number in range(1, s.max_pages + 1):
            if self.position is not None and s.paging != "none":
                params[s.paging_param] = str(self.position)
            shown = redact(with_query(s.url, params))
            document, _ = self.client.get(s.url, params, check=_not_empty)
            records, found = locate(document, s.records_path)
            if not found:
                raise PermanentError(f"GET {shown}: rest.records.path={s.records_path} leads nowhere in the answer "
                                     f"(it has {_outline(document)}); records are not where the key says")
            try:
                digests = [digest(r) for r in records] if s.paging != "none" else []
            except RecursionError:
                raise PermanentError(f"GET {shown}: a record of page {number} is nested deeper than can be "
                                     "compared with the pages before") from None
            repeat = repeats.of(number, digests)
            if repeat is not None:
                self._repeated(shown, f"{repeat} (does the server read {s.paging_param}?)")
                return
            last = not self._advance(document, len(records))
            del document  # the records alone go on: a large answer is not held whole while they are written
            yield Page(number, shown, records, digests)
            if last:
                self.complete = True
                return
            if s.paging == "cursor":
                if self.position in cursors:
                    self._repeated(shown, f"the answer's next cursor {self.position!r} was asked before")
                    return
                cursors.add(self.position)

    def _advance(self, document: Any, count: int) -> bool:
        """Move to the next page; False when this one was the last."""
        s = self.settings
        if s.paging == "none":
            return False
        if s.paging in ("page", "offset"):
            if not count or (s.page_size or 0) > count:
                return False
            self.position = int(self.position) + (1 if s.paging == "page" else count)
            return True
        cursor = first(document, s.cursor_path)
        if cursor in (None, ""):
            return False
        self.position = cursor if isinstance(cursor, str) else json.dumps(cursor)
        return True

    def _repeated(self, shown: str, what: str) -> None:
        if self.settings.repeated == "fail":
            raise PermanentError(f"GET {shown}: {what}: the server is going round in circles; the pages before are "
                                 "not committed (rest.paging.repeated=stop ends the pages there instead)")
        log.warning("rest_paging_repeated", url=shown, problem=what, note="the pages end here (rest.paging.repeated=stop)")
        self.complete = True


def _not_empty(document: Any, headers: Mapping[str, str]) -> ApiError | None:
    """An answer without a body where a page was asked: a failed request (retried), never the end of the pages."""
    if document is None:
        return ApiError("the answer is empty where a page of records was expected (a failed request, not the end "
                        "of the records)", retryable=True)
    return None


_CANONICAL = json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=str, check_circular=False)


def digest(record: Any) -> int:
    """A 64-bit digest of a record's JSON (its keys in order)."""
    text = _CANONICAL.encode(record).encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "big")


class Repeats:
    """The pages of one run as seen so far, to catch a server going round in circles: a page holding the same
    records as an earlier one, in whatever order, or a page whose every record came on earlier pages. Each page
    is remembered by a digest of its records (at most ``rest.paging.max`` of them); the records by a 64-bit digest
    each, the first :data:`SEEN_MAX` of the run."""

    def __init__(self) -> None:
        self.pages: dict[bytes, int] = {}
        self.seen: set[int] = set()

    def of(self, number: int, digests: list[int]) -> str | None:
        """What page ``number`` (its records' digests) repeats, or None; remembers it."""
        if not digests:
            return None
        page = hashlib.blake2b(b"".join(d.to_bytes(8, "big") for d in sorted(digests)), digest_size=16).digest()
        if page in self.pages:
            return f"page {number} holds the same records as page {self.pages[page]}"
        if all(d in self.seen for d in digests):
            return f"every record of page {number} came on an earlier page"
        self.pages[page] = number
        room = SEEN_MAX - len(self.seen)
        self.seen.update(digests if len(digests) <= room else digests[:room])
        return None


def _outline(document: Any) -> str:
    if isinstance(document, dict):
        keys = ", ".join(list(map(str, document))[:10])
        return f"the keys {keys}" if keys else "no keys"
    return f"a {type(document).__name__}" if not isinstance(document, list) else f"a list of {len(document)}"
