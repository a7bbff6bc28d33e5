"""What a table over published files is made of: the files' format (and its SerDe, as Gobblin's
``HiveSerDeWrapper.BuiltInHiveSerDe`` names them) and their columns as Hive types.

The format is read from the file's first bytes (Parquet, ORC and Avro each begin with their own magic), the
columns from its footer or header: a Parquet or ORC footer, an Avro header's writer schema (which the Avro SerDe
also gets as ``avro.schema.literal``, as Gobblin's ``HiveAvroSerDeManager`` sets it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from gobblin_py.formats.avro_read import arrow_schema_for, avro_schema_of_file
from gobblin_py.io.native_io import open_input
from gobblin_py.sdk.errors import GobblinPyError

AVRO_LITERAL = "avro.schema.literal"


@dataclass(frozen=True)
class SerDe:
    """A format's SerDe, input format and output format classes."""

    serde: str
    input_format: str
    output_format: str


SERDES = {
    "PARQUET": SerDe("org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
                     "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
                     "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"),
    "ORC": SerDe("org.apache.hadoop.hive.ql.io.orc.OrcSerde", "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat",
                 "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"),
    "AVRO": SerDe("org.apache.hadoop.hive.serde2.avro.AvroSerDe",
                  "org.apache.hadoop.hive.ql.io.avro.AvroContainerInputFormat",
                  "org.apache.hadoop.hive.ql.io.avro.AvroContainerOutputFormat"),
}
_MAGIC = ((b"PAR1", "PARQUET"), (b"ORC", "ORC"), (b"Obj\x01", "AVRO"))


@dataclass(frozen=True)
class FileSchema:
    """A published file's format, its columns as ``(name, Hive type)`` and, for Avro, its writer schema."""

    row_format: str
    columns: tuple[tuple[str, str], ...]
    avro_schema: str | None = None


def read_file_schema(fs: Any, path: str, shown: str) -> FileSchema:
    """The format and columns of the file ``path`` on ``fs`` (``shown`` names it in errors)."""
    try:
        head = fs.cat_file(path, start=0, end=4)
    except OSError as exc:
        raise GobblinPyError(f"{shown}: cannot be read to register it in Hive: {exc}") from None
    row_format = next((name for magic, name in _MAGIC if head.startswith(magic)), None)
    if row_format is None:
        raise GobblinPyError(f"{shown}: not a Parquet, ORC or Avro file, the formats a Hive table is registered "
                             "over (set writer.output.format to one of them)")
    avro_text = None
    if row_format == "PARQUET":
        import pyarrow.parquet as pq

        with open_input(fs, path) as stream:
            schema = pq.read_schema(stream)
    elif row_format == "ORC":
        import pyarrow.orc as orc

        with open_input(fs, path) as stream:
            schema = orc.ORCFile(stream).schema
    else:
        with fs.open(path, "rb") as stream:
            avro_text = avro_schema_of_file(stream, shown)
        schema = arrow_schema_for(avro_text, shown)
    return FileSchema(row_format, columns_of(schema, shown), avro_text)


def columns_of(schema: pa.Schema, shown: str) -> tuple[tuple[str, str], ...]:
    """``(name, Hive type)`` of each column, names lower-cased as the metastore keeps them."""
    columns = []
    seen: dict[str, str] = {}
    for field in schema:
        name = field.name.lower()
        if name in seen:
            raise GobblinPyError(f"{shown}: columns {seen[name]!r} and {field.name!r} are one column in Hive, "
                                 "whose column names are not case-sensitive")
        seen[name] = field.name
        columns.append((name, hive_type(field.type, f"{shown}: column {field.name!r}")))
    return tuple(columns)


_PRIMITIVES: dict[pa.DataType, str] = {
    pa.bool_(): "boolean", pa.int8(): "tinyint", pa.int16(): "smallint", pa.int32(): "int", pa.int64(): "bigint",
    pa.uint8(): "smallint", pa.uint16(): "int", pa.uint32(): "bigint", pa.uint64(): "decimal(20,0)",
    pa.float16(): "float", pa.float32(): "float", pa.float64(): "double", pa.string(): "string",
    pa.large_string(): "string", pa.binary(): "binary", pa.large_binary(): "binary", pa.date32(): "date",
    pa.date64(): "date",
}


def hive_type(t: pa.DataType, where: str) -> str:
    """The Hive type of an Arrow type; GobblinPyError naming ``where`` for one Hive has no type for."""
    if t in _PRIMITIVES:
        return _PRIMITIVES[t]
    if pa.types.is_timestamp(t):
        return "timestamp"
    if pa.types.is_decimal(t):
        if t.precision > 38:
            raise GobblinPyError(f"{where} is {t}: Hive's decimals hold at most 38 digits")
        return f"decimal({t.precision},{t.scale})"
    if pa.types.is_fixed_size_binary(t) or pa.types.is_binary_view(t):
        return "binary"
    if pa.types.is_string_view(t):
        return "string"
    if pa.types.is_dictionary(t):
        return hive_type(t.value_type, where)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return f"array<{hive_type(t.value_type, where)}>"
    if pa.types.is_map(t):
        return f"map<{hive_type(t.key_type, where)},{hive_type(t.item_type, where)}>"
    if pa.types.is_struct(t):
        fields = ",".join(f"{t.field(i).name}:{hive_type(t.field(i).type, where)}" for i in range(t.num_fields))
        return f"struct<{fields}>"
    raise GobblinPyError(f"{where} is {t}, which no Hive column type holds (cast it first, e.g. with "
                         "TypeCastConverter)")
