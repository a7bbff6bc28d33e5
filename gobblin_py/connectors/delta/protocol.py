"""What an existing Delta table asks of its writers, checked before anything of a run moves.

A Delta table lists the features its writers must honour (its protocol: ``minWriterVersion`` up to 6 implies
them, version 7 names them in ``writerFeatures``), and most only bind once the table uses them (a column with a
generation expression, a ``delta.constraints.*`` property). gpy adds the files its tasks wrote as they are, so a
feature that asks a writer to write or compute something in its files or ``add`` actions cannot be honoured, and
the table is refused (exit 2, naming it and the feature) rather than given files its readers misread:

- column mapping (``delta.columnMapping.mode`` ``name`` or ``id``): readers find a column by its physical name or
  field id, which gpy's files do not carry, and would read every row as null;
- CHECK constraints (``delta.constraints.<name>``), column invariants (``delta.invariants``), generated and
  identity columns, column defaults: values the writer must check or compute;
- row tracking, in-commit timestamps, clustering, Iceberg compatibility, domain metadata, type widening and any
  feature gpy does not know (delta-rs, which makes the commit, refuses most of them, and would fail every commit
  after the run's files moved).

Features that ask nothing of an append are fine: ``appendOnly`` (an upsert, which replaces rows, is refused when
``delta.appendOnly=true``), ``changeDataFeed`` (an append writes no change data), ``deletionVectors`` (delta-rs's
MERGE reads them), ``timestampNtz``, ``v2Checkpoint`` (delta-rs writes the checkpoints), ``variantType``.
``NOT NULL`` columns are honoured by checking the run's rows (:func:`null_problem`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gobblin_py.io import fs as fsutil

# writer features an append (or delta-rs's MERGE) of gpy's files honours as they are, or that gpy checks below;
# delta-rs itself refuses to commit to a table with any other (domainMetadata, typeWidening, …), which would
# leave the run's files moved and its commit failing every run
HONOURED = {"appendOnly", "invariants", "checkConstraints", "changeDataFeed", "generatedColumns", "columnMapping",
            "deletionVectors", "timestampNtz", "v2Checkpoint", "variantType"}
MAX_READER, MAX_WRITER = 3, 7
IDENTITY_WRITER = 6  # a legacy protocol at writer version 6 asks for identity columns, which delta-rs refuses
# column metadata a writer must act on: (key prefix, what it is)
_COLUMN_DUTIES = (("delta.generationExpression", "a generated column (delta.generationExpression)"),
                  ("delta.identity.", "an identity column (delta.identity.*)"),
                  ("delta.invariants", "a column invariant (delta.invariants)"),
                  ("CURRENT_DEFAULT", "a column default (CURRENT_DEFAULT)"))


def protocol_problem(table: Any, merge: bool) -> str | None:
    """Why gpy cannot add files to the DeltaTable ``table`` (``merge``: by an upsert) as its protocol and metadata
    ask, or None."""
    protocol = table.protocol()
    if protocol.min_reader_version > MAX_READER or protocol.min_writer_version > MAX_WRITER:
        return (f"its protocol (reader version {protocol.min_reader_version}, writer version "
                f"{protocol.min_writer_version}) is newer than any gpy knows")
    if protocol.min_writer_version == IDENTITY_WRITER:
        return f"its protocol (writer version {IDENTITY_WRITER}) asks its writers for identity columns"
    unknown = sorted(set(protocol.writer_features or ()) - HONOURED)
    if unknown:
        return (f"it has the writer feature(s) {', '.join(unknown)}, which ask a writer for what gpy's files and add "
                "actions do not hold")
    configuration = table.metadata().configuration
    mode = (configuration.get("delta.columnMapping.mode") or "none").lower()
    if mode != "none":
        return (f"it maps its columns (delta.columnMapping.mode={mode}): its readers find a column by a physical "
                "name or field id that gpy's files do not carry, and would read the run's rows as null")
    constraints = sorted(k for k in configuration if k.startswith("delta.constraints."))
    if constraints:
        named = ", ".join(f"{k.removeprefix('delta.constraints.')} ({configuration[k]})" for k in constraints)
        return (f"it has the CHECK constraint(s) {named}, which gpy cannot evaluate on the run's rows; drop them "
                "(ALTER TABLE … DROP CONSTRAINT) or publish elsewhere")
    duty = _column_duty(table.schema().fields, "")
    if duty:
        return duty
    if merge and (configuration.get("delta.appendOnly") or "").lower() == "true":
        return "it is append-only (delta.appendOnly=true), and an upsert (table.merge.key) replaces rows"
    return None


def _column_duty(fields: Sequence[Any], prefix: str) -> str | None:
    """The first column (of ``fields``, nested included) whose metadata asks a writer to compute or check it."""
    for field in fields:
        name = prefix + field.name
        for key in field.metadata:
            for start, what in _COLUMN_DUTIES:
                if key.startswith(start):
                    return f"its column {name} is {what}, which gpy's writers do not compute or check"
        inner = getattr(field.type, "fields", None)
        if inner:
            duty = _column_duty(inner, name + ".")
            if duty:
                return duty
    return None


def null_problem(path: str, records: int, column: str) -> str | None:
    """Where the Parquet file at ``path`` (``records`` rows) has a null in ``column`` (a row number, 1-based), or
    None: its footer's null counts answer, the column is read only when they say there is a null (or say
    nothing)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    if records == 0:
        return None
    fs, local = fsutil.open_fs(path)
    with fs.open(local, "rb") as stream:
        parquet = pq.ParquetFile(stream)
        if column not in parquet.schema_arrow.names:
            return f"row 1 of {path} (the file has no column {column})"
        metadata = parquet.metadata
        leaves = [metadata.schema.column(i).path for i in range(metadata.num_columns)]
        if column in leaves:  # a primitive column: its footer counts its nulls
            counted = [metadata.row_group(g).column(leaves.index(column)).statistics
                       for g in range(metadata.num_row_groups)]
            if all(s is not None and s.has_null_count for s in counted) and not sum(s.null_count for s in counted):
                return None
        values = parquet.read(columns=[column]).column(0)
    nulls = pc.indices_nonzero(pc.is_null(values.combine_chunks()))
    if len(nulls) == 0:
        return None
    return f"row {nulls[0].as_py() + 1} of {path}"
