"""The JSON lines writer: one JSON object per row, built with Arrow compute kernels (no per-row Python).

pyarrow has no JSON writer, so each column becomes an array of JSON texts by vectorised casts, string
replacements and joins, and a row is the element-wise join of ``{"name":`` / column text / ``,`` … ``}\\n``; the
joined array's data buffer is the file's bytes. Only binary values (base64) go through Python, one call per
value. Rendering:

- null → ``null``; bool → ``true``/``false``; integers and durations → numbers;
- floats → shortest round-trip numbers, always with a fraction or an exponent (``1.0``, ``-0.0``, ``1e+20``,
  so that readers parse them as floats); NaN / ±inf → ``NaN``, ``Infinity``, ``-Infinity``
  (what Jackson and Spark read by default; strict JSON parsers, pyarrow's among them, reject them);
- decimals → JSON strings (``"123.45"``: exact; Spark and pyarrow read them into a decimal column of a given
  schema, while a number would be read as a binary double);
- strings → JSON strings (``"``, ``\\``, control characters escaped; non-ASCII written as UTF-8);
- binary → base64 strings;
- dates → ``"2024-01-02"``; times → ``"01:02:03.456789"``;
- timestamps → ISO-8601: tz-aware ones in UTC with ``Z`` (``"2024-01-02T03:04:05.123456Z"``), naive ones
  without a zone; the fraction has as many digits as the unit (none for seconds, 3, 6 or 9);
- lists → arrays, structs → objects, maps → objects (keys rendered as strings).

Codec: ``writer.codec.type`` ``none`` (default) or ``gzip`` (file name ends ``.gz``).
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from gobblin_py.formats.arrow_lists import rebased_offsets
from gobblin_py.formats.base import StagedFileWriter, codec_for
from gobblin_py.formats.settings import WriterSettings
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.states import State

TEXT_CODECS = {"none": "none", "uncompressed": "none", "gzip": "gzip", "gz": "gzip"}
_T = pa.large_string()


def _lit(text: str) -> pa.Scalar:
    return pa.scalar(text, _T)


def _const(n: int, text: str) -> pa.Array:
    return pa.nulls(n, _T).fill_null(_lit(text))


def _join(*parts: pa.Array | pa.Scalar) -> pa.Array:
    return pc.binary_join_element_wise(*parts, _lit(""))


def _quote(text: pa.Array) -> pa.Array:
    return _join(_lit('"'), text, _lit('"'))


def escape_strings(arr: pa.Array) -> pa.Array:
    """JSON string bodies (no quotes) of a string array: ``\\``, ``"`` and U+0000–U+001F escaped."""
    s = arr.cast(_T)
    for raw, escaped in (("\\", "\\\\"), ('"', '\\"'), ("\n", "\\n"), ("\r", "\\r"), ("\t", "\\t")):
        s = pc.replace_substring(s, raw, escaped)
    control = pc.match_substring_regex(s, "[\\x00-\\x1f]")
    if pc.any(control).as_py():
        present = {c for value in pc.filter(s, control).to_pylist() for c in value if ord(c) < 0x20}
        for char in sorted(present):
            s = pc.replace_substring(s, char, f"\\u{ord(char):04x}")
    return s


def _iso(arr: pa.Array) -> pa.Array:
    t = arr.type
    if t.tz is None:
        return pc.strftime(arr, "%Y-%m-%dT%H:%M:%S")
    return pc.strftime(arr.cast(pa.timestamp(t.unit, "UTC")), "%Y-%m-%dT%H:%M:%SZ")


def base64_strings(arr: pa.Array) -> pa.Array:
    return pa.array([None if v is None else base64.b64encode(v).decode("ascii") for v in arr.to_pylist()], _T)


def json_texts(arr: pa.Array) -> pa.Array:
    """The JSON text of every value of ``arr`` (a large_string array without nulls; null values are ``null``)."""
    t = arr.type
    n = len(arr)
    if pa.types.is_dictionary(t):
        return json_texts(arr.dictionary_decode())
    if pa.types.is_null(t):
        return _const(n, "null")
    if pa.types.is_boolean(t) or pa.types.is_integer(t):
        text = arr.cast(_T)
    elif pa.types.is_duration(t):
        text = arr.cast(pa.int64()).cast(_T)
    elif pa.types.is_floating(t):
        text = _float_texts(arr.cast(pa.float32()) if t == pa.float16() else arr)
    elif pa.types.is_decimal(t) or pa.types.is_time(t) or pa.types.is_date32(t):
        text = _quote(arr.cast(_T))
    elif pa.types.is_date64(t):
        text = _quote(arr.cast(pa.date32()).cast(_T))
    elif pa.types.is_timestamp(t):
        text = _quote(_iso(arr).cast(_T))
    elif pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        text = _quote(escape_strings(arr))
    elif pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t) \
            or pa.types.is_binary_view(t):
        text = _quote(base64_strings(arr))
    elif pa.types.is_struct(t):
        text = _struct_texts(arr)
    elif pa.types.is_map(t):
        text = _map_texts(arr)
    elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) or pa.types.is_list_view(t):
        text = _list_texts(arr)
    else:
        raise UsageError(f"Arrow type {t} has no JSON form (cast it first, e.g. with a converter)")
    text = text.cast(_T)
    if arr.null_count:
        text = pc.if_else(pc.is_valid(arr), text, _lit("null"))
    return text


def _float_texts(arr: pa.Array) -> pa.Array:
    """Floats as JSON reads them back: a whole number keeps its ``.0``; NaN and the infinities by name."""
    text = arr.cast(_T)
    whole = pc.match_substring_regex(text, "^-?[0-9]+$")  # "1" → "1.0", "-0" → "-0.0": read back as floats
    if pc.any(whole).as_py():
        text = pc.if_else(pc.fill_null(whole, False), _join(text, _lit(".0")), text)
    special = pc.or_(pc.is_nan(arr), pc.is_inf(arr))
    if pc.any(special).as_py():
        positive = pc.greater(arr, pa.scalar(0, arr.type))
        name = pc.if_else(pc.is_nan(arr), _lit("NaN"), pc.if_else(positive, _lit("Infinity"), _lit("-Infinity")))
        text = pc.if_else(pc.fill_null(special, False), name, text)
    return text


def _struct_texts(arr: pa.Array) -> pa.Array:
    """Structs as JSON objects, their fields in order."""
    t = arr.type
    if not t.num_fields:
        return _const(len(arr), "{}")
    parts: list[Any] = []
    for i, field in enumerate(t):
        parts.append(_lit(("{" if i == 0 else ",") + json.dumps(field.name, ensure_ascii=False) + ":"))
        parts.append(json_texts(arr.field(i)))
    parts.append(_lit("}"))
    return _join(*parts)


def _map_texts(arr: pa.Array) -> pa.Array:
    """Maps as JSON objects (a key that is not a string written as its JSON text, quoted)."""
    offsets, start, length = rebased_offsets(arr)
    keys = arr.keys.slice(start, length)
    keys_text = _quote(escape_strings(keys if pa.types.is_string(keys.type) or pa.types.is_large_string(keys.type)
                                      else json_texts(keys)))
    entries = _join(keys_text, _lit(":"), json_texts(arr.items.slice(start, length)))
    return _join(_lit("{"), pc.binary_join(pa.ListArray.from_arrays(offsets, entries), _lit(",")), _lit("}"))


def _list_texts(arr: pa.Array) -> pa.Array:
    """Lists of every kind as JSON arrays."""
    t = arr.type
    if not (pa.types.is_list(t) or pa.types.is_large_list(t)):
        arr = arr.cast(pa.list_(t.value_field))
    offsets, start, length = rebased_offsets(arr)
    values = json_texts(arr.values.slice(start, length))
    lists = (pa.LargeListArray if pa.types.is_large_list(arr.type) else pa.ListArray).from_arrays(offsets, values)
    return _join(_lit("["), pc.binary_join(lists, _lit(",")), _lit("]"))


def json_lines(batch: pa.RecordBatch) -> pa.Array:
    """One ``{...}\\n`` text per row (large_string)."""
    if batch.num_columns == 0:
        return _const(batch.num_rows, "{}\n")
    parts: list[Any] = []
    for i, field in enumerate(batch.schema):
        parts.append(_lit(("{" if i == 0 else ",") + json.dumps(field.name, ensure_ascii=False) + ":"))
        parts.append(json_texts(batch.column(i)))
    parts.append(_lit("}\n"))
    return _join(*parts)


def text_bytes(lines: pa.Array) -> pa.Buffer | None:
    """The concatenated bytes of a large_string array's values (a view of its data buffer, no copy)."""
    _, offsets, data = lines.buffers()
    if data is None or len(lines) == 0:
        return None
    view = memoryview(offsets).cast("q")
    start, end = view[lines.offset], view[lines.offset + len(lines)]
    return data.slice(start, end - start)


def check_json_type(t: pa.DataType, column: str) -> None:
    if pa.types.is_interval(t) or pa.types.is_union(t) or pa.types.is_run_end_encoded(t):
        raise UsageError(f"column '{column}': Arrow type {t} has no JSON form (cast it first, e.g. with a converter)")
    for child in (t.value_type,) if pa.types.is_dictionary(t) else [t.field(i).type for i in range(t.num_fields)]:
        check_json_type(child, column)


class JsonLinesDataWriter(StagedFileWriter):
    """Streams batches into one JSON-lines file (UTF-8, ``\\n`` after every row), optionally gzip-compressed."""

    codecs = TEXT_CODECS
    extension = "json"

    def __init__(self, fs, staging_path: str, output_path: str, schema: pa.Schema, codec: str = "none",
                 **kwargs: Any) -> None:
        if codec == "gzip":
            kwargs.setdefault("gzip_level", 6)
        super().__init__(fs, staging_path, output_path, schema, codec=codec, **kwargs)

    @classmethod
    def options(cls, settings: WriterSettings, state: State, schema: pa.Schema) -> dict[str, Any]:
        codec = codec_for(cls, "JSON", "writer.codec.type", settings.codec, "none")
        for field in schema or ():
            check_json_type(field.type, field.name)
        return {"codec": codec}

    @staticmethod
    def name_suffix(options: dict[str, Any]) -> str:
        return ".gz" if options.get("codec") == "gzip" else ""

    def _open(self, sink) -> None:
        self._out = sink

    def _write(self, batch: pa.RecordBatch) -> None:
        data = text_bytes(json_lines(batch))
        if data is not None:
            self._out.write(data)

    def _finish(self) -> None:
        pass
