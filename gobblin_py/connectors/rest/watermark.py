"""The REST source's watermark: the highest value of ``rest.watermark.field`` pulled, and where a run that stopped at
``rest.paging.max`` left its walk through the pages.

``{"value": 42}`` after a run that read every page; ``{"value": 42, "resume": {"shape": {…}, "position": 7,
"high": 57, …}}`` after one stopped by the page limit (:mod:`.walk`): the next run asks the same records
(``rest.watermark.param`` is still sent 42) from that page, page number, offset or cursor on, so nothing between
is skipped, and commits the highest value once the last page is read. A first run has :data:`NONE`: below every value a field can hold (the lowest
long, which a record may therefore not have), so negative ids are pulled too.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from gobblin_py.sdk.errors import PermanentError
from gobblin_py.sdk.watermarks import LongWatermark

NONE = -(2 ** 63)  # no run pulled anything yet: every record is new
LONG_MAX = 2 ** 63 - 1
_WHOLE = re.compile(r"^[+-]?[0-9]+$")  # ASCII digits only: int() also reads "٣" as 3


@dataclass(frozen=True)
class RestWatermark(LongWatermark):
    """A :class:`LongWatermark` that may carry where a walk through the pages resumes (see the module)."""

    resume: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value} if self.resume is None else {"value": self.value, "resume": self.resume}

    @classmethod
    def from_json(cls, data: Any) -> RestWatermark:
        value = LongWatermark.from_json(data).value
        resume = data.get("resume")
        return cls(value, resume if isinstance(resume, dict) else None)


def whole_number(value: Any, field: str, where: str) -> int:
    """``value`` of a record's watermark field as the whole number (a long) it must be; an error naming the field
    and the record (``where``) for a fraction, text that is no number, a boolean, null, or a value a long cannot
    hold."""
    number: int | None = None
    if isinstance(value, bool) or value is None:
        number = None
    elif isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and _WHOLE.match(value.strip()):
        number = int(value.strip())
    if number is None:
        raise PermanentError(f"{where}: rest.watermark.field={field} is {_shown(value)}, not a whole number: the "
                             "watermark cannot hold it (a fraction would be cut, and records skipped)")
    if not NONE < number <= LONG_MAX:
        raise PermanentError(f"{where}: rest.watermark.field={field} is {_shown(value)}, outside what a watermark holds "
                             f"({NONE + 1} to {LONG_MAX})")
    return number


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    if isinstance(value, int) and not isinstance(value, bool) and len(text) > 24:
        return f"{text[:10]}…({len(text.lstrip('-'))} digits)"
    return text if len(text) <= 80 else text[:79] + "…"
