"""Event-time progress: the completeness watermark and the (watermark, event time) pairs of timestamp replay.

Gearpump's clock service, brought to batch. A task records what it read of each partition of its work unit
(:class:`~gobblin_py.sdk.contracts.PartitionProgress`: from which watermark to which, how many records, their earliest and
latest event times). When a dataset commits:

- each partition's **committed event-time progress** becomes the latest event time committed for it, ever;
- the dataset's **completeness watermark** (Gearpump's minimum clock) becomes the minimum of those over its
  partitions that have had data: every record with an earlier event time is committed. It never goes back, and
  it does not move in a run in which any of the dataset's work units failed or was skipped;
- each partition's **replay pairs** gain ``[low, high, min event, max event]`` for the range just committed
  (the last ``gpy.replay.pairs.max`` per partition are kept), so that a ``TIMESTAMP`` startpoint resolves to a
  watermark even where the watermark is not a time (an id, a file's position): the low end of the earliest
  committed range that holds an event at or after the time.

All of it is kept as properties of the dataset's state (Gobblin reads them as unknown properties), so it is
committed, exactly once, with the watermarks.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from gobblin_py.sdk.run_states import DatasetState
from gobblin_py.sdk.states import TaskState, WorkingState

TASK_PROGRESS_KEY = "gpy.partition.progress"
EVENT_PROGRESS_KEY = "gpy.partition.event.progress"
COMPLETENESS_KEY = "gpy.completeness.watermark"
REPLAY_PAIRS_KEY = "gpy.replay.pairs"
DEFAULT_MAX_PAIRS = 1000


def record_progress(task: TaskState, progress: dict[str, Any]) -> None:
    """Keep a task's per-partition progress (``PartitionProgress`` values) in its state."""
    task.set_prop(TASK_PROGRESS_KEY, json.dumps(
        {p: [pr.low, pr.high, pr.records, pr.min_event_ms, pr.max_event_ms] for p, pr in progress.items()},
        separators=(",", ":"), sort_keys=True))


def task_progress(task: TaskState) -> dict[str, list]:
    """``{partition: [low, high, records, min event ms, max event ms]}`` of a task (empty when unreported)."""
    text = task.get_prop(TASK_PROGRESS_KEY)
    return json.loads(text) if text else {}


def _json_prop(state: DatasetState | None, key: str) -> Any:
    text = state.properties.get(key) if state is not None else None
    return json.loads(text) if text else {}


def completeness(state: DatasetState | None) -> int | None:
    """A dataset's completeness watermark (epoch milliseconds), or None when it has none yet."""
    value = state.properties.get(COMPLETENESS_KEY) if state is not None else None
    return int(value) if value not in (None, "") else None


def partition_event_progress(state: DatasetState | None) -> dict[str, int]:
    """Each partition's committed event-time progress (epoch milliseconds)."""
    return {p: int(v) for p, v in _json_prop(state, EVENT_PROGRESS_KEY).items()}


def replay_pairs(state: DatasetState | None) -> dict[str, list[list]]:
    return _json_prop(state, REPLAY_PAIRS_KEY)


def advance(dataset: DatasetState, previous: DatasetState | None, tasks: Iterable[TaskState],
            max_pairs: int = DEFAULT_MAX_PAIRS) -> None:
    """Carry the event-time bookkeeping of ``previous`` into ``dataset``, advanced by what its tasks committed."""
    tasks = list(tasks)
    events = partition_event_progress(previous)
    pairs = replay_pairs(previous)
    stalled = False
    for task in tasks:
        if task.working_state is not WorkingState.COMMITTED:
            stalled = True  # a failed or skipped work unit: its partitions did not progress
            continue
        for partition, (low, high, records, min_ev, max_ev) in task_progress(task).items():
            if not records or max_ev is None:
                continue
            events[partition] = max(events.get(partition, max_ev), max_ev)
            pairs.setdefault(partition, []).append([low, high, min_ev, max_ev])
    for partition in pairs:
        pairs[partition] = pairs[partition][-max_pairs:]
    before = completeness(previous)
    now = before
    if events and not stalled:
        lowest = min(events.values())
        now = lowest if before is None else max(before, lowest)
    if events:
        dataset.properties[EVENT_PROGRESS_KEY] = json.dumps(events, separators=(",", ":"), sort_keys=True)
    if pairs:
        dataset.properties[REPLAY_PAIRS_KEY] = json.dumps(pairs, separators=(",", ":"), sort_keys=True)
    if now is not None:
        dataset.properties[COMPLETENESS_KEY] = str(now)


def replay_low(previous: DatasetState | None, partition: str, timestamp_ms: int) -> tuple[bool, Any]:
    """Where a replay from ``timestamp_ms`` starts in a partition: ``(found, low watermark)``.

    The low end of the earliest committed range whose latest event is at or after the time (event times grow
    roughly with the watermark, so nothing before it holds a later event). ``(False, None)`` when no committed
    range does: every committed record is older, nothing needs replaying. With no history at all, ``(True,
    None)``: start from the oldest data.
    """
    history = replay_pairs(previous).get(partition)
    if not history:
        return True, None
    candidates = [pair for pair in history if pair[3] is not None and pair[3] >= timestamp_ms]
    if not candidates:
        return False, None
    return True, min(candidates, key=lambda pair: _order(pair[0]))[0]


def _order(value: Any) -> Any:
    return (0, value) if isinstance(value, (int, float)) else (1, str(value))
