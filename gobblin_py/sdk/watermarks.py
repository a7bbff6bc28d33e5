"""Watermarks: where a task starts, where it is expected to end, and where it actually ended.

A watermark is stored as JSON under Gobblin's property keys, exactly as Gobblin's Gson writes it, so state
written by either tool reads in the other:

- ``LongWatermark`` → ``{"value":123}``
- ``MultiLongWatermark`` → ``{"values":[1,2,3]}``
- ``WatermarkInterval`` → ``{"low.watermark.to.json":<low>,"expected.watermark.to.json":<expected high>}``

Custom watermark types subclass :class:`Watermark` and are found by dotted Python path (``pkg.mod.Class`` or
``pkg.mod:Class``) or by a registered name, Gobblin's Java class names of the built-ins included.
"""

from __future__ import annotations

import importlib
import json
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from functools import total_ordering
from typing import Any, TypeVar

from gobblin_py.sdk.errors import UsageError

W = TypeVar("W", bound="Watermark")


def to_compact_json(value: Any) -> str:
    """JSON as Gson's ``JsonElement.toString()`` renders it: no spaces, non-ASCII kept."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


class Watermark(ABC):
    """A position in a source. Subclasses give the JSON round trip and, optionally, progress reporting."""

    @abstractmethod
    def to_json(self) -> Any:
        """The JSON-compatible value stored in state (a dict for the built-ins)."""

    @classmethod
    @abstractmethod
    def from_json(cls: type[W], data: Any) -> W:
        """Rebuild a watermark from what :meth:`to_json` produced."""

    def percent_completion(self, low: Watermark, high: Watermark) -> int:
        """How far this watermark is between ``low`` and ``high``, 0–100. Types without an order say 0."""
        return 0

    def to_json_string(self) -> str:
        return to_compact_json(self.to_json())


@total_ordering
@dataclass(frozen=True)
class LongWatermark(Watermark):
    """A single ``long`` position: a row id, an epoch time, an offset."""

    value: int

    def to_json(self) -> dict[str, int]:
        return {"value": self.value}

    @classmethod
    def from_json(cls, data: Any) -> LongWatermark:
        if not isinstance(data, dict) or not isinstance(data.get("value"), int):
            raise ValueError(f"not a LongWatermark: {to_compact_json(data)}")
        return cls(data["value"])

    def __lt__(self, other: LongWatermark) -> bool:
        return self.value < other.value

    def percent_completion(self, low: Watermark, high: Watermark) -> int:
        assert isinstance(low, LongWatermark) and isinstance(high, LongWatermark)
        span = high.value - low.value
        if span <= 0:
            return 100
        return max(0, min(100, (self.value - low.value) * 100 // span))


@dataclass(frozen=True)
class MultiLongWatermark(Watermark):
    """One ``long`` position per partition of a dataset (e.g. Kafka partitions pulled by one task)."""

    values: tuple[int, ...]

    def __init__(self, values: Any) -> None:
        object.__setattr__(self, "values", tuple(int(v) for v in values))

    def to_json(self) -> dict[str, list[int]]:
        return {"values": list(self.values)}

    @classmethod
    def from_json(cls, data: Any) -> MultiLongWatermark:
        values = data.get("values") if isinstance(data, dict) else None
        if not isinstance(values, list) or not all(isinstance(v, int) for v in values):
            raise ValueError(f"not a MultiLongWatermark: {to_compact_json(data)}")
        return cls(values)

    def percent_completion(self, low: Watermark, high: Watermark) -> int:
        assert isinstance(low, MultiLongWatermark) and isinstance(high, MultiLongWatermark)
        span = sum(h - lo for h, lo in zip(high.values, low.values, strict=True))
        if span <= 0:
            return 100
        done = sum(v - lo for v, lo in zip(self.values, low.values, strict=True))
        return max(0, min(100, done * 100 // span))


LOW_KEY = "low.watermark.to.json"
EXPECTED_HIGH_KEY = "expected.watermark.to.json"


@dataclass(frozen=True)
class WatermarkInterval:
    """The range a work unit covers: from its low watermark to its expected high watermark.

    The ends are kept as their JSON values so that an interval of any watermark type round-trips without
    knowing the type; :meth:`low` and :meth:`expected_high` rebuild typed watermarks on request.
    """

    low_json: Any
    expected_high_json: Any

    @classmethod
    def of(cls, low: Watermark, expected_high: Watermark) -> WatermarkInterval:
        return cls(low.to_json(), expected_high.to_json())

    def to_json(self) -> dict[str, Any]:
        return {LOW_KEY: self.low_json, EXPECTED_HIGH_KEY: self.expected_high_json}

    def to_json_string(self) -> str:
        return to_compact_json(self.to_json())

    @classmethod
    def from_json_string(cls, text: str) -> WatermarkInterval:
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError(f"not a watermark interval: {text}")
        return cls(data.get(LOW_KEY), data.get(EXPECTED_HIGH_KEY))

    def low(self, cls: type[W]) -> W | None:
        return None if self.low_json is None else cls.from_json(self.low_json)

    def expected_high(self, cls: type[W]) -> W | None:
        return None if self.expected_high_json is None else cls.from_json(self.expected_high_json)


PARTITION_KEY = "partition.id"  # Gobblin's KafkaSource: a work unit's partition, partition.id.<i> per list entry


def partition_ids(get_prop: Callable[[str], Any]) -> list[int]:
    """The partitions a work unit's watermarks cover, from its ``partition.id.0``, ``partition.id.1``, … keys (one
    per entry of its ``MultiLongWatermark``s, in order) or its single ``partition.id``; empty when it names none."""
    found: list[int] = []
    while get_prop(f"{PARTITION_KEY}.{len(found)}") is not None:
        found.append(int(get_prop(f"{PARTITION_KEY}.{len(found)}")))
    if found:
        return found
    single = get_prop(PARTITION_KEY)
    return [int(single)] if single is not None else []


def _entries(value: Any, count: int) -> list[Any] | None:
    """A watermark's JSON value as ``count`` per-partition values: a list's entries, or a single value's one."""
    if isinstance(value, dict) and set(value) == {"values"} and isinstance(value["values"], list):
        return list(value["values"]) if len(value["values"]) == count else None
    if count == 1 and value is not None:
        return [value["value"] if isinstance(value, dict) and set(value) == {"value"} else value]
    return None


def by_partition(partitions: list[int], *watermarks: Any) -> list[tuple[int, ...]] | None:
    """``(partition, value of each watermark…)`` per partition, ordered by partition number; None when the
    watermarks (JSON values) do not have one entry per partition."""
    if not partitions:
        return None
    columns = [_entries(w, len(partitions)) for w in watermarks]
    if any(c is None for c in columns):
        return None
    rows = zip(partitions, *columns, strict=True)
    return sorted(rows, key=lambda row: row[0])


def watermark_sort_key(value: Any) -> tuple:
    """Orders watermarks' JSON values as numbers where they are numbers (never 10 before 9), else as text."""
    if isinstance(value, dict) and set(value) == {"value"} and isinstance(value["value"], int):
        return (0, (value["value"],), "")
    if isinstance(value, dict) and set(value) == {"values"} and all(isinstance(v, int) for v in value["values"]):
        return (0, tuple(value["values"]), "")
    if isinstance(value, int):
        return (0, (value,), "")
    return (1, (), to_compact_json(value))


_BUILTIN_NAMES: dict[str, type[Watermark]] = {}
for _cls, _java in (
    (LongWatermark, "source.extractor.extract.LongWatermark"),
    (MultiLongWatermark, "source.extractor.extract.kafka.MultiLongWatermark"),
):
    for _name in (_cls.__name__, f"gobblin.{_java}", f"org.apache.gobblin.{_java}"):
        _BUILTIN_NAMES[_name] = _cls


def register_watermark_type(name: str, cls: type[Watermark]) -> None:
    """Make ``cls`` reachable under ``name`` (e.g. the Java class name of the type it mirrors)."""
    _BUILTIN_NAMES[name] = cls


def resolve_watermark_type(name: str) -> type[Watermark]:
    """Find a watermark class by registered name or dotted path; a clear UsageError otherwise."""
    if name in _BUILTIN_NAMES:
        return _BUILTIN_NAMES[name]
    module_name, sep, attr = name.partition(":")
    if not sep:
        module_name, _, attr = name.rpartition(".")
    if not module_name or not attr:
        raise UsageError(f"watermark type {name!r} is neither a known name nor a dotted path 'pkg.mod.Class'")
    try:
        cls = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise UsageError(f"watermark type {name!r} cannot be loaded: {exc}") from None
    if not (isinstance(cls, type) and issubclass(cls, Watermark)):
        raise UsageError(f"watermark type {name!r} is not a subclass of gobblin_py.sdk.watermarks.Watermark")
    return cls
