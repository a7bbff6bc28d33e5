"""What planning one table of a SQL source needs, gathered once by the source for the range planner."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from gobblin_py.connectors.sql.dialects.base import Dialect
from gobblin_py.connectors.sql.positions import Previous
from gobblin_py.connectors.sql.settings import QueryBasedSettings
from gobblin_py.connectors.sql.watermarks import WatermarkCodec
from gobblin_py.sdk.states import Extract
from gobblin_py.store.startpoints import Startpoint


@dataclass
class TablePlan:
    """What planning one table needs: its settings, where it is, its delta expression and previous positions.

    ``keys`` maps a key to the name it was set under for this table (``source.querybased.entity.<t>.<key>``
    when the table has its own value), for messages.
    """

    entity: str
    settings: QueryBasedSettings
    keys: dict[str, str]
    dialect: Dialect
    conn: Any
    qualified: str
    expr: str
    delta_names: str
    codec: WatermarkCodec
    prev: Previous
    is_full: bool
    extract: Extract
    base: dict[str, str]
    zone: dt.tzinfo
    indexed: bool = False  # the delta expression is one column leading an index: MIN/MAX from its ends
    startpoint: Startpoint | None = None
    replay: tuple[bool, Any] = (True, None)  # for a TIMESTAMP startpoint: (found, low watermark) from the replay pairs
    slots: int = 1  # the job's task slots: how many work units run at once
