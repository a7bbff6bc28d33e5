"""``UnGzipConverter``: the copied files are gunzipped on the way, and their destinations lose ``.gz``.

Vectorised over a batch of descriptors: each gets the decoding ``gzip`` appended to its decodings, and its
destination's file name loses its trailing archive and compression extensions (``.tar``, ``.gzip``, ``.gz``,
``.tgz``, as many as it ends with), Gobblin's list: ``LogData.tar.gz`` becomes ``LogData``, ``a.txt.gz``
becomes ``a.txt``. Gobblin removes these strings wherever they occur in the destination path; gpy only strips
them from the end of the file name, so folders named ``x.tar.d`` keep their names. A name that is only
extensions (``.gz``) is kept whole.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from gobblin_py.connectors.copy.descriptor import check_schema
from gobblin_py.sdk.contracts import Converter
from gobblin_py.sdk.states import WorkUnitState

EXTENSIONS = r"(?:\.(?:tar|gzip|gz|tgz))+$"


def append_each(lists: pa.ListArray, value: str) -> pa.ListArray:
    """``value`` appended to every list of ``lists`` (none of them null)."""
    count = len(lists)
    flat = pc.list_flatten(lists)
    parents = pc.list_parent_indices(lists)
    values = pa.concat_arrays([flat.cast(pa.string()), pa.repeat(pa.scalar(value, pa.string()), count)])
    owners = pa.concat_arrays([parents.cast(pa.int64()), pa.array(range(count), pa.int64())])
    order = pc.sort_indices(owners)  # a stable sort: each list's own values keep their order, the new one last
    lengths = pc.add(pc.list_value_length(lists).fill_null(0), 1).cast(pa.int32())
    offsets = pa.concat_arrays([pa.array([0], pa.int32()), pc.cumulative_sum(lengths).cast(pa.int32())])
    return pa.ListArray.from_arrays(offsets, values.take(order))


def strip_extensions(destinations: pa.Array) -> pa.Array:
    """Each destination without its file name's trailing ``.tar``/``.gzip``/``.gz``/``.tgz`` extensions."""
    stripped = pc.replace_substring_regex(destinations, pattern=EXTENSIONS, replacement="")
    emptied = pc.or_(pc.equal(stripped, ""), pc.ends_with(stripped, "/"))
    return pc.if_else(emptied, destinations, stripped)


class UnGzipConverter(Converter):
    """Gobblin's UnGzipConverter: copied files are gunzipped, and ``.tar``/``.gz``/``.tgz``/``.gzip`` leave their
    destination names (use it before TarArchiveInputStreamDataWriterBuilder to unpack ``.tar.gz`` archives)."""

    def convert_schema(self, schema: pa.Schema, state: WorkUnitState) -> pa.Schema:
        check_schema(schema, "UnGzipConverter")
        return schema

    def convert_batch(self, batch: pa.RecordBatch, state: WorkUnitState) -> pa.RecordBatch:
        columns = dict(zip(batch.schema.names, batch.columns, strict=True))
        columns["destination"] = strip_extensions(columns["destination"])
        columns["decodings"] = append_each(columns["decodings"], "gzip")
        return pa.RecordBatch.from_arrays([columns[n] for n in batch.schema.names], schema=batch.schema)
