"""The merge of a snapshot and its deltas by primary key, vectorised (Arrow kernels; no per-record Python) and with
the memory bound of gpy's compaction dedup.

Each table's records are read with the table's own schema (its ``schemalocation``, else its newest file's), matched
by name to the output's schema (the last delta's: a column it lacks is dropped, one a table lacks takes its Avro
default, else null) and tagged with the table's rank (0 the snapshot, ``i`` delta ``i``); then
:func:`~..dedup.dedup_dataset` keeps, of each key, the record of the greatest rank (of equal ranks, the first read),
spilling by key hash past ``compaction.local.partition.bytes``.

What a merge read is one JSON document (:func:`inputs_document`): each table's folder, primary key and files (path,
size, modification time), with a digest of them. The work unit carries it, and the output keeps it as
``_HIVE_COMPACTION_COMPLETE``: a run whose inputs have the digest the output holds has nothing to do.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from gobblin_py.connectors.compaction.dedup import DedupSpec, dedup_dataset
from gobblin_py.connectors.compaction.finder import InputFile, list_files
from gobblin_py.connectors.compaction.hive.settings import Table
from gobblin_py.connectors.compaction.inputs import conform, dataset_schema, read_files
from gobblin_py.formats.avro_read import arrow_schema_for
from gobblin_py.io import fs as fsutil
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.logs import get_logger

log = get_logger(__name__)

RANK = "__gpy_hive_rank"
DONE = "_HIVE_COMPACTION_COMPLETE"
_NOT_KEYS = (pa.types.is_struct, pa.types.is_list, pa.types.is_large_list, pa.types.is_map, pa.types.is_union,
             pa.types.is_fixed_size_list, pa.types.is_null)


def list_table(table: Table) -> list[InputFile]:
    """The data files of a table (those with its extension, when it names one); UsageError when its folder is
    missing (a typo must not merge the deltas into nothing)."""
    fs, root = fsutil.open_fs(table.location)
    if not fs.exists(root):
        raise UsageError(f"{table.key('datalocation')}: {table.location} does not exist")
    files = list_files(fs, root)
    if table.extension:
        ext = table.extension if table.extension.startswith(".") else f".{table.extension}"
        files = [f for f in files if f.path.endswith(ext)]
    return files


def _field_type(schema: pa.Schema, path: str) -> pa.DataType | None:
    fields: Sequence[pa.Field] = list(schema)
    found: pa.DataType | None = None
    for name in path.split("."):
        match = next((f for f in fields if f.name == name), None)
        if match is None:
            return None
        found = match.type
        fields = list(found) if pa.types.is_struct(found) else []
    return found


def check_key(schema: pa.Schema, table: Table) -> None:
    """UsageError naming ``<table>.pkey`` unless each key field is a scalar field of ``schema``."""
    for path in table.pkey:
        found = _field_type(schema, path)
        if found is None or any(test(found) for test in _NOT_KEYS):
            what = "not a field" if found is None else f"a {found} field, not a scalar one"
            raise UsageError(f"{table.key('pkey')}: {path} is {what} of the {table.role}'s records "
                             f"({', '.join(schema.names)})")
    if RANK in schema.names:
        raise UsageError(f"{table.key('datalocation')}: the records have a field {RANK}, which the merge uses")


def table_schema(table: Table, files: Sequence[InputFile], fmt: str) -> pa.Schema | None:
    """The schema a table's records are read with (None for a table without files and schema file)."""
    if table.schema_location:
        if fmt != "avro":
            raise UsageError(f"{table.key('schemalocation')}: an Avro schema, and the files are {fmt}: they carry "
                             "their own schema (unset it)")
        fs, path = fsutil.open_fs(table.schema_location)
        try:
            text = fs.cat_file(path).decode()
        except FileNotFoundError:
            raise UsageError(f"{table.key('schemalocation')}: {table.schema_location} does not exist") from None
        return arrow_schema_for(text, table.schema_location)
    if not files:
        return None
    return dataset_schema(fsutil.open_fs(table.location)[0], files, fmt)


def inputs_document(fmt: str, tables: Sequence[Table], files: Sequence[Sequence[InputFile]]) -> str:
    """The JSON a merge of these files is known by (see the module)."""
    body = {"format": fmt, "pkey": list(tables[0].pkey), "inputs": [
        {"table": t.role, "location": t.location, "schemalocation": t.schema_location,
         "files": [[f.path, f.size, f.mtime_ms] for f in fs]} for t, fs in zip(tables, files, strict=True)]}
    digest = hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    return json.dumps({"digest": digest, **body}, separators=(",", ":"))


def digest_of(document: str | bytes) -> str | None:
    try:
        value = json.loads(document).get("digest")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None


def merged_already(output: str, document: str) -> bool:
    """Whether the output is the merge of these inputs (its ``_HIVE_COMPACTION_COMPLETE`` has their digest)."""
    fs, root = fsutil.open_fs(output)
    try:
        held = fs.cat_file(posixpath.join(root, DONE))
    except FileNotFoundError:
        return False
    return digest_of(held) == digest_of(document)


def _avro_defaults(schema: pa.Schema) -> dict[str, object]:
    """The defaults of the top-level fields of the Avro schema ``schema`` carries ({} without one)."""
    text = (schema.metadata or {}).get(b"avro.schema")
    try:
        record = json.loads(text) if text else {}
    except ValueError:
        return {}
    fields = record.get("fields") if isinstance(record, dict) else None
    return {f["name"]: f["default"] for f in fields or () if isinstance(f, dict) and "default" in f}


def _default_scalar(value: object, column: pa.Field, table: Table) -> pa.Scalar:
    if isinstance(value, str) and (pa.types.is_binary(column.type) or pa.types.is_fixed_size_binary(column.type)):
        value = value.encode("latin-1")  # Avro's JSON form of bytes: one code point per byte
    try:
        return pa.scalar(value, column.type)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError, ValueError) as exc:
        raise UsageError(f"{table.key('datalocation')}: the {table.role}'s records lack {column.name}, and its Avro "
                         f"default {value!r} has no {column.type} value: {exc}") from None


@dataclass
class Merge:
    """The merge of ``tables`` (snapshot first, then the deltas in order), each with its ``files``."""

    tables: list[Table]
    files: list[list[InputFile]]
    fmt: str

    @classmethod
    def from_document(cls, document: str, tables: list[Table]) -> Merge:
        body = json.loads(document)
        files = [[InputFile(p, int(s), int(m)) for p, s, m in item["files"]] for item in body["inputs"]]
        return cls(tables, files, str(body["format"]))

    def schemas(self) -> list[pa.Schema | None]:
        """Each table's schema, its key fields checked (UsageError naming the table's pkey key)."""
        out = []
        for table, files in zip(self.tables, self.files, strict=True):
            schema = table_schema(table, files, self.fmt)
            if schema is not None:
                check_key(schema, table)
            out.append(schema)
        return out

    def output_schema(self, schemas: Sequence[pa.Schema | None]) -> pa.Schema:
        """The last delta's schema (Gobblin's output schema); the newest before it when that delta is empty."""
        return next((s for s in reversed(schemas) if s is not None), pa.schema([]))

    def fills(self, schemas: Sequence[pa.Schema | None]) -> list[dict[str, pa.Scalar]]:
        """Per table, the value of each output column its records lack: the column's Avro default (what Avro's
        schema resolution gives an older record), else null; UsageError naming the table when the column can be
        neither (a non-null column without a default), before any record is read."""
        target = self.output_schema(schemas)
        defaults = _avro_defaults(target)
        out: list[dict[str, pa.Scalar]] = []
        for table, schema in zip(self.tables, schemas, strict=True):
            values: dict[str, pa.Scalar] = {}
            has = set(target.names if schema is None else schema.names)  # a table without records lacks nothing
            for column in target:
                if column.name in has:
                    continue
                if column.name in defaults:
                    values[column.name] = _default_scalar(defaults[column.name], column, table)
                elif not column.nullable:
                    raise UsageError(f"{table.key('datalocation')}: the {table.role}'s records lack {column.name}, "
                                     f"a non-null column of the output's schema without a default (give it one, "
                                     f"or make it nullable)")
            out.append(values)
        return out

    def batches(self, partition_bytes: int, spill_dir: str) -> Iterator[pa.RecordBatch]:
        """The merged records (see the module), in the output schema."""
        schemas = self.schemas()
        target = self.output_schema(schemas)
        if not target.names:
            return
        ranked = target.append(pa.field(RANK, pa.int32(), nullable=False))
        counts = [0] * len(self.tables)
        fills = self.fills(schemas)

        def tagged() -> Iterator[pa.RecordBatch]:
            for i, (table, files, schema) in enumerate(zip(self.tables, self.files, schemas, strict=True)):
                if schema is None:
                    continue
                fs = fsutil.open_fs(table.location)[0]
                rank = pa.scalar(table.rank, pa.int32())
                for batch in read_files(fs, files, self.fmt, schema):
                    counts[i] += batch.num_rows
                    if fills[i]:
                        batch = pa.RecordBatch.from_arrays(
                            [*batch.columns, *(pa.repeat(v, batch.num_rows) for v in fills[i].values())],
                            names=[*batch.schema.names, *fills[i]])
                    batch = conform(batch, target, f"{table.key('datalocation')} {table.location}")
                    yield pa.RecordBatch.from_arrays([*batch.columns, pa.repeat(rank, batch.num_rows)],
                                                     schema=ranked)

        spec = DedupSpec(tuple(self.tables[0].pkey), (RANK,))
        kept: dict[int, int] = {}
        size = sum(f.size for files in self.files for f in files)
        for batch in dedup_dataset(tagged, ranked, spec, size, partition_bytes, spill_dir):
            for item in pc.value_counts(batch.column(RANK)).to_pylist():  # per batch, not per record
                kept[item["values"]] = kept.get(item["values"], 0) + item["counts"]
            yield pa.RecordBatch.from_arrays(batch.columns[:-1], schema=target)
        roles = {t.rank: t.role for t in self.tables}
        log.info("hive_compaction_merged", records_read=sum(counts), records_kept=sum(kept.values()),
                 read={t.role: n for t, n in zip(self.tables, counts, strict=True)},
                 kept={roles[rank]: n for rank, n in sorted(kept.items())}, key=",".join(spec.keys))
