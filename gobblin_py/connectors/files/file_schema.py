"""One schema per dataset for the file source: decided once, carried on the work units, recorded for the next run.

A file source without a declared schema learns types from the files themselves (CSV and JSON by inference), so
two files of one dataset could publish one column as two types: ``amount`` a double in one file and a string
in the next, ``name`` a string in one file and binary (bytes that are not UTF-8) in the next. The source
therefore decides each dataset's schema once per run and every file is read to it (see
:mod:`gobblin_py.connectors.files.file_extractor`):

- the schema its committed files had in the dataset's previous run, recorded on their task states under
  :data:`DATASET_SCHEMA_KEY` (unless ``source.filebased.schema.change=allow``);
- else, when the run reads several files of the dataset, the schema of the first of them, learnt while the
  run is planned (CSV and JSON types from its first :data:`INFERENCE_BYTES` at most);
- else the one file's own schema.

A column that is all empty where the schema was learnt has the ``null`` type: it stands for "not known yet",
and a file giving it a type is not a change.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable

import pyarrow as pa

DATASET_SCHEMA_KEY = "source.filebased.dataset.schema"  # base64 Arrow IPC: the dataset's schema
SCHEMA_SOURCE_KEY = "source.filebased.dataset.schema.from"  # where it was learnt: a file, or the previous run
PREVIOUS_RUN = "the dataset's previous run"
INFERENCE_BYTES = 1 << 20


def encode(schema: pa.Schema) -> str:
    """``schema`` (without its metadata) as text for a work unit or a state."""
    return base64.b64encode(schema.remove_metadata().serialize().to_pybytes()).decode("ascii")


def decode(text: str) -> pa.Schema:
    """The schema :func:`encode` wrote."""
    return pa.ipc.read_schema(pa.py_buffer(base64.b64decode(text)))


def merged(schemas: Iterable[pa.Schema]) -> pa.Schema | None:
    """The first schema, its ``null`` columns typed by the first later schema that types them."""
    result: pa.Schema | None = None
    for schema in schemas:
        if result is None:
            result = schema
            continue
        for index, field in enumerate(result):
            if pa.types.is_null(field.type) and field.name in schema.names:
                typed = schema.field(field.name)
                if not pa.types.is_null(typed.type):
                    result = result.set(index, field.with_type(typed.type))
    return result


def differences(reference: pa.Schema, actual: pa.Schema, types: bool = True) -> list[str]:
    """How ``actual`` differs from ``reference``, one phrase per column: columns new or missing, then (``types``)
    columns whose type changed (a ``null`` column on either side is no change)."""
    out = [f"column '{name}' is new" for name in actual.names if name not in reference.names]
    out += [f"column '{name}' is missing" for name in reference.names if name not in actual.names]
    for field in reference if types else ():
        if field.name in actual.names and not pa.types.is_null(field.type):
            other = actual.field(field.name).type
            if other != field.type and not pa.types.is_null(other):
                out.append(f"column '{field.name}' changed from {field.type} to {other}")
    return out
