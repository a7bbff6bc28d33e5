"""A dataset deduplicated by the whole cluster (a cluster task, :mod:`gobblin_py.sdk.cluster_tasks`): on the
Spark engines a compaction that deduplicates is one Spark job with a shuffle, not one executor's task.

1. **Read** (a few Spark tasks per task slot, whole files each): each file is read as Arrow batches of the dataset's schema (the
   same readers and schema rules as everywhere, :mod:`.inputs`); each batch is split by the hash of its key
   columns into ``P`` parts (Polars' ``hash_rows``, the hash the local spill uses), and each piece travels as one
   row — its part, its place in the read order (file, batch) and its records as Arrow IPC bytes. Spark never
   converts a record, so every type (nested records, maps, Avro's own schema) arrives as it was read.
2. **Shuffle**: Spark repartitions the pieces by part into ``P`` partitions and sorts each by (part, place): all
   records of a key meet in one partition, in the order they were read.
3. **Deduplicate and write** (one Spark task per partition): each part is deduplicated alone by the same
   function as on one machine (:func:`.dedup.dedup_table`, so which record survives is the same on every engine),
   and written by the compaction's own format writers into the new output folder, one file per partition, named
   ``part-r-<records>.<run start>.<partition>.<ext>``. A retried or speculative attempt writes the same file under
   the same name; the driver then removes anything in the folder no successful task reported.

``P`` is a power of two: at least the cluster's parallelism, and enough that one part holds about
``compaction.local.partition.bytes`` of input — an executor holds one part (and the batch it reads) in memory.
"""

from __future__ import annotations

import math
import posixpath
import uuid
from collections.abc import Iterator, Mapping
from functools import partial
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from gobblin_py.connectors.compaction.dedup import DedupSpec, dedup_table, hash_partitions, partition_count
from gobblin_py.connectors.compaction.finder import InputFile
from gobblin_py.connectors.compaction.inputs import read_file
from gobblin_py.connectors.compaction.writer import PartFile
from gobblin_py.io import fs as fsutil
from gobblin_py.sdk.logs import get_logger

log = get_logger(__name__)

PIECES = "part int, seq long, data binary"
WRITTEN = "path string, read long, records long, bytes long"
_SEQ_BITS = 32  # a piece's place in the read order: file index << 32 | batch number


def parts_for(input_bytes: int, partition_bytes: int, parallelism: int) -> int:
    """How many parts (and shuffle partitions) a dataset is split into (see the module)."""
    wanted = max(partition_count(input_bytes, partition_bytes), max(1, parallelism))
    return 1 << math.ceil(math.log2(wanted))


def _ipc(batch: pa.RecordBatch) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    return sink.getvalue().to_pybytes()


def _read_pieces(files: list[InputFile], fmt: str, schema: pa.Schema, keys: tuple[str, ...], parts: int,
                 job_props: Mapping[str, str], ids: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Executor: the files whose indexes arrive, as pieces by part (see the module)."""
    from gobblin_py.io import fs_settings

    fs_settings.apply(job_props)
    for id_batch in ids:
        for index in id_batch.column(0).to_pylist():
            f = files[index]
            fs = fsutil.open_fs(f.path)[0]
            for number, batch in enumerate(read_file(fs, f, fmt, schema)):
                if batch.num_rows == 0:
                    continue
                seq = (index << _SEQ_BITS) | number
                if parts == 1:
                    found, data = [0], [_ipc(batch)]
                else:
                    part_of = hash_partitions(batch, keys, parts)
                    found = pc.unique(part_of).to_pylist()
                    data = [_ipc(batch.filter(pc.equal(part_of, pa.scalar(p, pa.uint64())))) for p in found]
                yield pa.RecordBatch.from_arrays(
                    [pa.array(found, pa.int32()), pa.array([seq] * len(found), pa.int64()), pa.array(data, pa.binary())],
                    names=["part", "seq", "data"])


def _dedup_pieces(spec: DedupSpec, fmt: str, schema: pa.Schema, folder: str, stamp: str,
                  job_props: Mapping[str, str], rows: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Executor: the sorted pieces of one shuffle partition, each part deduplicated, into one file."""
    from pyspark import TaskContext

    from gobblin_py.io import fs_settings

    fs_settings.apply(job_props)
    context = TaskContext.get()
    number = context.partitionId() if context is not None else 0
    fs = fsutil.open_fs(folder)[0]
    out: PartFile | None = None
    read = 0
    current: int | None = None
    pieces: list[pa.RecordBatch] = []

    def flush() -> None:
        nonlocal out, pieces
        if not pieces:
            return
        table = dedup_table(pa.Table.from_batches(pieces, schema=schema), spec)
        pieces = []
        if out is None:
            out = PartFile(fs, folder, fmt, schema, stamp, number, tag=f"-{number}-{uuid.uuid4().hex[:12]}")
        for batch in table.to_batches(max_chunksize=65536):
            out.write(batch)

    try:
        for rows_batch in rows:
            for part, data in zip(rows_batch.column("part").to_pylist(), rows_batch.column("data"), strict=True):
                if part != current:
                    flush()
                    current = part
                with pa.ipc.open_stream(data.as_buffer()) as reader:
                    for piece in reader:
                        read += piece.num_rows
                        pieces.append(pa.RecordBatch.from_arrays(piece.columns, schema=schema))
        flush()
        if out is None:
            return
        path, size = out.commit()
    except BaseException:
        if out is not None:
            out.cleanup()
        raise
    yield pa.RecordBatch.from_arrays([pa.array([path], pa.string()), pa.array([read], pa.int64()),
                                      pa.array([out.records], pa.int64()), pa.array([size], pa.int64())],
                                     names=["path", "read", "records", "bytes"])


def _parallelism(session: Any) -> int:
    """The cluster's task slots: the SparkContext's default parallelism, or for a Connect session (which has no
    SparkContext) its ``spark.default.parallelism``, else 2."""
    try:
        return int(session.sparkContext.defaultParallelism)
    except Exception:  # noqa: BLE001 - a Connect session raises on sparkContext
        return int(session.conf.get("spark.default.parallelism", "2") or 2)


def compact_on_cluster(session: Any, files: list[InputFile], fmt: str, schema: pa.Schema, spec: DedupSpec,
                       folder: str, stamp: str, partition_bytes: int, job_props: Mapping[str, str],
                       description: str) -> tuple[int, int, int, list[str]]:
    """Deduplicate ``files`` into ``folder`` (made afresh) with one Spark job (see the module); the records read,
    the records and bytes written, and the files written."""
    fs, root = fsutil.open_fs(folder)
    if fs.exists(root):
        fsutil.remove_tree(fs, root)
    fsutil.makedirs(fs, root)
    slots = _parallelism(session)
    parts = parts_for(sum(f.size for f in files), partition_bytes, slots)
    props = dict(job_props)
    reading = partial(_read_pieces, files, fmt, schema, spec.keys, parts, props)
    writing = partial(_dedup_pieces, spec, fmt, schema, folder, stamp, props)
    # a few read tasks per slot (a file is the unit): fewer tasks cost less to schedule, more balance the load
    tasks = min(len(files), 4 * slots) if slots else len(files)
    pieces = session.range(0, len(files), 1, tasks).mapInArrow(reading, PIECES)
    shuffled = pieces.repartition(parts, "part").sortWithinPartitions("part", "seq")
    log.info("compaction_shuffle", dataset=description, files=len(files), parts=parts, key=",".join(spec.keys))
    written = shuffled.mapInArrow(writing, WRITTEN).toArrow()
    paths = written.column("path").to_pylist()
    kept = {posixpath.basename(p) for p in paths}
    for entry in fs.ls(root, detail=False):  # what an attempt that did not report left behind
        if posixpath.basename(entry.rstrip("/")) not in kept:
            fsutil.remove(fs, entry)
    return (int(pc.sum(written.column("read")).as_py() or 0), int(pc.sum(written.column("records")).as_py() or 0),
            int(pc.sum(written.column("bytes")).as_py() or 0), sorted(paths))
