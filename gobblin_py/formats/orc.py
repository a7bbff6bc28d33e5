"""The ORC writer (pyarrow.orc): Arrow batches into one ORC file, staged then committed.

Codec: ``writer.codec.type[.i]``, else ORC's own ``orc.compress`` (what Gobblin's ORC writer reads), default
zlib (ORC's default); ``zlib``/``deflate``, ``snappy``, ``zstd``, ``lz4``, ``none``. Stripe size:
``orc.stripe.size`` (bytes, default 64 MiB); with a target file size the stripe is at most that size so the
file's growth is visible to the rolling check. ORC has no unsigned, time-of-day or >38-digit decimal types:
uint8/16/32 widen to the next signed type, uint64 becomes int64 (values above 2^63-1 fail), dictionaries are
decoded, decimal256 with precision <= 38 narrows to decimal128; time and null-typed columns fail the build
naming the column.
ORC timestamps are instants: a tz-aware column reads back in UTC (same instants, zone name not kept).

Pre-1970 timestamps with a fraction of a second: the ORC C++ library under pyarrow stores them with a negative
nanosecond part, which the Java ORC reader (Spark, Hive, Trino) rejects (``nanos > 999999999 or < 0``; see
ORC-763 / ORC-306). gpy refuses such values by default, naming the column and the value, rather than commit
a file those readers cannot open; ``writer.orc.allow.pre.epoch.fractions[.i]=true`` writes them anyway (the
file is then readable by pyarrow and the ORC C++ tools only).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as orc

from gobblin_py.formats.base import StagedFileWriter, codec_for
from gobblin_py.formats.settings import WriterSettings
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.states import State

CODECS = {"zlib": "zlib", "deflate": "zlib", "snappy": "snappy", "zstd": "zstd", "lz4": "lz4",
          "none": "uncompressed", "uncompressed": "uncompressed"}
DEFAULT_STRIPE_SIZE = 64 << 20


def orc_type(t: pa.DataType, column: str) -> pa.DataType:
    """The type ORC stores for Arrow type ``t`` (``t`` itself when ORC has it)."""
    widen = {pa.uint8(): pa.int16(), pa.uint16(): pa.int32(), pa.uint32(): pa.int64(), pa.uint64(): pa.int64(),
             pa.float16(): pa.float32()}
    if t in widen:
        return widen[t]
    if pa.types.is_dictionary(t):
        return orc_type(t.value_type, column)
    if pa.types.is_decimal256(t):
        if t.precision > 38:
            raise UsageError(f"column '{column}': ORC decimals have at most 38 digits, not {t.precision}")
        return pa.decimal128(t.precision, t.scale)
    if pa.types.is_null(t):
        raise UsageError(f"column '{column}': ORC has no type for a column that is always null (give it a type "
                         "with a converter)")
    if pa.types.is_time(t) or pa.types.is_duration(t) or pa.types.is_interval(t):
        raise UsageError(f"column '{column}': ORC has no {t} type (cast it to a string or an integer first)")
    if pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_binary_view(t):
        return pa.binary()
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) or pa.types.is_list_view(t):
        item = orc_type(t.value_type, column)
        if item == t.value_type and not pa.types.is_list_view(t):
            return t
        return pa.list_(pa.field(t.value_field.name, item, t.value_field.nullable))
    if pa.types.is_map(t):
        key, item = orc_type(t.key_type, column), orc_type(t.item_type, column)
        if key == t.key_type and item == t.item_type:
            return t
        return pa.map_(key, pa.field(t.item_field.name, item, t.item_field.nullable))
    if pa.types.is_struct(t):
        fields = [pa.field(f.name, orc_type(f.type, column), f.nullable) for f in t]
        return pa.struct(fields) if any(f.type != g.type for f, g in zip(fields, t, strict=True)) else t
    return t


_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
ALLOW_PRE_EPOCH_FRACTIONS_KEY = "writer.orc.allow.pre.epoch.fractions"


def pre_epoch_fraction(column: pa.Array) -> int | None:
    """Index of the first value before 1970 with a fraction of a second in a timestamp column, else None."""
    per_second = _PER_SECOND[column.type.unit]
    if per_second == 1:
        return None
    values = column.cast(pa.int64())
    whole = pc.multiply(pc.divide(values, per_second), per_second)  # integer division truncates toward zero
    bad = pc.and_(pc.less(values, 0), pc.not_equal(whole, values))
    if not pc.any(bad).as_py():
        return None
    return pc.index(bad, True).as_py()


class OrcDataWriter(StagedFileWriter):
    """Streams batches into one ORC file; types ORC lacks are cast (see the module notes)."""

    codecs = CODECS
    extension = "orc"
    default_codec = "zlib"

    def __init__(self, fs, staging_path: str, output_path: str, schema: pa.Schema,
                 stripe_size: int = DEFAULT_STRIPE_SIZE, allow_pre_epoch_fractions: bool = False,
                 **kwargs: Any) -> None:
        self.stripe_size = stripe_size
        self.timestamp_columns = [] if allow_pre_epoch_fractions else \
            [i for i, f in enumerate(schema) if pa.types.is_timestamp(f.type)]
        self.orc_schema = pa.schema([pa.field(f.name, orc_type(f.type, f.name), f.nullable) for f in schema])
        super().__init__(fs, staging_path, output_path, schema, **kwargs)

    @classmethod
    def options(cls, settings: WriterSettings, state: State, schema: pa.Schema) -> dict[str, Any]:
        key, value = "writer.codec.type", settings.codec
        if value is None and settings.orc_compress:
            key, value = "orc.compress", settings.orc_compress
        codec = codec_for(cls, "ORC", key, value, "zlib")
        for field in schema or ():
            orc_type(field.type, field.name)
        return {"codec": codec, "stripe_size": settings.orc_stripe_size or DEFAULT_STRIPE_SIZE,
                "allow_pre_epoch_fractions": settings.orc_pre_epoch_fractions}

    def _open(self, sink) -> None:
        self._writer = orc.ORCWriter(sink, compression=self.codec, stripe_size=self.stripe_size)

    def _write(self, batch: pa.RecordBatch) -> None:
        for i in self.timestamp_columns:
            row = pre_epoch_fraction(batch.column(i))
            if row is not None:
                raise UsageError(
                    f"column '{batch.schema.field(i).name}': {batch.column(i)[row]} is before 1970 with a fraction of "
                    f"a second, which Spark's and Hive's ORC reader cannot read from a file written by pyarrow "
                    f"(ORC-763); truncate it to whole seconds, write another format, or set "
                    f"{ALLOW_PRE_EPOCH_FRACTIONS_KEY}=true")
        if batch.schema != self.orc_schema:
            batch = batch.cast(self.orc_schema)
        self._writer.write(pa.Table.from_batches([batch]))

    def _finish(self) -> None:
        self._writer.close()
