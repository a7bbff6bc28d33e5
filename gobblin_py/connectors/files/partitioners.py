"""Writer partitioners (``writer.partitioner.class``): which partition folder each row of a batch goes to.

A partitioner is a plain class built with no arguments, ``init(state, branches, branch)``-ed, that returns for a
batch the *partition fields*: ``(name, values)`` pairs where ``values`` is an Arrow array (one value per row)
or a constant string. The partitioned writer renders them into a folder path like Gobblin's
``AvroUtils.serializeAsPath``: each value with ``[\\s:\\\\]`` replaced by ``_`` (and ``/`` too with
``writer.replace.path.separators.in.partitions``), as ``name=value`` with ``writer.include.partition.in.file.names``
or else the bare value (empty values dropped), joined with ``/``. Everything is computed per batch with Arrow
kernels; nothing runs per row.

Built-ins:

- :class:`TimeBasedWriterPartitioner` (Gobblin's ``TimeBasedAvroWriterPartitioner``): a time field formatted
  with a date pattern in a time zone;
- :class:`ColumnValueWriterPartitioner`: the values of one or more columns.

A Gobblin-style per-record partitioner (a class with ``partition_for_record(record: dict) -> dict``) also
works, through :class:`RecordPartitionerAdapter` (slow path: the batch becomes Python dicts).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from gobblin_py.sdk import joda
from gobblin_py.sdk.branches import branch_key
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.partitioner import PartitionFields, WriterPartitioner
from gobblin_py.sdk.settings import Scope, Settings, setting
from gobblin_py.sdk.states import State

log = get_logger(__name__)

DEFAULT_TIMEZONE = "America/Los_Angeles"  # Gobblin's ConfigurationKeys.PST_TIMEZONE_NAME
DEFAULT_TIMEUNIT = "MILLISECONDS"
DEFAULT_GRANULARITY = "HOUR"
GRANULARITY_PATTERNS = {"YEAR": "yyyy", "MONTH": "yyyy/MM", "DAY": "yyyy/MM/dd", "HOUR": "yyyy/MM/dd/HH",
                        "MINUTE": "yyyy/MM/dd/HH/mm"}
NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
_TIMEUNIT_TO_ARROW = {"SECONDS": ("s", 1), "MILLISECONDS": ("ms", 1), "MICROSECONDS": ("us", 1),
                      "NANOSECONDS": ("ns", 1), "MINUTES": ("s", 60), "HOURS": ("s", 3600), "DAYS": ("s", 86400)}
# -- column lookup -----------------------------------------------------------------------------------------------

def find_column(batch_or_schema: pa.RecordBatch | pa.Schema, name: str) -> Any:
    """Column (or field) ``name`` of a batch (or schema); a dotted name walks into structs; None if absent."""
    schema = batch_or_schema if isinstance(batch_or_schema, pa.Schema) else batch_or_schema.schema
    if name in schema.names:
        return schema.field(name) if isinstance(batch_or_schema, pa.Schema) else batch_or_schema.column(name)
    head, *rest = name.split(".")
    if head not in schema.names or not rest:
        return None
    value = schema.field(head) if isinstance(batch_or_schema, pa.Schema) else batch_or_schema.column(head)
    for part in rest:
        t = value.type
        if not pa.types.is_struct(t) or t.get_field_index(part) < 0:
            return None
        value = t.field(part) if isinstance(value, pa.Field) else pc.struct_field(value, part)
    return value


# -- time ------------------------------------------------------------------------------------------------------

def joda_to_strftime(pattern: str) -> str:
    """Gobblin's Joda-Time pattern (``yyyy/MM/dd/HH``, ``'ds='yyyy-MM-dd``) as an Arrow ``strftime`` format."""
    try:
        return joda.to_strftime(pattern, joda.FORMAT_TOKENS)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _check_timezone(key: str, tz: str) -> None:
    try:
        pc.local_timestamp(pa.array([0], pa.timestamp("s", tz)))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise UsageError(f"{key}={tz}: not a time zone ({exc})") from None


@dataclass(frozen=True)
class TimePartitionSettings(Settings):
    """The keys of :class:`TimeBasedWriterPartitioner` (Gobblin's ``TimeBasedAvroWriterPartitioner`` keys)."""

    columns: tuple[str, ...] = setting("writer.partition.columns", scope=Scope.BRANCH, default=(),
                                       doc="time fields, first non-null wins (a.b reaches into a struct)")
    pattern: str | None = setting("writer.partition.pattern", scope=Scope.BRANCH, example="yyyy/MM/dd",
                                  doc="Joda pattern of the partition folders")
    granularity: str = setting("writer.partition.granularity", scope=Scope.BRANCH, default=DEFAULT_GRANULARITY,
                               choices=tuple(GRANULARITY_PATTERNS), doc="folders per YEAR ... MINUTE when no pattern")
    timezone: str = setting("writer.partition.timezone", scope=Scope.BRANCH, default=DEFAULT_TIMEZONE,
                            doc="time zone of the folders (Gobblin's default)")
    time_unit: str = setting("writer.partition.timeUnit", scope=Scope.BRANCH, default=DEFAULT_TIMEUNIT,
                             choices=tuple(_TIMEUNIT_TO_ARROW), doc="unit of integer (epoch) time fields")
    parse_strings: bool = setting("writer.partition.enableParseAsString", scope=Scope.BRANCH, default=False,
                                  doc="read string fields as integers in writer.partition.timeUnit")
    prefix: str = setting("writer.partition.prefix", scope=Scope.BRANCH, default="", doc="folder before the date")
    suffix: str = setting("writer.partition.suffix", scope=Scope.BRANCH, default="", doc="folder after the date")

    def check(self) -> list[ConfigError]:
        problems = []
        try:
            _check_timezone("writer.partition.timezone", self.timezone)
        except UsageError as exc:
            problems.append(ConfigError(str(exc), key="writer.partition.timezone"))
        if self.pattern:
            try:
                joda_to_strftime(self.pattern)
            except UsageError as exc:
                problems.append(ConfigError(str(exc), key="writer.partition.pattern"))
        return problems


class TimeBasedWriterPartitioner(WriterPartitioner):
    """Partitions by a time field: Gobblin's ``TimeBasedAvroWriterPartitioner`` keys, on Arrow columns.

    - ``writer.partition.columns``: comma list of fields (``a.b`` walks into a struct); per row the first one
      that is present and not null is used, else the current time (as Gobblin does);
    - ``writer.partition.pattern``: Joda date pattern, e.g. ``yyyy/MM/dd`` or ``yyyy/MM/dd/HH``; without it
      ``writer.partition.granularity`` (``YEAR``, ``MONTH``, ``DAY``, ``HOUR`` (default), ``MINUTE``) picks
      ``yyyy``, ``yyyy/MM``, ``yyyy/MM/dd``, ``yyyy/MM/dd/HH`` or ``yyyy/MM/dd/HH/mm``;
    - ``writer.partition.timezone``: default ``America/Los_Angeles`` (Gobblin's default);
    - ``writer.partition.timeUnit``: unit of integer fields, default ``MILLISECONDS`` (Java TimeUnit names);
    - ``writer.partition.enableParseAsString``: read string fields as integers in that unit (else a string
      field is an error, where Gobblin would silently use the current time);
    - ``writer.partition.prefix`` / ``writer.partition.suffix``: constant folders before / after the date.

    Timestamp fields are instants (a naive one is taken as UTC); date fields are taken as that day's midnight
    in the partition time zone. Every key takes Gobblin's ``.<branch>`` suffix when there are several branches.
    """

    settings_class = TimePartitionSettings

    def init(self, state: State, branches: int, branch: int) -> None:
        def key(name: str) -> str:
            return branch_key(name, branches, branch)

        settings = TimePartitionSettings.load(state, branches=branches, branch=branch)
        self.columns = list(settings.columns)
        self.prefix, self.suffix = settings.prefix, settings.suffix
        if settings.pattern:
            pattern, self.path_field = settings.pattern, "partitionedPath"
        else:
            pattern, self.path_field = GRANULARITY_PATTERNS[settings.granularity], settings.granularity
        self.pattern = pattern
        self.format = joda_to_strftime(pattern)
        self.timezone = settings.timezone
        self.time_unit = settings.time_unit
        self.parse_strings = settings.parse_strings
        self._columns_key = key("writer.partition.columns")
        self._parse_key = key("writer.partition.enableParseAsString")

    def check_schema(self, schema: pa.Schema) -> None:
        found = [name for name in self.columns if find_column(schema, name) is not None]
        for name in found:
            self._check_type(name, find_column(schema, name).type)
        if not found:
            log.warning("no_partition_time_field", columns=self.columns, schema=schema.names,
                        effect="every row goes to the current time's partition (as in Gobblin)")

    def _check_type(self, name: str, t: pa.DataType) -> None:
        if pa.types.is_timestamp(t) or pa.types.is_date(t) or pa.types.is_integer(t):
            return
        if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
            if self.parse_strings:
                return
            raise UsageError(f"{self._columns_key}: field '{name}' is a string; set {self._parse_key}=true to read "
                             f"it as an epoch number in {self.time_unit}, or convert it to a timestamp first")
        raise UsageError(f"{self._columns_key}: field '{name}' is of type {t}, not a timestamp, date or integer")

    def _wall_clock(self, name: str, column: pa.Array) -> pa.Array:
        """Naive timestamps (whole seconds) of the column's instants on the partition time zone's clock."""
        t = column.type
        self._check_type(name, t)
        if pa.types.is_date(t):
            return column.cast(pa.timestamp("s"))
        if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
            try:
                column = column.cast(pa.int64())
            except pa.ArrowInvalid as exc:
                raise UsageError(f"{self._columns_key}: field '{name}' has a value that is not an integer: {exc}") from None
        if pa.types.is_integer(t) or column.type == pa.int64():
            unit, factor = _TIMEUNIT_TO_ARROW[self.time_unit]
            column = column.cast(pa.int64())
            if factor != 1:
                column = pc.multiply_checked(column, pa.scalar(factor, pa.int64()))
            instants = column.cast(pa.timestamp(unit, "UTC"))
        else:
            instants = column.cast(pa.int64()).cast(pa.timestamp(t.unit, "UTC"))
        local = pc.local_timestamp(instants.cast(pa.timestamp(instants.type.unit, self.timezone)))
        return pc.floor_temporal(local, unit="second").cast(pa.timestamp("s"))

    def _now(self) -> pa.Scalar:
        now = pa.array([int(time.time())], pa.timestamp("s", self.timezone))
        return pc.local_timestamp(now)[0]

    def partition(self, batch: pa.RecordBatch) -> PartitionFields:
        clocks = []
        for name in self.columns:
            column = find_column(batch, name)
            if column is not None:
                clocks.append(self._wall_clock(name, column))
        if not clocks:
            seconds = pa.nulls(batch.num_rows, pa.timestamp("s")).fill_null(self._now())
        else:
            seconds = clocks[0] if len(clocks) == 1 else pc.coalesce(*clocks)
            if seconds.null_count:
                seconds = seconds.fill_null(self._now())
        fields: PartitionFields = []
        if self.prefix:
            fields.append(("prefix", self.prefix))
        fields.append((self.path_field, pc.strftime(seconds, self.format)))
        if self.suffix:
            fields.append(("suffix", self.suffix))
        return fields


@dataclass(frozen=True)
class ColumnPartitionSettings(Settings):
    """The key of :class:`ColumnValueWriterPartitioner`."""

    columns: tuple[str, ...] = setting("writer.partition.columns", required=True, scope=Scope.BRANCH,
                                       doc="columns whose values name the partition folders")


class ColumnValueWriterPartitioner(WriterPartitioner):
    """Partitions by the values of ``writer.partition.columns`` (comma list; ``a.b`` walks into a struct).

    Values are rendered as Arrow casts them to strings (``2024-01-02``, ``42``, ``true``); a null value is
    ``__HIVE_DEFAULT_PARTITION__`` (what Hive and Spark read back as null). With
    ``writer.include.partition.in.file.names=true`` folders are ``column=value`` (Hive/Spark partition layout).
    Nested and binary columns cannot be partition columns.
    """

    settings_class = ColumnPartitionSettings

    def init(self, state: State, branches: int, branch: int) -> None:
        self.key = branch_key("writer.partition.columns", branches, branch)
        self.columns = list(ColumnPartitionSettings.load(state, branches=branches, branch=branch).columns)

    def check_schema(self, schema: pa.Schema) -> None:
        for name in self.columns:
            field = find_column(schema, name)
            if field is None:
                raise UsageError(f"{self.key}: no column '{name}' (columns: {', '.join(schema.names)})")
            t = field.type.value_type if pa.types.is_dictionary(field.type) else field.type
            if pa.types.is_nested(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t) \
                    or pa.types.is_fixed_size_binary(t):
                raise UsageError(f"{self.key}: column '{name}' of type {field.type} cannot name a folder")

    def partition(self, batch: pa.RecordBatch) -> PartitionFields:
        fields: PartitionFields = []
        for name in self.columns:
            column = find_column(batch, name)
            if column is None:
                raise UsageError(f"{self.key}: no column '{name}' in the batch")
            if pa.types.is_dictionary(column.type):
                column = column.dictionary_decode()
            fields.append((name.rsplit(".", 1)[-1], column.cast(pa.large_string()).fill_null(NULL_PARTITION)))
        return fields


# -- rendering ---------------------------------------------------------------------------------------------------

_ILLEGAL = "[ \\t\\n\\x0B\\f\\r:\\\\]"  # Gobblin's HadoopUtils.HDFS_ILLEGAL_TOKEN_REGEX [\s:\\]
_ILLEGAL_PY = re.compile(r"[ \t\n\x0B\f\r:\\]")


def _sanitize_text(text: str, replace_separators: bool) -> str:
    text = _ILLEGAL_PY.sub("_", text)
    return text.replace("/", "_") if replace_separators else text


def render_paths(fields: PartitionFields, num_rows: int, include_names: bool, replace_separators: bool) -> pa.Array:
    """Per row, the raw partition path (normalise each distinct one with :func:`normalise_path`)."""
    tokens: list[Any] = []
    for name, values in fields:
        label = _sanitize_text(name, replace_separators) + "=" if include_names else ""
        if isinstance(values, str):
            text = _sanitize_text(values, replace_separators)
            tokens.append(pa.scalar(label + text if include_names or text else "", pa.large_string()))
            continue
        text = pc.replace_substring_regex(values.cast(pa.large_string()), _ILLEGAL, "_")
        if replace_separators:
            text = pc.replace_substring(text, "/", "_")
        text = text.fill_null("")
        tokens.append(pc.binary_join_element_wise(pa.scalar(label, pa.large_string()), text,
                                                  pa.scalar("", pa.large_string())) if label else text)
    if not tokens:
        return pa.nulls(num_rows, pa.large_string()).fill_null("")
    if all(isinstance(t, pa.Scalar) for t in tokens):
        joined = "/".join(t.as_py() for t in tokens)
        return pa.nulls(num_rows, pa.large_string()).fill_null(joined)
    return pc.binary_join_element_wise(*tokens, pa.scalar("/", pa.large_string()))


def normalise_path(raw: str) -> str:
    """A partition path without empty segments, and with ``.``/``..`` segments made harmless (``_``)."""
    return "/".join("_" if part in (".", "..") else part for part in raw.split("/") if part)
