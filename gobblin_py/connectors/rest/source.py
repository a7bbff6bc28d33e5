"""A generic HTTP/REST source: the records of one JSON endpoint, page by page, incrementally by a watermark field.

One work unit per run: the pages of ``rest.url`` (``rest.paging.type``: page numbers, offsets or a cursor the answer
gives; :mod:`.paging`), the records found at ``rest.records.path`` in each. With ``rest.watermark.field`` the run's
watermark is the highest value of that field (:mod:`.watermark`): the next run skips records at or below it (and
sends it as ``rest.watermark.param`` when set, so the server can leave them out). Requests carry
``rest.auth.token`` in ``rest.auth.header`` and are retried on 429 and 5xx answers (:mod:`.http`). With
``rest.schema`` (Avro) the records are rows of it; without, each is a text record of its JSON (for
``JsonTextToAvroConverter`` or a writer of text).

Nothing is dropped without a word: a record that is not a JSON object fails the task, or with
``rest.records.nonobject=skip`` is counted in a warning; a watermark value that is not a whole number fails the
task naming the record; a server whose values went below the last run's watermark (a reset server) is a warning.
A walk through the pages resumed by the next run (:mod:`.walk`) refuses changed keys that shape it, and skips the
records it pulled already that the pages moving brought again.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from gobblin_py.connectors.rest.jsonpath import locate
from gobblin_py.connectors.rest.paging import Page, Pager
from gobblin_py.connectors.rest.records import schema_of, to_batch
from gobblin_py.connectors.rest.settings import RestSettings
from gobblin_py.connectors.rest.walk import Walk, check_shape, shape
from gobblin_py.connectors.rest.watermark import NONE, RestWatermark, whole_number
from gobblin_py.sdk.contracts import Extractor, Source
from gobblin_py.sdk.errors import PermanentError
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.retry_budget import run_budget
from gobblin_py.sdk.run_states import SourceState
from gobblin_py.sdk.schema_meta import text_schema
from gobblin_py.sdk.states import Extract, WorkUnit, WorkUnitState
from gobblin_py.sdk.watermarks import WatermarkInterval

log = get_logger(__name__)
SKIPPED_KEY = "rest.records.skipped"  # on the task's state: records that were not JSON objects, skipped


def previous_mark(state: SourceState) -> RestWatermark:
    """The watermark the dataset's last run committed (with where its pages resume), or :data:`NONE`."""
    marks = [w.actual_high_watermark(RestWatermark) for w in state.previous_workunit_states_by_urn().get("", [])]
    marks = [m for m in marks if m is not None]
    return max(marks, key=lambda m: m.value) if marks else RestWatermark(NONE)


def text_batch(records: list[dict[str, Any]]) -> pa.RecordBatch:
    """Text records, each one JSON object: as UTF-8 (``\\u`` escapes of text that is not ASCII take two or three
    times the bytes), escaped only where a record holds a lone surrogate, which UTF-8 cannot carry."""
    try:
        texts = pa.array([json.dumps(r, ensure_ascii=False) for r in records], pa.string())
    except UnicodeEncodeError:
        texts = pa.array([json.dumps(r) for r in records], pa.string())
    return pa.RecordBatch.from_arrays([texts], schema=text_schema())


def _record_label(positions: list[int], page: int, index: int) -> str:
    return f"record {positions[index] + 1} of page {page}"


class RestSource(Source):
    """The records of one JSON endpoint (see the module)."""

    settings_class = RestSettings

    def get_workunits(self, state: SourceState) -> list[WorkUnit]:
        settings = RestSettings.load(state)
        low = previous_mark(state)
        check_shape(settings, low.resume)
        extract = Extract.create("APPEND_ONLY", settings.namespace, settings.table)
        return [WorkUnit.create(extract, WatermarkInterval.of(low, RestWatermark(NONE)))]

    def get_extractor(self, state: WorkUnitState) -> Extractor:
        return RestExtractor(state)


class RestExtractor(Extractor):
    """Requests the endpoint's pages in turn; each page's new records are one batch."""

    def __init__(self, state: WorkUnitState) -> None:
        self.state = state
        self.settings = RestSettings.load(state)
        self.client = self.settings.client(run_budget(state), self.settings.headers())
        mark = state.workunit.low_watermark(RestWatermark) or RestWatermark(NONE)
        self.floor = mark.value
        self.pager = Pager(self.settings, self.client, self.floor, mark.resume)
        self.walk = Walk.resumed(mark.resume, self.settings.paging)  # through the pages, resumed or new
        self.highest_seen = NONE
        self.below = self.skipped = self.again = 0
        self.finished = False
        self.schema = schema_of(self.settings.schema, "rest.schema")

    def get_schema(self) -> pa.Schema:
        return self.schema if self.schema is not None else text_schema()

    def get_expected_record_count(self) -> int:
        return -1

    def read_batches(self) -> Iterator[pa.RecordBatch]:
        for page in self.pager.pages():
            records, positions = self._new_records(page)
            page.records.clear()
            if not records:
                continue
            try:
                if self.schema is None:
                    batch = text_batch(records)
                else:
                    batch = to_batch(records, self.schema, f"GET {page.url}",
                                     functools.partial(_record_label, positions, page.number))
            except RecursionError:
                raise PermanentError(f"GET {page.url}: a record of page {page.number} is nested deeper than can "
                                     "be written") from None
            del records  # only the batch is held while it is written
            yield batch
        self.finished = True
        self._report()

    def _new_records(self, page: Page) -> tuple[list[dict[str, Any]], list[int]]:
        """The page's records that are JSON objects above the watermark, and their places in the page."""
        field = self.settings.watermark_field
        kept, positions = [], []
        self.walk.page()
        for index, record in enumerate(page.records):
            if not isinstance(record, dict):
                self._not_an_object(page, index, record)
                continue
            if field:
                value = self._watermark(record, field, f"GET {page.url}: record {index + 1} of page {page.number}")
                self.highest_seen = max(self.highest_seen, value)
                if self.floor != NONE and value <= self.floor:
                    self.below += 1
                    continue
                digest = page.digests[index] if page.digests else 0
                if self.walk.pulled_before(value, digest):  # the pages moved: records arrived meanwhile
                    self.again += 1
                    continue
                self.walk.add(value, digest)
            kept.append(record)
            positions.append(index)
        return kept, positions

    @staticmethod
    def _watermark(record: dict[str, Any], field: str, where: str) -> int:
        values, found = locate(record, field, flatten=False)  # (a list is no watermark, not its first element)
        if not found:
            raise PermanentError(f"{where}: has no rest.watermark.field={field}: the watermark cannot place it")
        return whole_number(values[0] if len(values) == 1 else values, field, where)

    def _not_an_object(self, page: Page, index: int, record: Any) -> None:
        shown = json.dumps(record)[:200]
        if self.settings.nonobject == "fail":
            raise PermanentError(f"GET {page.url}: record {index + 1} of page {page.number} is not a JSON object but "
                                 f"{type(record).__name__} {shown} (rest.records.nonobject=skip skips such records, "
                                 "counted)")
        if not self.skipped:
            log.warning("rest_record_not_an_object", url=page.url, page=page.number, record=index + 1, value=shown,
                        note="skipped (rest.records.nonobject=skip); the run's count follows at its end")
        self.skipped += 1

    def _report(self) -> None:
        s = self.settings
        if self.again:
            log.info("rest_records_pulled_before", url=s.url, records=self.again,
                     note="records this walk through the pages pulled already came again (records arrived and the "
                          "pages moved): skipped")
        if not self.pager.complete:
            log.warning("rest_page_limit", url=s.url, pages=s.max_pages, resumes_at=self.pager.position,
                        note=self.walk.limit_note(s))
        if self.skipped:
            self.state.set_prop(SKIPPED_KEY, self.skipped)
            log.warning("rest_records_skipped", url=s.url, records=self.skipped,
                        reason="not JSON objects (rest.records.nonobject=skip)")
        backwards = self.highest_seen != NONE and self.highest_seen < self.floor
        if self.below and (backwards or s.watermark_param):
            log.warning("rest_watermark_backwards", url=s.url, field=s.watermark_field, watermark=self.floor,
                        highest_now=self.highest_seen, skipped=self.below,
                        note="the server's values are at or below the last run's watermark (was it reset?): those "
                             "records are skipped; reset the job's state to pull them")

    def close(self) -> None:
        if not self.finished:  # a failed run leaves the last committed watermark (and where its pages resume)
            return
        if self.pager.complete:
            mark = RestWatermark(max(self.floor, self.walk.high if self.walk.high is not None else NONE))
        else:
            mark = RestWatermark(self.floor, {"shape": shape(self.settings), "position": self.pager.position,
                                              **self.walk.to_json()})
        self.state.set_actual_high_watermark(mark)
