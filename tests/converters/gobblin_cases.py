"""Running a converter on Gobblin's test inputs and writing its rows to an Avro file read back by fastavro."""

from __future__ import annotations

import json
from pathlib import Path

import fastavro
import fsspec
import pyarrow as pa

from gobblin_py.formats.avro import AvroDataWriter
from gobblin_py.sdk.schema_meta import text_schema
from gobblin_py.sdk.states import Extract, WorkUnit, WorkUnitState
from tests.support.paths import GOBBLIN_DATA

CASES = GOBBLIN_DATA / "converter"


def load(*parts: str):
    return json.loads((CASES.joinpath(*parts)).read_text())


def gobblin_state(**props: str) -> WorkUnitState:
    """Gobblin's test set-up: an extract SNAPSHOT_ONLY, namespace "namespace", table "dummy_table"."""
    unit = WorkUnit.create(Extract.create("SNAPSHOT_ONLY", "namespace", "dummy_table"))
    return WorkUnitState(unit, dict(props))


def convert_text(converter, schema_json, records: list, state: WorkUnitState) -> tuple[pa.Schema, list[pa.RecordBatch]]:
    """JSON records given as text records carrying their JSON intermediate schema."""
    converter.init(state)
    schema = text_schema(json.dumps(schema_json))
    out_schema = converter.convert_schema(schema, state)
    batch = pa.RecordBatch.from_arrays([pa.array([json.dumps(r) for r in records], pa.string())], schema=schema)
    return out_schema, list(converter.convert_batch(batch, state))


def write_and_read(tmp: Path, schema: pa.Schema, batches: list[pa.RecordBatch]) -> tuple[dict, list[dict]]:
    """Write with gpy's Avro writer, read back with fastavro: (the file's schema, its records)."""
    fs = fsspec.filesystem("file")
    writer = AvroDataWriter(fs, str(tmp / "staging" / "x.avro"), str(tmp / "out" / "x.avro"), schema, codec="null")
    for batch in batches:
        writer.write(batch)
    (path,) = writer.commit()
    with open(path, "rb") as stream:
        reader = fastavro.reader(stream)
        return json.loads(reader.metadata["avro.schema"]), list(reader)
