"""Gobblin's ``WikipediaConverter`` (revisions' JSON into rows of ``wikipedia.avro.schema``) and
``WikipediaPartitioner`` (a folder per page title)."""

from __future__ import annotations

import json

import pyarrow as pa

from gobblin_py.connectors.files.partitioners import NULL_PARTITION, find_column
from gobblin_py.connectors.rest.records import schema_of, to_batch
from gobblin_py.connectors.wikipedia.settings import WikipediaConverterSettings
from gobblin_py.sdk.contracts import Converter
from gobblin_py.sdk.errors import PermanentError, UsageError
from gobblin_py.sdk.partitioner import PartitionFields, WriterPartitioner
from gobblin_py.sdk.schema_meta import GOBBLIN_SCHEMA, get_meta, text_column
from gobblin_py.sdk.states import State, WorkUnitState

CONTENT = "content"  # the revision text's field: MediaWiki names it "*", which Avro does not allow


class WikipediaConverter(Converter):
    """Each revision's JSON as a row of the Avro schema: ``*`` becomes ``content``, fields not in it are dropped."""

    settings_class = WikipediaConverterSettings

    def init(self, state: WorkUnitState) -> None:
        self.configured = WikipediaConverterSettings.load(state).schema

    def convert_schema(self, schema: pa.Schema, state: WorkUnitState) -> pa.Schema:
        self._column = text_column(schema, type(self).__name__)
        avro = get_meta(schema, GOBBLIN_SCHEMA) or self.configured
        converted = schema_of(avro, "wikipedia.avro.schema")
        if converted is None:
            raise UsageError("WikipediaConverter: the records carry no Avro schema; set wikipedia.avro.schema")
        self._schema = converted
        return converted

    def convert_batch(self, batch: pa.RecordBatch, state: WorkUnitState) -> pa.RecordBatch:
        rows = []
        for text in batch.column(self._column).to_pylist():
            try:
                record = json.loads(text)
            except (TypeError, json.JSONDecodeError) as exc:
                raise PermanentError(f"WikipediaConverter: a revision is not JSON: {exc}: {text!r:.200}") from None
            if CONTENT not in record and "*" in record:
                record[CONTENT] = record.pop("*")
            rows.append(record)
        return to_batch(rows, self._schema, "WikipediaConverter",
                        lambda i: f"revision {rows[i].get('revid')} of {rows[i].get('title')!r}")


class WikipediaPartitioner(WriterPartitioner):
    """Gobblin's ``WikipediaPartitioner``: a folder per page (the ``title`` field)."""

    def check_schema(self, schema: pa.Schema) -> None:
        if find_column(schema, "title") is None:
            raise UsageError(f"WikipediaPartitioner: the records have no title field (fields: {', '.join(schema.names)})")

    def init(self, state: State, branches: int, branch: int) -> None:
        pass

    def partition(self, batch: pa.RecordBatch) -> PartitionFields:
        return [("title", batch.column("title").cast(pa.large_string()).fill_null(NULL_PARTITION))]
