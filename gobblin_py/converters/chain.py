"""A chain of converters: the ones ``converter.classes`` (or ``converter.classes.N`` in fork branch N) names, in order.

Each converter may turn one batch into any number (none filters it out). Gobblin-style per-record converters
join the chain through :class:`~gobblin_py.converters.record_adapter.RecordConverterAdapter` (the slow path).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import pyarrow as pa

from gobblin_py.api import Converter
from gobblin_py.converters.record_adapter import RecordConverterAdapter
from gobblin_py.plugins import instantiate
from gobblin_py.state import State


class ConverterChain:
    """The converters of one stream (before the fork, or one branch), built and ``init``-ed from a state."""

    def __init__(self, converters: list[Converter], state: State) -> None:
        self.converters = converters
        self.state = state

    @classmethod
    def build(cls, state: State, key: str) -> "ConverterChain":
        """The converters named by ``key`` (comma list); an empty chain when it names none."""
        converters: list[Converter] = []
        for name in state.get_prop_as_list(key):
            plugin = instantiate(name, key, Converter)
            converter = plugin if isinstance(plugin, Converter) else RecordConverterAdapter(plugin)
            converter.init(state)  # type: ignore[arg-type]
            converters.append(converter)
        return cls(converters, state)

    def schema(self, schema: pa.Schema) -> pa.Schema:
        """The schema that comes out of the chain for ``schema``."""
        for converter in self.converters:
            schema = converter.convert_schema(schema, self.state)  # type: ignore[arg-type]
        return schema

    def apply(self, batch: pa.RecordBatch) -> Iterator[pa.RecordBatch]:
        """The batches ``batch`` becomes (each converter may split, filter or pass a batch)."""
        batches: Iterable[pa.RecordBatch] = (batch,)
        for converter in self.converters:
            produced: list[pa.RecordBatch] = []
            for item in batches:
                result = converter.convert_batch(item, self.state)  # type: ignore[arg-type]
                if isinstance(result, pa.RecordBatch):
                    produced.append(result)
                else:
                    produced.extend(result)
            batches = produced
        yield from batches

    def close(self) -> None:
        for converter in self.converters:
            converter.close()
