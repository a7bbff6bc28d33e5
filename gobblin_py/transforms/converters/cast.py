"""Casts fields to other types: ``converter.cast.fields=amount:double,created_at:timestamp[ms, UTC]``.

Types use Arrow's names: ``int8``…``int64``, ``uint8``…``uint64``, ``float32``/``float``, ``float64``/``double``,
``string``, ``large_string``, ``bool``/``boolean``, ``binary``, ``date32``/``date``,
``timestamp[s|ms|us|ns]`` with an optional time zone (``timestamp[ms, UTC]``), ``decimal128(p, s)``/``decimal(p, s)``.
Casts are safe by default (an overflow, a lossy truncation or an unparsable string fails the task naming the
file, line and field: a data error, exit 65); ``converter.cast.safe=false`` allows lossy casts.
``converter.cast.failure.policy=ERR_FILE`` routes the rows holding a value that does not cast to the error file
instead, as the row-level policy ``ERR_FILE`` does (``qualitychecker.row.err.file``): the rest of the batch is
published and the summary counts the rows routed. A batch whose values all cast costs one cast per field either
way; only a failing column is searched for its bad values (Arrow casts of its halves, no Python per value).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from gobblin_py.formats.bad_values import bad_rows, first_bad_row, shown
from gobblin_py.formats.types import parse_type
from gobblin_py.io.error_files import ErrorFile
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.contracts import Converter
from gobblin_py.sdk.errors import DataError, UsageError
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.settings import Scope, Settings, setting
from gobblin_py.sdk.states import WorkUnitState

FIELDS_KEY = "converter.cast.fields"
SAFE_KEY = "converter.cast.safe"
POLICY_KEY = "converter.cast.failure.policy"
ERR_DIR_KEY = "qualitychecker.row.err.file"
RESULTS_KEY = "qualitychecker.row.policy.results.cast"

log = get_logger(__name__)

def _split_spec(spec: str) -> list[tuple[str, str]]:
    # commas also appear inside types ("decimal(10, 2)", "timestamp[ms, UTC]"): split only at depth 0
    items, depth, current = [], 0, ""
    for char in spec:
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        if char == "," and depth == 0:
            items.append(current)
            current = ""
        else:
            current += char
    items.append(current)
    pairs = []
    for item in filter(str.strip, items):
        field, sep, type_text = item.partition(":")
        if not sep:
            raise UsageError(f"{FIELDS_KEY}: '{item.strip()}' is not field:type")
        pairs.append((field.strip(), type_text.strip()))
    return pairs


@dataclass(frozen=True)
class CastSettings(Settings):
    """The keys of :class:`TypeCastConverter` (``.N`` inside fork branch N)."""

    spec: str = setting(FIELDS_KEY, required=True, scope=Scope.FORK, example="amount:double,at:timestamp[ms, UTC]",
                        doc="field:type pairs (Arrow type names)")
    safe: bool = setting(SAFE_KEY, default=True, scope=Scope.FORK, doc="fail on overflow or truncation")
    failure_policy: str = setting(POLICY_KEY, default="FAIL", choices=("FAIL", "ERR_FILE"), scope=Scope.FORK,
                                  doc="a row holding a value that does not cast: FAIL the task (exit 65, naming "
                                      "its file, line and field) or ERR_FILE: written to qualitychecker.row.err.file "
                                      "and dropped")

    @property
    def casts(self) -> dict[str, pa.DataType]:
        return {field: parse_type(type_text) for field, type_text in _split_spec(self.spec)}

    def check(self) -> list[ConfigError]:
        try:
            _ = self.casts  # parsing every type is the check
        except UsageError as exc:
            return [ConfigError(str(exc), key=FIELDS_KEY, hint="use Arrow type names, e.g. amount:double")]
        return []


class TypeCastConverter(Converter):
    """Casts the listed fields with Arrow compute kernels; other fields pass through untouched."""

    settings_class = CastSettings

    changes_row_count = False  # True when rows that do not cast go to the error file

    def init(self, state: WorkUnitState) -> None:
        settings = CastSettings.load(state)
        self.casts, self.safe = settings.casts, settings.safe
        self.state = state
        self.routed = 0
        self.error_file: ErrorFile | None = None
        if settings.failure_policy == "ERR_FILE":
            directory = state.get_prop(ERR_DIR_KEY)
            if not directory:
                raise UsageError(f"{POLICY_KEY}=ERR_FILE: {ERR_DIR_KEY} is not set; it names the folder of the "
                                 "rows that do not cast")
            self.changes_row_count = True
            self.error_file = ErrorFile(directory, state.get_prop("writer.fs.uri"), type(self).__name__,
                                        state.get_prop("task.id") or state.id or "task",
                                        int(state.get_prop("fork.branch.id") or -1))

    def convert_schema(self, schema: pa.Schema, state: WorkUnitState) -> pa.Schema:
        missing = [f for f in self.casts if schema.get_field_index(f) < 0]
        if missing:
            raise UsageError(f"{FIELDS_KEY}: no field {', '.join(missing)} in the input (it has {', '.join(schema.names)})")
        self._schema = pa.schema(
            [f.with_type(self.casts[f.name]) if f.name in self.casts else f for f in schema]
        )
        return self._schema

    def convert_batch(self, batch: pa.RecordBatch, state: WorkUnitState) -> pa.RecordBatch:
        columns = []
        for field, column in zip(batch.schema, batch.columns, strict=True):
            target = self.casts.get(field.name)
            if target is None or column.type == target:
                columns.append(column)
                continue
            try:
                columns.append(pc.cast(column, target, safe=self.safe))
            except pa.ArrowNotImplementedError as exc:
                raise UsageError(f"{FIELDS_KEY}: cannot cast field {field.name!r} from {column.type} to {target}: "
                                 f"{exc}") from exc
            except pa.ArrowInvalid as exc:
                if self.error_file is None:
                    raise self._bad_value(field.name, column, target) from exc
                return self.convert_batch(self._route(batch), state)  # the rest casts
        return pa.RecordBatch.from_arrays(columns, schema=self._schema)

    def _route(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """``batch`` without its rows holding a value that does not cast, which go to the error file."""
        bad: set[int] = set()
        for field, column in zip(batch.schema, batch.columns, strict=True):
            target = self.casts.get(field.name)
            if target is not None and column.type != target:
                bad.update(bad_rows(column, target, self.safe))
        rows = sorted(bad)
        assert self.error_file is not None
        self.error_file.write(batch.take(rows).to_pylist())  # only the rows routed cross into Python
        if not self.routed:
            log.warning("cast_rows_to_error_file", task=self.state.get_prop("task.id"), rows=len(rows),
                        error_file=self.error_file.path, note="rows holding a value that does not cast")
        self.routed += len(rows)
        keep = [True] * batch.num_rows  # only a batch holding such rows gets here
        for row in rows:
            keep[row] = False
        return batch.filter(pa.array(keep, pa.bool_()))

    def close(self) -> None:
        if self.error_file is None:
            return
        self.error_file.close()
        if self.routed:  # counted in the summary as a row policy's rows
            branch = self.state.get_prop("fork.branch.id")
            self.state.set_prop(RESULTS_KEY + (f".{branch}" if branch else ""), json.dumps(
                [{"policy": type(self).__name__, "type": "ERR_FILE", "failed_rows": self.routed}]))

    def _bad_value(self, name: str, column: pa.Array, target: pa.DataType) -> DataError:
        """The error naming the first value of ``column`` that fails its cast, and its row in the batch."""
        row = first_bad_row(column, target, self.safe)
        value = f"{shown(column[row].as_py())} " if row is not None else ""
        return DataError(f"column '{name}': {value}does not cast from {column.type} to {target} ({FIELDS_KEY}); "
                         f"fix the record, or set {POLICY_KEY}=ERR_FILE to route such rows to {ERR_DIR_KEY}",
                         row=row)
