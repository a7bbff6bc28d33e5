"""Reading Avro container files as Arrow record batches (fastavro).

There is no vectorised Avro decoder for Arrow: fastavro decodes each record into a Python dict (in C), and
each batch of ``batch_size`` dicts becomes one Arrow batch. That per-record step is forced by the format; the
batches stay bounded in size. The batch schema carries the file's Avro schema (metadata ``avro.schema``), so
enums, docs and names survive when the rows are written back to Avro unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from itertools import islice
from typing import Any, BinaryIO

import pyarrow as pa

from gobblin_py.formats.avro import AvroSchemaError, avro_to_arrow
from gobblin_py.sdk.errors import GobblinPyError, PermanentError
from gobblin_py.sdk.schema_meta import with_meta

DEFAULT_BATCH_SIZE = 65536


def arrow_schema_for(avro: dict[str, Any] | str, where: str) -> pa.Schema:
    """The Arrow schema of an Avro record schema, carrying the Avro schema itself."""
    text = avro if isinstance(avro, str) else json.dumps(avro)
    try:
        schema = avro_to_arrow(text)
    except (AvroSchemaError, KeyError, TypeError, ValueError) as exc:
        raise GobblinPyError(f"{where}: its Avro schema has no Arrow form: {exc}") from None
    return with_meta(schema, avro_schema=text)


def read_avro(stream: BinaryIO, where: str, reader_schema: str | None = None,
              batch_size: int = DEFAULT_BATCH_SIZE) -> tuple[pa.Schema, Iterator[pa.RecordBatch]]:
    """``(schema, batches)`` of one Avro file: its own (writer) schema, or ``reader_schema`` when given."""
    import fastavro

    try:
        reader = fastavro.reader(stream, reader_schema=json.loads(reader_schema) if reader_schema else None)
    except OSError as exc:  # a failed read, not the file's content: the cause says whether a retry helps
        raise GobblinPyError(f"{where}: not a readable Avro file: {exc}") from exc
    except (ValueError, TypeError, StopIteration) as exc:
        raise PermanentError(f"{where}: not a readable Avro file: {exc}") from None
    except KeyError as exc:  # fastavro's, for a header without the writer's schema
        raise PermanentError(f"{where}: not a readable Avro file: its header has no {exc}") from None
    text = reader_schema or reader.metadata.get("avro.schema")
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    schema = arrow_schema_for(text or "{}", where)

    def batches() -> Iterator[pa.RecordBatch]:
        records = iter(reader)
        while True:
            try:
                rows = list(islice(records, batch_size))
            except OSError as exc:
                raise GobblinPyError(f"{where}: corrupt Avro data: {exc}") from exc
            except (ValueError, EOFError) as exc:
                # a truncated or damaged file fails the same way every time: permanent, never retried
                raise PermanentError(f"{where}: corrupt Avro data: {exc}") from None
            if not rows:
                return
            try:
                yield pa.RecordBatch.from_pylist(rows, schema=schema)
            except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
                raise PermanentError(f"{where}: a record does not fit the file's schema: {exc}") from None

    return schema, batches()


def avro_schema_of_file(stream: BinaryIO, where: str) -> str:
    """The writer schema (JSON text) in an Avro file's header."""
    import fastavro

    try:
        header = fastavro.reader(stream).metadata["avro.schema"]
    except OSError as exc:  # a failed read, not the file's content: the cause says whether a retry helps
        raise GobblinPyError(f"{where}: not a readable Avro file: {exc}") from exc
    except (ValueError, TypeError, StopIteration) as exc:
        raise PermanentError(f"{where}: not a readable Avro file: {exc}") from None
    except KeyError as exc:  # fastavro's, for a header without the writer's schema
        raise PermanentError(f"{where}: not a readable Avro file: its header has no {exc}") from None
    return header.decode("utf-8") if isinstance(header, bytes) else header
