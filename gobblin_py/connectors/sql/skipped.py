"""Datasets a run does not pull, kept alive by an empty work unit (``skipped.dataset.mode=empty_workunit``).

Gobblin's "solution 1": a table left out of a run (blacklisted, no longer listed, or with nothing new) gets a work
unit whose low watermark equals its expected high watermark, so each run re-commits its position. Its failed
ranges are not retried while it is skipped: their gaps go back into the position, so nothing is lost.
"""

from __future__ import annotations

import json

from gobblin_py.connectors.sql import keys as K
from gobblin_py.connectors.sql.positions import SINGLE, Previous, position_key, previous_codec, previous_watermarks
from gobblin_py.connectors.sql.watermarks import WatermarkCodec, multi, watermark_type
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.run_states import SourceState
from gobblin_py.sdk.states import Extract, WorkUnit, WorkUnitState
from gobblin_py.sdk.watermarks import WatermarkInterval

log = get_logger(__name__)

_CARRIED = ("source.entity", K.SCHEMA, K.TABLE, K.DELTA_FIELDS, K.PK_FIELDS, K.WATERMARK_TYPE, K.WATERMARK_CLASS,
            K.DELTA_KIND, K.PARTITION_COLUMN, K.DRIVER)


def empty_units(state: SourceState, previous: dict[str, list[WorkUnitState]], planned: dict[str, list[WorkUnit]],
                frontiers: dict[str, Previous], skipped: list[str]) -> list[WorkUnit]:
    """An empty work unit (low = expected high) for every known dataset this run plans nothing for."""
    units = []
    for urn, states in sorted(previous.items()):
        if planned.get(urn):
            continue
        prev = frontiers.get(urn)
        if prev is None:
            class_name = next((u.get_prop(K.WATERMARK_CLASS) for u in states if u.get_prop(K.WATERMARK_CLASS)), None)
            prev = previous_watermarks(state, states, previous_codec(states, None, class_name), retry=False)
        unit = _empty_unit(urn, prev)
        if unit is not None:
            units.append(unit)
            log.info("sql_empty_workunit", dataset=urn, reason="skipped" if urn in skipped else "nothing new")
    return units


def _empty_unit(urn: str, prev: Previous) -> WorkUnit | None:
    if prev.template is None or not prev.frontier:
        return None
    template = prev.template
    frontier = dict(prev.frontier)
    for retry in prev.retries:
        for key, low in retry.low.items():
            if low < retry.high[key]:
                frontier[key] = min(frontier.get(key, low), low)
    extract = Extract.create(template.get_prop(K.TABLE_TYPE) or "APPEND_ONLY", template.get_prop("extract.namespace") or "",
                             template.get_prop("extract.table.name") or urn)
    values = None
    if prev.partitioned:
        stored = json.loads(template.get_prop(K.PARTITION_VALUES_STATE) or "[]")
        values = [v for v in stored if position_key(v) in frontier]
        vector = multi([frontier[position_key(v)] for v in values])
        interval = WatermarkInterval.of(vector, vector)
    else:
        codec = WatermarkCodec(watermark_type(template.get_prop(K.WATERMARK_TYPE)) or "simple",
                               template.get_prop(K.WATERMARK_CLASS))
        mark = codec.make(frontier[SINGLE])
        interval = WatermarkInterval.of(mark, mark)
    unit = WorkUnit.create(extract, interval)
    for key in _CARRIED:
        value = template.get_prop(key)
        if value is not None:
            unit.set_prop(key, value)
    if values is not None:
        unit.set_prop(K.PARTITION_VALUES_STATE, json.dumps(values))
    unit.set_prop("dataset.urn", urn)
    unit.set_prop(K.WATERMARK_RANGE, K.HALF_OPEN)
    unit.set_prop(K.EMPTY, "true")
    unit.set_prop(K.ESTIMATED_ROWS, 0)
    return unit
