"""Gobblin's Wikipedia example: each page's revisions from the MediaWiki API, the revision id as watermark.

The facts of Gobblin's ``WikipediaSource`` and ``WikipediaExtractor``: one work unit per title of
``source.page.titles``, the title its dataset, its low watermark the highest revision id the last run saw (-1 on the
first run). The extractor asks ``action=query&prop=revisions`` for the page's newest revision id, then (first run)
the first revision of the last ``wikipedia.source.bootstrap.lookback`` (P2D), then pages of revisions after the
watermark up to the newest, oldest first (``rvdir=newer``, ``rvstartid``, ``rvendid``), ``source.revisions.cnt`` at a
time. Each revision is a text record: its JSON with the page's ``pageid`` and ``title`` added, carrying
``wikipedia.avro.schema`` for ``WikipediaConverter``. The run's watermark is the newest revision id, or the last
revision pulled when ``gobblin.wikipediaSource.maxRevisionsPerPage`` stopped it.

Differences: a request that fails after its retries fails the task (Gobblin logs it, ends the page's pull and
saves the newest revision id as watermark, losing the rest), and so does an API error inside an HTTP 200 answer
(:mod:`.mediawiki`: ``maxlag`` and the like retried first, as the server asks): an answer is never read as "no
revisions" unless it is one, and the watermark only ever names revisions pulled: a listing that holds no
revision while a newer one exists (no ``revisions``, or none after the last pulled) is a warning, and the
watermark stays at the last revision pulled. A page that does not exist is a
warning and keeps its watermark; a title MediaWiki calls invalid fails the task. A title removed from
``source.page.titles`` is no longer pulled (Gobblin pulls it on from its last watermark); its state is kept.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from gobblin_py.connectors.rest.http import with_query
from gobblin_py.connectors.rest.jsonpath import locate
from gobblin_py.connectors.wikipedia.mediawiki import api_error, warnings
from gobblin_py.connectors.wikipedia.settings import WikipediaSettings, period
from gobblin_py.sdk.contracts import Extractor, Source
from gobblin_py.sdk.errors import PermanentError
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.redact import redact
from gobblin_py.sdk.retry_budget import run_budget
from gobblin_py.sdk.run_states import SourceState
from gobblin_py.sdk.schema_meta import text_schema
from gobblin_py.sdk.states import DATASET_URN_KEY, Extract, WorkUnit, WorkUnitState
from gobblin_py.sdk.watermarks import LongWatermark, WatermarkInterval

log = get_logger(__name__)
TABLE = "WikipediaOutput"
BASE_QUERY = {"format": "json", "action": "query", "prop": "revisions"}
NO_WATERMARK = -1  # Gobblin's: a page's first run


def previous_high(state: SourceState, urn: str) -> int:
    """The highest actual high watermark the dataset's last run saved, or -1."""
    marks = [w.actual_high_watermark(LongWatermark) for w in state.previous_workunit_states_by_urn().get(urn, [])]
    values = [m.value for m in marks if m is not None]
    return max(values) if values else NO_WATERMARK


class WikipediaSource(Source):
    """Gobblin's ``WikipediaSource``: a work unit per page title (see the module)."""

    settings_class = WikipediaSettings

    def get_workunits(self, state: SourceState) -> list[WorkUnit]:
        settings = WikipediaSettings.load(state)
        extract = Extract.create("SNAPSHOT_ONLY", settings.namespace or "", TABLE)
        units = []
        for title in dict.fromkeys(settings.titles):
            interval = WatermarkInterval.of(LongWatermark(previous_high(state, title)), LongWatermark(NO_WATERMARK))
            unit = WorkUnit.create(extract, interval)
            unit.set_prop(DATASET_URN_KEY, title)
            units.append(unit)
        return units

    def get_extractor(self, state: WorkUnitState) -> Extractor:
        return WikipediaExtractor(state)


class WikipediaExtractor(Extractor):
    """Gobblin's ``WikipediaExtractor``: one page's revisions after the watermark, oldest first."""

    def __init__(self, state: WorkUnitState) -> None:
        self.state = state
        self.settings = WikipediaSettings.load(state)
        self.title = state.get_prop(DATASET_URN_KEY)
        self.client = self.settings.client(run_budget(state))
        self.low = state.workunit.low_watermark(LongWatermark).value
        self.newest = NO_WATERMARK
        self.high = self.low
        self.missing = False

    def get_schema(self) -> pa.Schema:
        return text_schema(self.settings.schema)

    def get_expected_record_count(self) -> int:
        return -1

    def _revisions(self, **query: str) -> list[dict[str, Any]]:
        """The revisions an API query answers, each with its page's ``pageid`` and ``title``; an error answer, or
        one without the page, fails the task (it is never "no revisions")."""
        params = {**BASE_QUERY, "titles": self.title, **query}
        document, _ = self.client.get(self.settings.root_url, params, check=api_error)
        shown = f"GET {redact(with_query(self.settings.root_url, params))}"
        for warning in warnings(document):
            log.warning("wikipedia_api_warning", title=self.title, url=shown, warning=warning)
        pages, found = locate(document, "query.pages.*")
        if not found or not pages:
            raise PermanentError(f"{shown}: the answer has no page (no query.pages): not a revisions answer")
        if not isinstance(pages[0], dict):
            raise PermanentError(f"{shown}: query.pages of the answer for {self.title!r} is not an object of pages")
        page = pages[0]
        if "invalid" in page:
            raise PermanentError(f"{shown}: MediaWiki calls the title {self.title!r} invalid: "
                                 f"{page.get('invalidreason', '')}".rstrip(": "))
        if "missing" in page:
            if not self.missing:
                log.warning("wikipedia_page_missing", title=self.title, watermark=self.low,
                            note="the wiki has no such page: nothing pulled, its watermark kept")
            self.missing = True
            return []
        revisions = [r for r in page.get("revisions", []) if isinstance(r, dict)]
        for revision in revisions:
            if "revid" not in revision:
                raise PermanentError(f"{shown}: a revision of {self.title!r} has no revid")
            for key in ("pageid", "title"):
                if key in page:
                    revision[key] = page[key]
        return revisions

    def _start(self) -> int:
        """The revision to pull after: the watermark, or on a first run the first one of the lookback period."""
        if self.low >= 0:
            return self.low
        since = dt.datetime.now(dt.timezone.utc) - (period(self.settings.lookback) or dt.timedelta(days=2))
        first = self._revisions(rvprop="ids", rvlimit="1", rvstart=since.strftime("%Y%m%d%H%M%S"), rvdir="newer")
        return int(first[0]["revid"]) if first else self.newest

    def read_batches(self) -> Iterator[pa.RecordBatch]:
        newest = self._revisions(rvprop="ids", rvlimit="1")
        if not newest:  # a missing page, or one without revisions: the watermark stays
            return
        self.newest = int(newest[0]["revid"])
        last, pulled, limit, short = self._start(), 0, self.settings.max_revisions, False
        log.info("wikipedia_pull", title=self.title, after=last, newest=self.newest)
        while last < self.newest and (limit < 0 or pulled < limit):
            page = self._revisions(rvprop="ids|timestamp|user|userid|size", rvlimit=str(self.settings.page_size + 1),
                                   rvstartid=str(last), rvendid=str(self.newest), rvdir="newer")
            page = [r for r in page if int(r["revid"]) > last]  # the first is the one pulled last
            if limit >= 0:
                page = page[:limit - pulled]
            if not page:  # the listing up to the newest revision holds it at least: an answer without is wrong
                log.warning("wikipedia_revisions_missing", title=self.title, after=last, newest=self.newest,
                            note="the listing after the last revision pulled is empty, yet a newer one exists: "
                                 "the watermark stays at the last revision pulled, the next run asks again")
                short = True
                break
            pulled += len(page)
            last = int(page[-1]["revid"])
            yield pa.RecordBatch.from_arrays([pa.array([json.dumps(r) for r in page], pa.string())],
                                             schema=self.get_schema())
        # every revision up to the newest was pulled, or maxRevisionsPerPage (or a listing short of the newest)
        # stopped the pull at ``last``: the next run goes on from there
        stopped = (limit >= 0 and pulled >= limit) or short or self.missing  # (a page deleted while it was pulled)
        self.high = max(self.low, last if stopped else self.newest)

    def close(self) -> None:
        self.state.set_actual_high_watermark(LongWatermark(self.high))
