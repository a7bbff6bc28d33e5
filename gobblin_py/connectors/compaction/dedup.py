"""Deduplicating a dataset's records with bounded memory, vectorised (Arrow kernels; no per-record Python).

What a record's key is (:func:`key_paths`), as Gobblin's dedup job runner chooses it (``compaction.job.dedup.key``):

- ``ALL``: every field, nested ones included, except lists and maps (Gobblin's "uncomparable" fields);
- ``KEY`` (the default): the fields whose Avro ``doc`` ends in ``primarykey`` (any case), nested ones included;
  for input without docs (Parquet, ORC) the fields ``compaction.dedup.key.fields`` names; ALL when there are none;
- ``CUSTOM``: the fields of the Avro schema ``compaction.job.avro.key.schema.loc`` names.

Which record of a key survives (:func:`dedup_table`): with ``compaction.dedup.latest.fields``, the one whose values
of those fields are greatest (compared in order, a null the least; Gobblin's delta-field comparator); of equals,
and without such fields, the first read — files by path, records in file order (Gobblin keeps its reducer's
first, which it does not define).

Memory (:func:`dedup_dataset`): a dataset whose input is at most ``compaction.local.partition.bytes`` is
deduplicated at once; a larger one is first hash-partitioned by key into Arrow spill files, then each partition is
deduplicated alone (rows of one key always share a partition). The key hash is Polars' (``hash_rows``): spilling
needs Polars installed (``gobblin_py[compaction]``), and without it a dataset that large is refused before anything
is written. The Spark engines shuffle by the same hash (:mod:`.cluster`) and run :func:`dedup_table` on each part.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from gobblin_py.sdk.errors import UsageError

PARTITION_KEY = "compaction.local.partition.bytes"
OUTPUT_ROWS = 1 << 17  # records a deduplicated batch holds at most
HASH_COLUMN = "__gpy_key_hash"  # a spilled record's key hash
_UNCOMPARABLE = (pa.types.is_list, pa.types.is_large_list, pa.types.is_map, pa.types.is_union,
                 pa.types.is_fixed_size_list, pa.types.is_null)


@dataclass(frozen=True)
class DedupSpec:
    """How a dataset is deduplicated: the key's field paths (dotted) and the fields whose greatest values win."""

    keys: tuple[str, ...]
    latest: tuple[str, ...] = ()


def _leaves(fields: Sequence[pa.Field], prefix: str = "") -> list[str]:
    out = []
    for field in fields:
        path = f"{prefix}{field.name}"
        if pa.types.is_struct(field.type):
            out.extend(_leaves(list(field.type), f"{path}."))
        elif not any(test(field.type) for test in _UNCOMPARABLE):
            out.append(path)
    return out


def _avro_record(avro: object) -> dict | None:
    """The record schema in an Avro type (a record, or a union holding one)."""
    if isinstance(avro, dict) and avro.get("type") == "record":
        return avro
    if isinstance(avro, dict) and isinstance(avro.get("type"), (dict, list)):
        return _avro_record(avro["type"])
    if isinstance(avro, list):
        return next((r for r in (_avro_record(t) for t in avro) if r is not None), None)
    return None


def _primary_keys(record: dict, prefix: str = "") -> list[str]:
    out = []
    for field in record.get("fields", []):
        path = f"{prefix}{field['name']}"
        if str(field.get("doc") or "").lower().endswith("primarykey"):
            out.append(path)
            continue
        nested = _avro_record(field.get("type"))
        if nested is not None:
            out.extend(_primary_keys(nested, f"{path}."))
    return out


def key_paths(schema: pa.Schema, mode: str, key_fields: Sequence[str] = (), custom_schema: str | None = None) -> list[str]:
    """The key's leaf field paths in ``schema`` for a ``compaction.job.dedup.key`` mode (see the module)."""
    leaves = _leaves(list(schema))
    chosen: list[str] = []
    if mode == "CUSTOM" and custom_schema:
        record = _avro_record(json.loads(custom_schema))
        chosen = _leaves(list(_arrow_of(record)), "") if record else []
    elif mode == "KEY":
        avro = (schema.metadata or {}).get(b"avro.schema")
        record = _avro_record(json.loads(avro)) if avro else None
        chosen = _primary_keys(record) if record else []
        chosen = chosen or list(key_fields)
    if not chosen:
        return leaves
    missing = [p for p in chosen if not any(leaf == p or leaf.startswith(f"{p}.") for leaf in leaves)]
    if missing:
        raise UsageError(f"the key fields {', '.join(missing)} are not (comparable) fields of the records "
                         f"({', '.join(leaves)})")
    return [leaf for leaf in leaves if any(leaf == p or leaf.startswith(f"{p}.") for p in chosen)]


def _arrow_of(record: dict) -> pa.Schema:
    from gobblin_py.formats.avro import avro_to_arrow

    return avro_to_arrow(json.dumps(record))


def _column(data: pa.Table | pa.RecordBatch, path: str) -> pa.Array | pa.ChunkedArray:
    head, *rest = path.split(".")
    column = data.column(head)
    for name in rest:  # struct_field keeps a null parent's child null
        column = pc.struct_field(column, [name])
    return column


_FLOAT_BITS = {16: pa.int16(), 32: pa.int32(), 64: pa.int64()}


def _bits(column: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """A floating-point column as its bit patterns: keys compare as their bytes do (0.0 and -0.0 are two keys,
    as in Gobblin's comparison of serialized keys), the same on every path."""
    if not pa.types.is_floating(column.type):
        return column
    target = _FLOAT_BITS[column.type.bit_width]
    if isinstance(column, pa.ChunkedArray):
        return pa.chunked_array([chunk.view(target) for chunk in column.chunks], target)
    return column.view(target)


def key_columns(data: pa.Table | pa.RecordBatch, paths: Sequence[str]) -> pa.Table:
    """The key's columns of ``data`` as a flat table (``k0``, ``k1``, …), floating-point ones as their bits."""
    return pa.table({f"k{i}": _bits(_column(data, p)) for i, p in enumerate(paths)})


def positions(n: int) -> pa.Array:
    """0, 1, …, n − 1 (Arrow alone: the positions of n true values)."""
    return pc.indices_nonzero(pc.fill_null(pa.nulls(n, pa.bool_()), True))


def ascending(values: pa.Array) -> pa.Array:
    """``values`` sorted; most often they already are, which one comparison pass tells."""
    if len(values) < 2 or pc.all(pc.less(values[:-1], values[1:])).as_py():
        return values
    return pc.take(values, pc.sort_indices(values))


def first_rows_exact(keys: pa.Table) -> pa.Array:
    """The position of the first row of each distinct key of ``keys``, ascending: an Arrow group-by on the key's
    columns (its single-threaded form numbers groups as it meets them, so the minimums come out ascending;
    :func:`ascending` checks)."""
    aux = keys.append_column("__pos", positions(keys.num_rows))
    names = list(keys.column_names)
    return ascending(aux.group_by(names, use_threads=False).aggregate([("__pos", "min")]).column("__pos_min")
                     .combine_chunks())


def _polars_hashes(keys: pa.Table) -> pa.Array | None:
    try:
        import polars as pl
    except ImportError:
        return None
    try:
        frame = pl.from_arrow(keys)
        assert isinstance(frame, pl.DataFrame)
        return frame.hash_rows(seed=0).to_arrow()
    except (pl.exceptions.PolarsError, pa.ArrowException, TypeError, ValueError):  # a type Polars does not take
        return None


def key_hashes(data: pa.Table | pa.RecordBatch, paths: Sequence[str]) -> pa.Array | None:
    """Each record's key hashed to 64 bits (Polars' ``hash_rows``, seed 0: the same on every engine and machine);
    None when Polars is not installed or takes not the key's types."""
    return _polars_hashes(key_columns(data, paths))


def first_mask(keys: pa.Table, hashes: pa.Array | None = None) -> pa.Array | None:
    """Which rows of ``keys`` are the first of their key (a boolean mask), in about half the time and memory of
    :func:`first_rows_exact`; None when Polars is not installed or takes not the key's types. Each key is hashed to
    64 bits (``hashes``, when the caller has them: :func:`key_hashes`) and the first row of each hash kept; a hash
    is not a key, so every later row is then compared, field by field, with the first row of its hash — should two
    different keys ever share a hash, None again (the exact group-by decides)."""
    if hashes is None:
        hashes = _polars_hashes(keys)
    if hashes is None:
        return None
    import polars as pl

    series = pl.Series("h", hashes)
    # the first row of each hash: arg_unique gives its position, a third of is_first_distinct's time
    first = pl.zeros(len(series), pl.Boolean, eager=True).scatter(series.arg_unique(), True)
    rows = pl.DataFrame({"h": series, "pos": pl.int_range(len(series), eager=True)})
    later = rows.filter(~first)
    if later.height:
        earlier = rows.filter(first).join(later.select("h").unique(), on="h").rename({"pos": "first"})
        pairs = later.join(earlier, on="h")
        mine = pl.from_arrow(keys.take(pairs["pos"].to_arrow()))
        theirs = pl.from_arrow(keys.take(pairs["first"].to_arrow()))
        assert isinstance(mine, pl.DataFrame) and isinstance(theirs, pl.DataFrame)
        same = pl.DataFrame([mine[c].eq_missing(theirs[c]).alias(c) for c in mine.columns]).select(
            pl.all_horizontal(pl.all())).to_series()
        if not bool(same.all()):
            return None  # two keys, one hash
    return first.to_arrow()


def first_rows(keys: pa.Table, hashes: pa.Array | None = None) -> pa.Array:
    """The position of the first row of each distinct key of ``keys``, ascending."""
    mask = first_mask(keys, hashes)
    return pc.indices_nonzero(mask) if mask is not None else first_rows_exact(keys)


def dedup_table(table: pa.Table, spec: DedupSpec) -> pa.Table:
    """One record per key (see the module for which), in the order the survivors were read."""
    return pa.Table.from_batches(list(dedup_batches(table, spec)), schema=table.schema)


def dedup_batches(table: pa.Table, spec: DedupSpec, hashes: pa.Array | None = None,
                  rows: int = OUTPUT_ROWS) -> Iterator[pa.RecordBatch]:
    """:func:`dedup_table`'s records as batches of at most ``rows``, each selected from its slice of ``table`` as
    it is asked for: no second copy of the whole dataset is made, and a writer's batch frees memory the next reuses
    (a whole-table filter costs several times the CPU, most of it fresh pages). ``hashes``: the records'
    :func:`key_hashes`, when the caller made them as it read."""
    if table.num_rows == 0:
        return
    if not spec.keys:
        yield from table.to_batches(max_chunksize=rows)
        return
    keys = key_columns(table, spec.keys)
    if not spec.latest:
        mask = first_mask(keys, hashes)
        if mask is not None:
            for start in range(0, table.num_rows, rows):
                part = table.slice(start, rows)
                kept = pc.filter(part, mask.slice(start, part.num_rows))
                yield from (batch for batch in kept.to_batches() if batch.num_rows)
            return
        chosen = first_rows_exact(keys)
    else:
        ranked = pa.table({**{f"l{i}": _column(table, path) for i, path in enumerate(spec.latest)},
                           "__row": positions(table.num_rows)})
        order = pc.sort_indices(ranked, sort_keys=[(f"l{i}", "descending") for i in range(len(spec.latest))]
                                + [("__row", "ascending")])  # nulls last: a null loses
        ordered = pc.take(hashes, order) if hashes is not None else None
        chosen = ascending(pc.take(order, first_rows(keys.take(order), ordered)))  # the survivors in read order
    for start in range(0, len(chosen), rows):
        yield from table.take(chosen.slice(start, rows)).to_batches()


def hash_partitions(batch: pa.RecordBatch, paths: Sequence[str], count: int) -> pa.Array:
    """Each record's partition of ``count`` (a power of two) by the hash of its key columns (Polars')."""
    return partition_of(_splitting_hashes(batch, paths), count)


def _splitting_hashes(batch: pa.RecordBatch, paths: Sequence[str]) -> pa.Array:
    """:func:`key_hashes`, which splitting a dataset by key cannot do without."""
    hashes = key_hashes(batch, paths)
    if hashes is None:
        raise UsageError(f"the key fields {', '.join(paths)} are of types Polars cannot hash, which splitting by "
                         f"key needs; raise {PARTITION_KEY} to deduplicate in memory")
    return hashes


def partition_of(hashes: pa.Array, count: int) -> pa.Array:
    """The partition of ``count`` (a power of two) each key hash falls in."""
    return pc.bit_wise_and(hashes, pa.scalar(count - 1, pa.uint64()))


def partition_count(input_bytes: int, partition_bytes: int) -> int:
    """How many partitions a dataset is spilled into: a power of two, each about ``partition_bytes`` of input."""
    if input_bytes <= partition_bytes:
        return 1
    return 1 << math.ceil(math.log2(math.ceil(input_bytes / partition_bytes)))


def dedup_dataset(batches: Callable[[], Iterator[pa.RecordBatch]], schema: pa.Schema, spec: DedupSpec,
                  input_bytes: int, partition_bytes: int, spill_dir: str) -> Iterator[pa.RecordBatch]:
    """The deduplicated records of a dataset whose records ``batches()`` yields (see the module). Keys are hashed
    as the records are read (the hashing overlaps the reading threads), once: a spilled record carries its hash."""
    count = partition_count(input_bytes, partition_bytes)
    if count == 1:
        read, hashed = [], []
        for batch in batches():
            read.append(batch)
            hashed.append(key_hashes(batch, spec.keys) if spec.keys else None)
        table = pa.Table.from_batches(read, schema=schema)
        whole = None if any(h is None for h in hashed) or not hashed else pa.concat_arrays(hashed)
        del read, hashed
        yield from dedup_batches(table, spec, whole)
        return
    if not has_polars():
        raise UsageError(f"{PARTITION_KEY}: the dataset's {input_bytes} bytes are more than {partition_bytes}, and "
                         "spilling it by key needs Polars (pip install 'gobblin_py[compaction]'); or raise the key")
    os.makedirs(spill_dir, exist_ok=True)
    paths = [os.path.join(spill_dir, f"part-{i:05d}.arrow") for i in range(count)]
    spilled = schema.append(pa.field(HASH_COLUMN, pa.uint64()))
    writers: dict[int, pa.ipc.RecordBatchStreamWriter] = {}
    try:
        for batch in batches():
            for i, piece in split_by_partition(batch, spec.keys, count):
                if i not in writers:
                    writers[i] = pa.ipc.new_stream(paths[i], spilled)
                writers[i].write_batch(piece)
        for writer in writers.values():
            writer.close()
        for i in sorted(writers):
            with pa.memory_map(paths[i]) as source:
                table = pa.ipc.open_stream(source).read_all()
            os.unlink(paths[i])
            hashes = table.column(HASH_COLUMN).combine_chunks()
            yield from dedup_batches(table.drop_columns([HASH_COLUMN]), spec, hashes)
    finally:
        for i, path in enumerate(paths):
            if os.path.exists(path):
                if i in writers:
                    try:
                        writers[i].close()
                    except (OSError, pa.ArrowInvalid):
                        pass
                os.unlink(path)


def split_by_partition(batch: pa.RecordBatch, paths: Sequence[str],
                       count: int) -> Iterator[tuple[int, pa.RecordBatch]]:
    """``batch``'s records by the partition of their key, each with its key hash (column :data:`HASH_COLUMN`), in
    read order within a partition: one stable sort and one gather, not a filter pass per partition."""
    hashes = _splitting_hashes(batch, paths)
    parts = partition_of(hashes, count)
    order = pc.sort_indices(parts)  # stable: a partition's records keep their order
    grouped = batch.append_column(HASH_COLUMN, hashes).take(order)
    start = 0
    counts = {entry["values"]: entry["counts"] for entry in pc.value_counts(parts).to_pylist()}
    for i in sorted(counts):
        yield i, grouped.slice(start, counts[i])
        start += counts[i]


def has_polars() -> bool:
    """Whether Polars (the key hash of spilling and of the Spark shuffle) is installed."""
    try:
        import polars  # noqa: F401
    except ImportError:
        return False
    return True


def checked_spec(schema: pa.Schema, mode: str, key_fields: Sequence[str], custom_schema: str | None,
                 latest: Sequence[str]) -> DedupSpec:
    """The dedup spec of a dataset, its latest-fields checked against the schema."""
    spec = DedupSpec(tuple(key_paths(schema, mode, key_fields, custom_schema)), tuple(latest))
    leaves = set(_leaves(list(schema)))
    missing = [f for f in latest if f not in leaves]
    if missing:
        raise UsageError(f"compaction.dedup.latest.fields: {', '.join(missing)} not among the records' fields")
    return spec
