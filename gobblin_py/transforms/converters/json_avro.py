"""Gobblin's ``JsonIntermediateToAvroConverter``: records of a JSON intermediate schema as Avro rows.

The JSON intermediate schema (see :mod:`gobblin_py.transforms.converters.json_schema`) comes with the records (the
batch's ``gobblin.schema``, as ``CsvToJsonConverterV2`` and text sources give it) or from ``source.schema``.
The output rows carry the Avro schema Gobblin makes of it (the root record named after the extract's table,
in its namespace), which the Avro writer writes as is.

The records are either typed columns named like the schema's columns, or text records (one string column,
each row a JSON object). Each output column is built as one Arrow array. Columns whose values already have
the right kind go through Arrow kernels: numbers cast, date/timestamp/time text parsed with the formats in
the zone (``pyarrow.compute.strptime``, each pattern tried in turn). JSON text, nested values, unions and values
that need Gobblin's per-value rules (Gson's: a number as text, ``"true"`` as a boolean, a union trying one
branch then the other) are converted per value in Python — Gobblin's semantics are per value there.

A record that fails counts against ``converter.avro.max.conversion.failures``: with the default 0 the first
failure fails the task; with N the first N−1 failing records are dropped (logged) and the N-th fails it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from gobblin_py.sdk import joda
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.contracts import Converter
from gobblin_py.sdk.errors import GobblinPyError, UsageError
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.schema_meta import GOBBLIN_SCHEMA, get_meta, with_meta
from gobblin_py.sdk.settings import Settings, setting
from gobblin_py.sdk.states import WorkUnitState
from gobblin_py.transforms.converters.json_schema import Node, arrow_schema, avro_schema, parse_schema
from gobblin_py.transforms.converters.json_values import (
    TimeRules,
    ValueFailure,
    convert_record,
    convert_value,
    parse_json,
    resolve_zone,
)

log = get_logger(__name__)
DEFAULT_DATE = "yyyy-MM-dd HH:mm:ss"


@dataclass(frozen=True)
class JsonAvroSettings(Settings):
    """The keys of :class:`JsonIntermediateToAvroConverter` (Gobblin's names and defaults)."""

    date_format: str = setting("converter.avro.date.format", default=DEFAULT_DATE,
                               doc="Joda pattern(s), comma separated, tried in order, for type date")
    timestamp_format: str = setting("converter.avro.timestamp.format", default=DEFAULT_DATE,
                                    doc="Joda pattern(s) for type timestamp")
    time_format: str = setting("converter.avro.time.format", default="HH:mm:ss",
                               doc="Joda pattern(s) for type time (a time of day falls on 1970-01-01)")
    timezone: str = setting("converter.avro.date.timezone", default="UTC",
                            doc="the one zone of date, timestamp and time values (IANA id, offset or Java id)")
    epoch_seconds: bool = setting("converter.is.epoch.time.in.seconds", default=False,
                                  doc="date/timestamp/time as epoch seconds instead of milliseconds")
    charset: str = setting("converter.avro.binary.charset", default="UTF8", doc="charset of bytes values")
    max_failures: int = setting("converter.avro.max.conversion.failures", default=0, minimum=0,
                                doc="records that may fail: with N, the first N-1 failing records are dropped")
    nullify: bool = setting("converter.avro.nullify.fields.enabled", default=False,
                            doc="not supported by gpy (merging an earlier output schema): must stay false")
    source_schema: str | None = setting("source.schema", doc="the JSON intermediate schema, when the records "
                                                             "carry none")

    def check(self) -> list[ConfigError]:
        problems = []
        if self.nullify:
            problems.append(ConfigError("is not supported by gpy", key="converter.avro.nullify.fields.enabled",
                                        hint="remove it; gpy does not merge fields of earlier output files"))
        try:
            resolve_zone(self.timezone, "converter.avro.date.timezone")
        except UsageError as exc:
            problems.append(ConfigError(str(exc), key="converter.avro.date.timezone"))
        for key, value in (("converter.avro.date.format", self.date_format),
                           ("converter.avro.timestamp.format", self.timestamp_format),
                           ("converter.avro.time.format", self.time_format)):
            for pattern in value.split(","):
                try:
                    joda.to_strftime(pattern)
                except ValueError as exc:
                    problems.append(ConfigError(str(exc), key=key))
        return problems


def _contains_union(node: Node) -> bool:
    if node.kind == "union":
        return not node.union_null or any(_contains_union(b) for b in node.branches)
    children = [node.items, node.values, *(f.node for f in node.fields)]
    return any(c is not None and _contains_union(c) for c in children)


def build_array(node: Node, values: list[Any]) -> pa.Array:
    """One Arrow array of ``node``'s type from converted Python values (unions built by hand)."""
    if not _contains_union(node):
        return pa.array(values, node.arrow_type())
    mask = pa.array([v is None for v in values])
    if node.kind == "union":
        children: list[list[Any]]
        types, offsets, children = [], [], [[] for _ in node.branches]
        for value in values:
            index, item = value if value is not None else (0, None)
            types.append(index)
            offsets.append(len(children[index]))
            children[index].append(item)
        arrays = [build_array(b, c) for b, c in zip(node.branches, children, strict=True)]
        return pa.UnionArray.from_dense(pa.array(types, pa.int8()), pa.array(offsets, pa.int32()), arrays,
                                        [str(i) for i in range(len(arrays))])
    if node.kind == "record":
        arrays = [build_array(f.node, [None if v is None else v.get(f.name) for v in values]) for f in node.fields]
        fields = [pa.field(f.name, c.type) for f, c in zip(node.fields, arrays, strict=True)]
        return pa.StructArray.from_arrays(arrays, fields=fields, mask=mask)
    flat: list[Any]
    offsets, flat = [0], []
    for value in values:
        items = [] if value is None else (value if node.kind == "array" else list(value.values()))
        flat.extend(items)
        offsets.append(len(flat))
    child = build_array(node.element(), flat)
    if node.kind == "array":
        return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), child, mask=mask)
    keys = pa.array([k for v in values if v is not None for k in v], pa.string())
    return pa.MapArray.from_arrays(pa.array(offsets, pa.int32()), keys, child, mask=mask)


class JsonIntermediateToAvroConverter(Converter):
    """JSON intermediate records → Avro rows (Arrow columns carrying Gobblin's Avro schema)."""

    changes_row_count = True  # with converter.avro.max.conversion.failures, failing records are dropped

    settings_class = JsonAvroSettings

    def init(self, state: WorkUnitState) -> None:
        self.settings = JsonAvroSettings.load(state)
        self.arrow_zone, zone = resolve_zone(self.settings.timezone, "converter.avro.date.timezone")
        s = self.settings
        self.rules = TimeRules({"date": s.date_format.split(","), "timestamp": s.timestamp_format.split(","),
                                "time": s.time_format.split(",")}, zone, s.epoch_seconds)
        self.charset = {"UTF8": "utf-8"}.get(s.charset.upper(), s.charset)
        self.failures = 0

    def convert_schema(self, schema: pa.Schema, state: WorkUnitState) -> pa.Schema:
        text = get_meta(schema, GOBBLIN_SCHEMA) or self.settings.source_schema
        if not text:
            raise UsageError("JsonIntermediateToAvroConverter: the records carry no JSON intermediate schema; "
                             "set source.schema (or put CsvToJsonConverterV2 before it)")
        try:
            columns = json.loads(text)
        except ValueError as exc:
            raise UsageError(f"source.schema: not JSON ({exc})") from None
        self.root = parse_schema(columns, state.get_prop("extract.table.name"), state.get_prop("extract.namespace"))
        self.avro = avro_schema(self.root)  # Gobblin's exact schema
        names = [f.name for f in self.root.fields]
        text_like = [f for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)]
        self.text_mode = len(schema) == 1 and len(text_like) == 1 and schema.names[0] not in names
        if not self.text_mode:
            extra = [n for n in schema.names if n not in names]
            if extra:
                raise UsageError(f"JsonIntermediateToAvroConverter: input columns {extra} are not in the JSON "
                                 f"intermediate schema (it has {names})")
        self._schema = with_meta(arrow_schema(self.root), avro_schema=json.dumps(avro_schema(self.root, writable=True)))
        return self._schema

    # -- conversion

    def convert_batch(self, batch: pa.RecordBatch, state: WorkUnitState) -> list[pa.RecordBatch]:
        failed: dict[int, str] = {}
        if self.text_mode:
            arrays = self._from_text(batch.column(0).to_pylist(), failed)
        else:
            arrays = [self._column(f, batch.column(f.name) if f.name in batch.schema.names else None,
                                   batch.num_rows, failed) for f in self.root.fields]
        out = pa.RecordBatch.from_arrays(arrays, schema=self._schema)
        if not failed:
            return [out]
        keep = [True] * batch.num_rows
        for row in sorted(failed):
            self.failures += 1
            if self.failures >= max(1, self.settings.max_failures):
                raise GobblinPyError(f"JsonIntermediateToAvroConverter: unable to convert record {row} of the batch: "
                                     f"{failed[row]} (converter.avro.max.conversion.failures="
                                     f"{self.settings.max_failures})")
            log.error("record_dropped", reason=failed[row], failures=self.failures)
            keep[row] = False
        return [out.filter(pa.array(keep))]

    def _from_text(self, texts: list[Any], failed: dict[int, str]) -> list[pa.Array]:
        rows: list[dict | None] = []
        for index, text in enumerate(texts):
            try:
                value = parse_json(text if isinstance(text, str) else bytes(text).decode("utf-8"))
                if not isinstance(value, dict):
                    raise ValueFailure("a record is a JSON object")
                rows.append(convert_record(self.root, value, self.rules, self.charset))
            except (ValueError, TypeError) as exc:
                failed[index] = f"{exc} for record: {str(text)[:200]}"
                rows.append(None)
        return [build_array(f.node, [None if r is None else r[f.name] for r in rows]) for f in self.root.fields]

    def _column(self, f, column: pa.Array | None, rows: int, failed: dict[int, str]) -> pa.Array:
        node = f.node
        if column is None:  # a column the records lack stays null, as in Gobblin
            return pa.nulls(rows, node.arrow_type())
        if not node.nullable and column.null_count:
            for row in pc.indices_nonzero(column.is_null()).to_pylist():
                failed.setdefault(row, f"Field: {f.name} is not nullable and contains a null value")
        fast = self._vectorised(node, column)
        if fast is not None:
            if node.kind in ("date", "timestamp", "time"):
                bad = pc.and_(column.is_valid(), fast.is_null())
                for row in pc.indices_nonzero(bad).to_pylist():
                    failed.setdefault(row, f"failed to parse the date {column[row].as_py()!r} of field {f.name}")
            return fast
        values = []
        for row, value in enumerate(column.to_pylist()):
            try:
                values.append(None if value is None else convert_value(node, value, self.rules, self.charset))
            except (ValueError, TypeError, UnicodeError) as exc:
                failed.setdefault(row, f"unable to convert field {f.name} for value {value!r}: {exc}")
                values.append(None)
        return build_array(node, values)

    def _vectorised(self, node: Node, column: pa.Array) -> pa.Array | None:
        """The column converted with Arrow kernels, or None when it needs the per-value rules."""
        t, kind = column.type, node.kind
        if kind in ("string", "enum") and pa.types.is_string(t):
            return column
        if kind == "boolean" and pa.types.is_boolean(t):
            return column
        if kind in ("int", "long", "float", "double") and (pa.types.is_integer(t) or pa.types.is_floating(t)):
            target = node.arrow_type()
            if pa.types.is_floating(t) and pa.types.is_integer(target):
                column = pc.trunc(column)
            try:
                return pc.cast(column, target, safe=pa.types.is_floating(target) or pa.types.is_integer(t))
            except pa.ArrowInvalid:
                return None  # out of range: Java's narrowing, per value
        if kind == "bytes" and pa.types.is_string(t) and self.charset.lower() in ("utf-8", "utf8"):
            return column.cast(pa.binary())
        if kind in ("date", "timestamp", "time") and pa.types.is_string(t):
            return self._parse_times(kind, column)
        return None

    def _parse_times(self, kind: str, column: pa.Array) -> pa.Array | None:
        result = None
        for pattern in self.rules.patterns[kind]:
            fmt = joda.to_strftime(pattern)
            if "%f" in fmt:
                return None  # milliseconds in the text: Python's parser knows %f, Arrow's does not
            texts = column
            if not joda.has_date(pattern):
                fmt = "%Y-%m-%d " + fmt
                texts = pc.binary_join_element_wise("1970-01-01 ", column, "")
            parsed = pc.strptime(texts, format=fmt, unit="ms", error_is_null=True)
            if parsed.type.tz is None:
                parsed = pc.assume_timezone(parsed, self.arrow_zone, ambiguous="earliest", nonexistent="earliest")
            millis = parsed.cast(pa.int64())
            result = millis if result is None else pc.coalesce(result, millis)
        if result is not None and self.rules.seconds:
            result = pc.divide(result, 1000)
        return result
