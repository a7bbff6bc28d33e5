"""A chain of converters: the ones ``converter.classes`` (or ``converter.classes.N`` in fork branch N) names, in order.

Each converter may turn one batch into any number (none filters it out). Gobblin-style per-record converters
join the chain through :class:`~gobblin_py.runtime.execute.record_adapter.RecordConverterAdapter` (the slow path).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import cast

import pyarrow as pa

from gobblin_py.runtime.execute.record_adapter import RecordConverterAdapter
from gobblin_py.sdk.contracts import Converter, RecordConverter, RowCountChanging, plugin_name
from gobblin_py.sdk.errors import DataError, RecordsLost
from gobblin_py.sdk.plugins import instantiate
from gobblin_py.sdk.states import State


class ConverterChain:
    """The converters of one stream (before the fork, or one branch), built and ``init``-ed from a state.

    It counts the rows each converter receives and gives. A converter may change the number of rows only if it
    says it may (:class:`~gobblin_py.sdk.contracts.RowCountChanging`: filters, samplers, per-record converters); one that
    does without saying so has lost records, and :meth:`check_counts` fails the task with the numbers.
    """

    def __init__(self, converters: list[Converter], state: State) -> None:
        self.converters = converters
        self.state = state
        self.rows_in = [0] * len(converters)
        self.rows_out = [0] * len(converters)

    @classmethod
    def build(cls, state: State, key: str) -> ConverterChain:
        """The converters named by ``key`` (comma list); an empty chain when it names none."""
        converters: list[Converter] = []
        for name in state.get_prop_as_list(key):
            plugin = instantiate(name, key, Converter)
            # not a Converter: a per-record one (instantiate accepts nothing else for this base)
            converter = plugin if isinstance(plugin, Converter) else RecordConverterAdapter(cast(RecordConverter, plugin))
            converter.init(state)  # type: ignore[arg-type]
            converters.append(converter)
        return cls(converters, state)

    def schema(self, schema: pa.Schema) -> pa.Schema:
        """The schema that comes out of the chain for ``schema``."""
        for converter in self.converters:
            schema = converter.convert_schema(schema, self.state)  # type: ignore[arg-type]
        return schema

    def apply(self, batch: pa.RecordBatch) -> Iterator[pa.RecordBatch]:
        """The batches ``batch`` becomes (each converter may split, filter or pass a batch). A value a converter
        cannot convert (:class:`DataError`) keeps its row only while that row is still the row of ``batch``."""
        batches: Iterable[pa.RecordBatch] = (batch,)
        aligned = True  # the rows reaching the converter are those of ``batch``, in order
        for index, converter in enumerate(self.converters):
            produced: list[pa.RecordBatch] = []
            for item in batches:
                self.rows_in[index] += item.num_rows
                try:
                    result = converter.convert_batch(item, self.state)  # type: ignore[arg-type]
                except DataError as exc:
                    if aligned or exc.row is None:
                        raise
                    raise exc.located(None) from exc
                if isinstance(result, pa.RecordBatch):
                    produced.append(result)
                else:
                    produced.extend(result)
            self.rows_out[index] += sum(b.num_rows for b in produced)
            aligned = aligned and len(produced) == 1 and produced[0].num_rows == batch.num_rows
            batches = produced
        yield from batches

    def dropped(self) -> int:
        """Rows in minus rows out over the whole chain (negative when converters added rows)."""
        return (self.rows_in[0] - self.rows_out[-1]) if self.converters else 0

    def counts(self) -> list[dict]:
        return [{"converter": plugin_name(c.plugin if isinstance(c, RecordConverterAdapter) else c),
                 "in": i, "out": o} for c, i, o in zip(self.converters, self.rows_in, self.rows_out, strict=True)]

    def check_counts(self) -> None:
        """Fail when a converter that does not declare it changed the number of rows."""
        for converter, rows_in, rows_out in zip(self.converters, self.rows_in, self.rows_out, strict=True):
            declared = isinstance(converter, RowCountChanging) and converter.changes_row_count
            if rows_in != rows_out and not declared:
                raise RecordsLost(f"converter {plugin_name(converter)} received {rows_in} rows and gave {rows_out}; "
                                  "it does not declare that it drops or adds rows (changes_row_count = True), so "
                                  f"{abs(rows_in - rows_out)} rows were {'lost' if rows_out < rows_in else 'invented'}")

    def close(self) -> None:
        for converter in self.converters:
            converter.close()
