"""JSON text records into typed rows of an Avro schema: Gobblin's ``TestConverter`` and ``SimpleJsonConverter``.

Both take ``String`` records, each one JSON object, with the Avro schema (JSON) their extractor returned, and
make Avro records of it. Here the records are *text records* (one string column, see
:mod:`gobblin_py.sdk.schema_meta`) whose schema carries the Avro schema string (``gobblin.schema``), or, for a
batch without it, ``source.schema``. A whole batch is parsed at once by Arrow's JSON reader with the schema's
Arrow form (vectorised, in C++), and the rows keep the Avro schema for the Avro writer.

As in Gobblin, a JSON key the schema does not have fails the record (Avro refuses an unknown field); a number
for an ``int`` field must be whole (Gobblin's Gson reads every number as a double and the Avro writer then
truncates it; gpy refuses the fraction instead of dropping it).
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

from gobblin_py.formats.avro_read import arrow_schema_for
from gobblin_py.sdk.contracts import Converter
from gobblin_py.sdk.errors import GobblinPyError, UsageError
from gobblin_py.sdk.schema_meta import GOBBLIN_SCHEMA, get_meta, text_column
from gobblin_py.sdk.settings import Settings, setting
from gobblin_py.sdk.states import WorkUnitState


@dataclass(frozen=True)
class JsonTextSettings(Settings):
    """The keys of :class:`JsonTextToAvroConverter`."""

    schema: str | None = setting("source.schema", default_doc="the schema the records carry",
                                 doc="the Avro record schema (JSON) of the records, when the source gives none")


class JsonTextToAvroConverter(Converter):
    """JSON object per text record → a row of the Avro schema (typed Arrow columns carrying the Avro schema)."""

    changes_row_count = True  # rows without a text are dropped

    settings_class = JsonTextSettings

    def init(self, state: WorkUnitState) -> None:
        self.configured = JsonTextSettings.load(state).schema

    def convert_schema(self, schema: pa.Schema, state: WorkUnitState) -> pa.Schema:
        self._column = text_column(schema, type(self).__name__)
        avro = get_meta(schema, GOBBLIN_SCHEMA) or self.configured
        if not avro:
            raise UsageError(f"{type(self).__name__}: the records carry no Avro schema; set source.schema")
        self._schema = arrow_schema_for(avro, "source.schema")
        return self._schema

    def convert_batch(self, batch: pa.RecordBatch, state: WorkUnitState) -> list[pa.RecordBatch]:
        texts = batch.column(self._column).cast(pa.string())
        texts = texts.filter(pc.is_valid(texts))
        if len(texts) == 0:
            return []
        multiline = pc.any(pc.match_substring(texts, "\n")).as_py()
        data = "\n".join(texts.to_pylist()).encode("utf-8")
        parse = pa_json.ParseOptions(explicit_schema=self._plain_schema(), unexpected_field_behavior="error",
                                     newlines_in_values=bool(multiline))
        try:
            table = pa_json.read_json(io.BytesIO(data), parse_options=parse,
                                      read_options=pa_json.ReadOptions(block_size=max(1 << 20, len(data) + 1)))
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise GobblinPyError(f"{type(self).__name__}: a record does not fit the Avro schema: {exc}") from None
        table = table.select(self._schema.names).cast(self._schema)
        return [b for b in table.to_batches() if b.num_rows]

    def _plain_schema(self) -> pa.Schema:
        # Arrow's JSON reader wants nullable fields; the schema's nullability is applied by the cast after
        return pa.schema([f.with_nullable(True) for f in self._schema])

