"""A generic HTTP/REST source: the records of one JSON endpoint, page by page, incrementally by a watermark field.

One work unit per run: every page of ``rest.url`` (``rest.paging.type``: page numbers, offsets or a cursor the answer
gives), the records found at ``rest.records.path`` in each. With ``rest.watermark.field`` the run's watermark is the
highest value of that field: the next run skips records at or below it (and sends it as ``rest.watermark.param``
when set, so the server can leave them out). Requests carry ``rest.auth.token`` in ``rest.auth.header`` and are
retried on 429 and 5xx answers (:mod:`gobblin_py.connectors.rest.http`). With ``rest.schema`` (Avro) the records
are rows of it; without, each is a text record of its JSON (for ``JsonTextToAvroConverter`` or a writer of text).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from gobblin_py.connectors.rest.jsonpath import first, select
from gobblin_py.connectors.rest.records import schema_of, to_batch
from gobblin_py.connectors.rest.settings import RestSettings
from gobblin_py.sdk.contracts import Extractor, Source
from gobblin_py.sdk.errors import PermanentError
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.run_states import SourceState
from gobblin_py.sdk.schema_meta import text_schema
from gobblin_py.sdk.states import Extract, WorkUnit, WorkUnitState
from gobblin_py.sdk.watermarks import LongWatermark, WatermarkInterval

log = get_logger(__name__)
NO_WATERMARK = -1


def previous_high(state: SourceState, urn: str) -> int:
    """The highest actual high watermark the dataset's last run saved, or -1."""
    marks = [w.actual_high_watermark(LongWatermark) for w in state.previous_workunit_states_by_urn().get(urn, [])]
    values = [m.value for m in marks if m is not None]
    return max(values) if values else NO_WATERMARK


class RestSource(Source):
    """The records of one JSON endpoint (see the module)."""

    settings_class = RestSettings

    def get_workunits(self, state: SourceState) -> list[WorkUnit]:
        settings = RestSettings.load(state)
        low = previous_high(state, "")
        extract = Extract.create("APPEND_ONLY", settings.namespace, settings.table)
        return [WorkUnit.create(extract, WatermarkInterval.of(LongWatermark(low), LongWatermark(NO_WATERMARK)))]

    def get_extractor(self, state: WorkUnitState) -> Extractor:
        return RestExtractor(state)


class RestExtractor(Extractor):
    """Requests the endpoint's pages in turn; each page's new records are one batch."""

    def __init__(self, state: WorkUnitState) -> None:
        self.state = state
        self.settings = RestSettings.load(state)
        self.client = self.settings.client(self.settings.headers())
        self.low = state.workunit.low_watermark(LongWatermark).value
        self.high = self.low
        self.schema = schema_of(self.settings.schema, "rest.schema")

    def get_schema(self) -> pa.Schema:
        return self.schema if self.schema is not None else text_schema()

    def get_expected_record_count(self) -> int:
        return -1

    def pages(self) -> Iterator[Any]:
        """Every answer of the run, in order."""
        s = self.settings
        params: dict[str, str] = {k: str(v) for k, v in (s.query or {}).items()}
        if s.watermark_param and self.low != NO_WATERMARK:
            params[s.watermark_param] = str(self.low)
        if s.page_size and s.paging != "none":
            params[s.page_size_param] = str(s.page_size)
        position: Any = s.first_page if s.first_page is not None else 0 if s.paging == "offset" else 1
        for number in range(s.max_pages):
            if s.paging in ("page", "offset") or (s.paging == "cursor" and number):
                params[s.paging_param] = str(position)
            document, _ = self.client.get(s.url, params)
            yield document
            count = len(select(document, s.records_path))
            if s.paging == "none" or (s.paging in ("page", "offset") and (not count or (s.page_size or 0) > count)):
                return
            if s.paging == "page":
                position += 1
            elif s.paging == "offset":
                position += count
            else:
                position = first(document, s.cursor_path)
                if position in (None, ""):
                    return
        log.warning("rest_page_limit", url=s.url, pages=s.max_pages, note="rest.paging.max reached; the rest next run")

    def read_batches(self) -> Iterator[pa.RecordBatch]:
        field = self.settings.watermark_field
        for document in self.pages():
            records = [r for r in select(document, self.settings.records_path) if isinstance(r, dict)]
            if field:
                records = [r for r in records if self._mark(r, field) > self.low]
                self.high = max([self.high, *(self._mark(r, field) for r in records)])
            if records and self.schema is None:  # text records: each one JSON object
                yield pa.RecordBatch.from_arrays([pa.array([json.dumps(r) for r in records], pa.string())],
                                                 schema=text_schema())
            elif records:
                yield to_batch(records, self.schema, self.settings.url)

    @staticmethod
    def _mark(record: dict, field: str) -> int:
        value = first(record, field)
        try:
            return int(value)
        except (TypeError, ValueError):
            raise PermanentError(f"rest.watermark.field={field}: {value!r} of a record is not a whole number") \
                from None

    def close(self) -> None:
        self.state.set_actual_high_watermark(LongWatermark(self.high))
