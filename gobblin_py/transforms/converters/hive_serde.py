"""Gobblin's ``HiveSerDeConverter`` from Avro records to ORC rows, mapped onto Arrow batches.

Gobblin reads each Avro record with Hive's AvroSerDe as ``avro.schema.literal`` says (Avro's schema resolution:
that schema's fields, by name, a field the record lacks null) and serializes it with Hive's OrcSerde for
``HiveWritableHdfsDataWriterBuilder`` to write as ORC. gpy does the same to whole batches: the columns of
``avro.schema.literal``, each cast to its type, for the ORC writer to write as they are. Other SerDe pairs are refused
naming the key (:class:`~gobblin_py.formats.settings.HiveSerdeSettings`).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from gobblin_py.formats.avro_read import arrow_schema_for
from gobblin_py.formats.settings import HiveSerdeSettings
from gobblin_py.sdk.contracts import Converter
from gobblin_py.sdk.errors import PermanentError, UsageError
from gobblin_py.sdk.states import WorkUnitState


class HiveSerDeConverter(Converter):
    """Avro records read as ``avro.schema.literal``: its columns, by name, cast to its types (see the module)."""

    settings_class = HiveSerdeSettings

    def init(self, state: WorkUnitState) -> None:
        self.settings = HiveSerdeSettings.load(state)

    def convert_schema(self, schema: pa.Schema, state: WorkUnitState) -> pa.Schema:
        reader = arrow_schema_for(self.settings.avro_literal or "", "avro.schema.literal")
        for field in reader:
            if field.name not in schema.names and not field.nullable:
                raise UsageError(f"avro.schema.literal: field '{field.name}' is not nullable and the records have no "
                                 f"such field (fields: {', '.join(schema.names)})")
        self._schema = reader
        return reader

    def convert_batch(self, batch: pa.RecordBatch, state: WorkUnitState) -> pa.RecordBatch:
        columns = []
        for field in self._schema:
            if field.name not in batch.schema.names:
                columns.append(pa.nulls(batch.num_rows, field.type))
                continue
            try:
                columns.append(pc.cast(batch.column(field.name), field.type))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                raise PermanentError(f"HiveSerDeConverter: field '{field.name}' cannot be read as "
                                     f"{field.type} (avro.schema.literal): {exc}") from None
        return pa.RecordBatch.from_arrays(columns, schema=self._schema)
