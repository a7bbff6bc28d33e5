"""Gobblin's ``SamplingConverter``: keeps each record with probability ``converter.sample.ratio``.

One random draw per row, for a whole batch at once (a vectorised mask): a row is kept when its draw in
[0, 1) is at most the ratio. As in Gobblin, a ratio that does not parse or lies outside [0, 1] falls back to
0.01 with a warning instead of failing the job.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from gobblin_py.sdk.contracts import Converter
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.settings import Kind, Scope, Settings, setting
from gobblin_py.sdk.states import WorkUnitState

log = get_logger(__name__)

RATIO_KEY = "converter.sample.ratio"
DEFAULT_RATIO = 0.01


def sample_ratio(text: str | None) -> float:
    """``converter.sample.ratio`` as Gobblin reads it: a number in [0, 1], else 0.01 (with a warning)."""
    if text is None or not text.strip():
        return DEFAULT_RATIO
    try:
        ratio = float(text.strip().rstrip("dDfF"))
    except ValueError:
        ratio = -1.0
    if not 0.0 <= ratio <= 1.0:
        log.warning("sample_ratio_invalid", key=RATIO_KEY, value=text, used=DEFAULT_RATIO,
                    note="expected a number between 0 and 1; Gobblin falls back to 0.01")
        return DEFAULT_RATIO
    return ratio


@dataclass(frozen=True)
class SamplingSettings(Settings):
    """The key of :class:`SamplingConverter` (read as text: a bad value falls back, as in Gobblin)."""

    ratio: str | None = setting(RATIO_KEY, kind=Kind.STR, scope=Scope.FORK, default_doc="0.01",
                                doc="share of records kept, 0 to 1 (a bad value means 0.01)")


class SamplingConverter(Converter):
    """Keeps a random share of the rows of every batch."""

    changes_row_count = True  # it keeps a random share of the rows

    settings_class = SamplingSettings

    def init(self, state: WorkUnitState) -> None:
        self.ratio = sample_ratio(SamplingSettings.load(state).ratio)

    def convert_schema(self, schema: pa.Schema, state: WorkUnitState) -> pa.Schema:
        return schema

    def convert_batch(self, batch: pa.RecordBatch, state: WorkUnitState) -> pa.RecordBatch:
        if self.ratio >= 1.0:
            return batch
        draws = pc.random(batch.num_rows, initializer="system")
        return batch.filter(pc.less_equal(draws, self.ratio))
