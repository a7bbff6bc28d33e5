"""Gobblin's state hierarchy: string-property maps that carry a job's configuration and progress.

``State`` is a map of string properties with typed getters. The others add what Gobblin adds:

- ``Extract`` — table-level facts (namespace, table, table type); a ``WorkUnit`` carries one.
- ``WorkUnit`` / ``MultiWorkUnit`` — a unit of work and its watermark interval; a multi work unit runs as one task.
- ``WorkUnitState`` / ``TaskState`` — what running a work unit produced (actual high watermark, counters,
  working state); lookups fall through own → work unit → extract → job state.
- ``SourceState`` / ``JobState`` / ``DatasetState`` (in :mod:`gobblin_py.sdk.run_states`) — the job's
  configuration, its run (id, times, running state) and its task states; a ``DatasetState`` is the part of a run
  that belongs to one ``dataset.urn``.
"""

from __future__ import annotations

import enum
import json
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TypeVar

from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.watermarks import W, Watermark, WatermarkInterval, to_compact_json

# Property keys Gobblin uses for these states.
DATASET_URN_KEY = "dataset.urn"
DEFAULT_DATASET_URN = ""
JOB_FAILURES_KEY = "job.failures"
WORKING_STATE_KEY = "workunit.working.state"
WATERMARK_INTERVAL_KEY = "watermark.interval.value"
ACTUAL_HIGH_WATERMARK_KEY = "workunit.state.actual.high.water.mark"
LEGACY_LOW_WATERMARK_KEY = "workunit.low.water.mark"
LEGACY_HIGH_WATERMARK_KEY = "workunit.high.water.mark"
LEGACY_RUNTIME_HIGH_WATERMARK_KEY = "workunit.state.runtime.high.water.mark"

_MISSING = object()
S = TypeVar("S", bound="State")
# attributes that link a state to others rather than hold its value: left out of equality
_LINKS = frozenset({"_fallbacks", "_job_state"})


def _value(state: State) -> dict[str, Any]:
    return {k: v for k, v in state.__dict__.items() if k not in _LINKS}


class RunningState(str, enum.Enum):
    """The state of a job run (``JobState.RunningState``)."""

    PENDING = "PENDING"
    RUNNING = "RUNNING"
    SUCCESSFUL = "SUCCESSFUL"
    COMMITTED = "COMMITTED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"


class WorkingState(str, enum.Enum):
    """The state of a work unit / task (``WorkUnitState.WorkingState``)."""

    PENDING = "PENDING"
    RUNNING = "RUNNING"
    SUCCESSFUL = "SUCCESSFUL"
    COMMITTED = "COMMITTED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"
    SKIPPED = "SKIPPED"


def java_string(value: Any) -> str:
    """A property value as Java's ``String.valueOf`` would render it (booleans lower-case)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, enum.Enum):
        return str(value.value)
    return str(value)


class State:
    """A map of string properties with typed getters; the base of every Gobblin state.

    ``id`` is not part of the serialised properties: it travels as the state-store record key (or is implied,
    as a job id or a task id).
    """

    # The states a key absent here is looked up in, nearest first. Subclasses keep it current as their links
    # change (every setting of every task is looked up through it, most of them in vain, so it is an attribute
    # rather than built per lookup).
    _fallbacks: tuple[State, ...] = ()

    def __init__(self, properties: Mapping[str, str] | None = None, id: str | None = None) -> None:
        self.properties: dict[str, str] = dict(properties or {})
        self.id = id

    def get_prop(self, key: str, default: Any = None) -> Any:
        """The value of ``key``, looked up in this state and then its fallbacks; ``default`` when absent."""
        value = self.properties.get(key, _MISSING)
        if value is not _MISSING:
            return value
        for fallback in self._fallbacks:
            value = fallback.get_prop(key, _MISSING)
            if value is not _MISSING:
                return value
        return default

    def get(self, key: str, default: Any = None) -> Any:
        """Same as :meth:`get_prop`, so a state can be passed where a ``Mapping`` is read with ``.get``."""
        return self.get_prop(key, default)

    def contains(self, key: str) -> bool:
        return self.get_prop(key, _MISSING) is not _MISSING

    def get_prop_as_int(self, key: str, default: int | None = None) -> int | None:
        value = self.get_prop(key)
        if value is None:
            return default
        try:
            return int(value.strip())
        except ValueError:
            raise UsageError(f"{key}={value}: not a whole number") from None

    def get_prop_as_float(self, key: str, default: float | None = None) -> float | None:
        value = self.get_prop(key)
        if value is None:
            return default
        try:
            return float(value.strip())
        except ValueError:
            raise UsageError(f"{key}={value}: not a number") from None

    def get_prop_as_bool(self, key: str, default: bool = False) -> bool:
        """Java ``Boolean.parseBoolean``: only 'true' (any case) is true."""
        value = self.get_prop(key)
        return default if value is None else value.strip().lower() == "true"

    def get_prop_as_list(self, key: str, default: str | None = None) -> list[str]:
        """Comma-separated value, items trimmed, empty items dropped."""
        value = self.get_prop(key, default)
        if value is None:
            return []
        return [item.strip() for item in value.split(",") if item.strip()]

    def set_prop(self, key: str, value: Any) -> None:
        self.properties[key] = java_string(value)

    def remove_prop(self, key: str) -> None:
        self.properties.pop(key, None)

    def add_all(self, other: State | Mapping[str, str]) -> None:
        items = other.properties if isinstance(other, State) else other
        for key, value in items.items():
            self.properties[key] = java_string(value)

    def all_properties(self) -> dict[str, str]:
        """Every visible property, fallbacks first so that nearer values win."""
        merged: dict[str, str] = {}
        for fallback in reversed(self._fallbacks):
            merged.update(fallback.all_properties())
        merged.update(self.properties)
        return merged

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and _value(self) == _value(other)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(id={self.id!r}, {len(self.properties)} properties)"


class Extract(State):
    """Table-level facts shared by the work units of one extract (namespace, table, table type, extract id)."""

    NAMESPACE_KEY = "extract.namespace"
    TABLE_KEY = "extract.table.name"
    TABLE_TYPE_KEY = "extract.table.type"
    EXTRACT_ID_KEY = "extract.extract.id"

    @classmethod
    def create(cls, table_type: str, namespace: str, table: str, now_ms: int | None = None) -> Extract:
        """An extract stamped, like Gobblin's, with an id of the form ``yyyyMMddHHmmss`` (UTC)."""
        now = (now_ms if now_ms is not None else int(time.time() * 1000)) / 1000
        return cls(
            {
                cls.TABLE_TYPE_KEY: table_type.upper(),
                cls.NAMESPACE_KEY: namespace,
                cls.TABLE_KEY: table,
                cls.EXTRACT_ID_KEY: time.strftime("%Y%m%d%H%M%S", time.gmtime(now)),
            }
        )

    @property
    def namespace(self) -> str | None:
        return self.get_prop(self.NAMESPACE_KEY)

    @property
    def table(self) -> str | None:
        return self.get_prop(self.TABLE_KEY)

    @property
    def table_type(self) -> str | None:
        return self.get_prop(self.TABLE_TYPE_KEY)


def _parse_watermark_json(text: str | None, cls: type[W] | None) -> Any:
    if text is None:
        return None
    data = json.loads(text)
    return data if cls is None else cls.from_json(data)


class WorkUnit(State):
    """A unit of work the Source hands out: its own properties plus an Extract; lookups check both."""

    def __init__(
        self,
        properties: Mapping[str, str] | None = None,
        extract: Extract | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(properties, id)
        self.extract = extract if extract is not None else Extract()

    @property
    def extract(self) -> Extract:
        return self._extract

    @extract.setter
    def extract(self, extract: Extract) -> None:
        self._extract = extract
        self._fallbacks = (extract,)

    @classmethod
    def create(cls, extract: Extract | None = None, interval: WatermarkInterval | None = None) -> WorkUnit:
        unit = cls(extract=extract)
        if interval is not None:
            unit.watermark_interval = interval
        return unit

    @property
    def watermark_interval(self) -> WatermarkInterval | None:
        text = self.get_prop(WATERMARK_INTERVAL_KEY)
        return None if text is None else WatermarkInterval.from_json_string(text)

    @watermark_interval.setter
    def watermark_interval(self, interval: WatermarkInterval) -> None:
        self.set_prop(WATERMARK_INTERVAL_KEY, interval.to_json_string())

    def low_watermark(self, cls: type[W] | None = None) -> Any:
        """The low watermark (typed if ``cls`` is given, else its JSON value); None when no interval is set."""
        interval = self.watermark_interval
        if interval is None or interval.low_json is None:
            return None
        return interval.low_json if cls is None else cls.from_json(interval.low_json)

    def expected_high_watermark(self, cls: type[W] | None = None) -> Any:
        interval = self.watermark_interval
        if interval is None or interval.expected_high_json is None:
            return None
        return interval.expected_high_json if cls is None else cls.from_json(interval.expected_high_json)


class MultiWorkUnit(WorkUnit):
    """Several work units run by one task (for packing many small units onto few executors)."""

    def __init__(
        self,
        work_units: Iterable[WorkUnit] = (),
        properties: Mapping[str, str] | None = None,
        extract: Extract | None = None,
    ) -> None:
        super().__init__(properties, extract)
        self.work_units: list[WorkUnit] = list(work_units)

    def __iter__(self) -> Iterator[WorkUnit]:
        return iter(self.work_units)


class WorkUnitState(State):
    """What running one work unit produced. Lookups: own properties → work unit → extract → job state."""

    def __init__(
        self,
        workunit: WorkUnit | None = None,
        properties: Mapping[str, str] | None = None,
        job_state: State | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(properties, id)
        self._job_state: State | None = None  # a run-time link, not serialised nor part of the value
        self.workunit = workunit if workunit is not None else WorkUnit()
        self.job_state = job_state

    @property
    def workunit(self) -> WorkUnit:
        return self._workunit

    @workunit.setter
    def workunit(self, workunit: WorkUnit) -> None:
        self._workunit = workunit
        self._link()

    @property
    def job_state(self) -> State | None:
        return self._job_state

    @job_state.setter
    def job_state(self, job_state: State | None) -> None:
        self._job_state = job_state
        self._link()

    def _link(self) -> None:
        job_state = self._job_state
        self._fallbacks = (self._workunit,) if job_state is None else (self._workunit, job_state)

    @property
    def extract(self) -> Extract:
        return self.workunit.extract

    @property
    def working_state(self) -> WorkingState:
        return WorkingState(self.get_prop(WORKING_STATE_KEY, WorkingState.PENDING.value))

    @working_state.setter
    def working_state(self, value: WorkingState) -> None:
        self.set_prop(WORKING_STATE_KEY, WorkingState(value).value)

    def actual_high_watermark(self, cls: type[W] | None = None) -> Any:
        """The actual high watermark; when a task never set one, the work unit's low watermark (as Gobblin)."""
        text = self.properties.get(ACTUAL_HIGH_WATERMARK_KEY)
        if text is None:
            return self.workunit.low_watermark(cls)
        return _parse_watermark_json(text, cls)

    def set_actual_high_watermark(self, watermark: Watermark | Any) -> None:
        data = watermark.to_json() if isinstance(watermark, Watermark) else watermark
        self.properties[ACTUAL_HIGH_WATERMARK_KEY] = to_compact_json(data)

    def backoff_actual_high_watermark(self) -> None:
        """Roll the actual high watermark back to the low watermark (a task whose output is not committed)."""
        interval = self.workunit.watermark_interval
        if interval is None:
            return
        self.properties[ACTUAL_HIGH_WATERMARK_KEY] = to_compact_json(interval.low_json)


class TaskState(WorkUnitState):
    """The state of one task: a WorkUnitState plus job id, task id and timing (epoch milliseconds)."""

    def __init__(
        self,
        job_id: str = "",
        task_id: str = "",
        workunit: WorkUnit | None = None,
        properties: Mapping[str, str] | None = None,
        start_time: int = 0,
        end_time: int = 0,
        task_duration: int = 0,
        job_state: State | None = None,
    ) -> None:
        super().__init__(workunit, properties, job_state, id=task_id)
        self.job_id = job_id
        self.task_id = task_id
        self.start_time = start_time
        self.end_time = end_time
        self.task_duration = task_duration

    @property
    def dataset_urn(self) -> str:
        return self.get_prop(DATASET_URN_KEY, DEFAULT_DATASET_URN)
