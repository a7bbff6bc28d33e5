"""Gobblin's scheduling keys, and its Quartz cron expressions as the 5-field cron lines other schedulers read.

Gobblin's standalone scheduler runs a job on ``job.schedule``, a Quartz cron expression
(``sec min hour day-of-month month day-of-week [year]``); ``job.runonce=true`` runs it once and ``job.disabled=true``
not at all. gpy does not schedule jobs itself: a run starts when cron, Airflow or a person starts it. These
keys are warned of (:func:`scheduling_warnings`), and ``gpy schedule`` turns ``job.schedule`` into a cron
expression (:func:`quartz_to_cron`) where cron can say the same: at second 0, without Quartz's ``L``, ``W`` and
``#`` and without a year. Quartz numbers the days of the week 1-7 from Sunday, cron 0-6.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from gobblin_py.sdk.errors import UsageError

SCHEDULE_KEY = "job.schedule"
RUN_ONCE_KEY = "job.runonce"
DISABLED_KEY = "job.disabled"

_DAYS = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")
_DAY_NAMES = ("SUNDAY", "MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY")
_MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
_MONTH_NAMES = ("JANUARY", "FEBRUARY", "MARCH", "APRIL", "MAY", "JUNE", "JULY", "AUGUST", "SEPTEMBER", "OCTOBER",
                "NOVEMBER", "DECEMBER")
_NAMES = frozenset(_DAYS + _DAY_NAMES + _MONTHS + _MONTH_NAMES)
# (name, lowest, highest) of the fields cron has, in Quartz's order after the seconds
_FIELDS = (("minute", 0, 59), ("hour", 0, 23), ("day-of-month", 1, 31), ("month", 1, 12), ("day-of-week", 1, 7))
_REFUSED = {
    "L": "'L' (the last day of the month or week)",
    "W": "'W' (the weekday nearest a day of the month)",
    "#": "'#' (the nth weekday of the month)",
}


class ScheduleError(UsageError):
    """A ``job.schedule`` that cron cannot express, or that is not a Quartz cron expression (exit code 2)."""


def _number(token: str, field: str, low: int, high: int, expression: str) -> int:
    """A field's value: a number, or in the month and day-of-week fields a name (``MON``, ``Monday``)."""
    upper = token.upper()
    names: tuple[tuple[str, ...], tuple[str, ...]] | None = (
        (_DAYS, _DAY_NAMES) if field == "day-of-week" else (_MONTHS, _MONTH_NAMES) if field == "month" else None)
    if names is not None and upper.isalpha():
        for index, spellings in enumerate(zip(*names, strict=True)):
            if upper in spellings:
                return index + low
        raise ScheduleError(f"{SCHEDULE_KEY}={expression}: {field} field: '{token}' is not a "
                            f"{'day' if field == 'day-of-week' else 'month'} name ({'/'.join(names[0])})")
    if not (token.isascii() and token.isdigit()):
        raise ScheduleError(f"{SCHEDULE_KEY}={expression}: {field} field: '{token}' is not a number")
    value = int(token)
    if not low <= value <= high:
        raise ScheduleError(f"{SCHEDULE_KEY}={expression}: {field} field: {value} is not within {low}-{high}")
    return value


def _field(text: str, field: str, low: int, high: int, expression: str) -> str:
    """One Quartz field as cron writes it: names become numbers, ``?`` ``*``, ``a/s`` ``a-high/s``, and the days
    of the week move from Quartz's 1-7 (SUN-SAT) to cron's 0-6."""
    if text == "?":
        if field not in ("day-of-month", "day-of-week"):
            raise ScheduleError(f"{SCHEDULE_KEY}={expression}: {field} field: '?' is only allowed for a day")
        return "*"
    shift = -1 if field == "day-of-week" else 0
    items = []
    for item in text.split(","):
        # Quartz's marks, but not the letters of a day or month name (WED, JUL)
        words = [w for w in re.findall(r"[A-Z]+|#", item.upper()) if w not in _NAMES]
        for mark, name in _REFUSED.items():
            if any(mark in word for word in words):
                raise ScheduleError(f"{SCHEDULE_KEY}={expression}: {field} field '{text}': cron has no {name}; "
                                    "run the job from a scheduler that has, or pick days cron can name")
        base, slash, step_text = item.partition("/")
        step = _number(step_text, field + " step", 1, high - low + 1, expression) if slash else None
        if base == "*":
            start, end = low, high
        elif "-" in base:
            first, _, last = base.partition("-")
            start, end = (_number(first, field, low, high, expression), _number(last, field, low, high, expression))
            if start > end:
                raise ScheduleError(f"{SCHEDULE_KEY}={expression}: {field} field: range '{base}' runs backwards; "
                                    "write it as two ranges")
        else:
            start = _number(base, field, low, high, expression)
            end = high if slash else start  # Quartz's 'a/s': from a to the end, every s
        if step is None:
            items.append("*" if base == "*" else str(start + shift) if start == end else f"{start + shift}-{end + shift}")
        elif start == low and end == high:
            items.append(f"*/{step}")
        else:
            items.append(f"{start + shift}-{end + shift}/{step}")
    return ",".join(items)


def quartz_to_cron(expression: str) -> str:
    """The 5-field cron expression that fires when the Quartz ``expression`` does; :class:`ScheduleError` naming
    the field when cron cannot say it (seconds other than 0, ``L``, ``W``, ``#``, a year)."""
    fields = expression.split()
    if len(fields) not in (6, 7):
        raise ScheduleError(f"{SCHEDULE_KEY}={expression}: a Quartz cron expression has 6 or 7 fields (seconds "
                            f"minutes hours day-of-month month day-of-week [year]), this one {len(fields)}")
    seconds, rest, year = fields[0], fields[1:6], fields[6] if len(fields) == 7 else "*"
    if not (seconds.isdigit() and int(seconds) == 0):
        raise ScheduleError(f"{SCHEDULE_KEY}={expression}: seconds field '{seconds}': cron starts jobs at second 0 "
                            "of a minute only; set it to 0")
    if year != "*":
        raise ScheduleError(f"{SCHEDULE_KEY}={expression}: year field '{year}': cron has no year; leave it out "
                            "or set it to *")
    day_of_month, day_of_week = rest[2], rest[4]
    if day_of_month == "?" and day_of_week == "?":
        raise ScheduleError(f"{SCHEDULE_KEY}={expression}: '?' may stand in the day-of-month or the day-of-week "
                            "field, not both")
    if day_of_month != "?" and day_of_week != "?":
        raise ScheduleError(f"{SCHEDULE_KEY}={expression}: Quartz needs '?' in the day-of-month or the "
                            "day-of-week field")
    return " ".join(_field(text, name, low, high, expression) for text, (name, low, high) in zip(rest, _FIELDS,
                                                                                                  strict=True))


def _true(props: Mapping[str, str], key: str) -> bool:
    return (props.get(key) or "").strip().lower() == "true"


def scheduling_warnings(props: Mapping[str, str]) -> list[str]:
    """What a job migrated from Gobblin's scheduler should hear: gpy runs it only when something starts it."""
    warnings = []
    schedule = (props.get(SCHEDULE_KEY) or "").strip()
    if schedule:
        try:
            as_cron = f" (cron: {quartz_to_cron(schedule)})"
        except ScheduleError as exc:
            as_cron = f" (cron cannot express it: {str(exc).removeprefix(f'{SCHEDULE_KEY}={schedule}: ')})"
        warnings.append(f"key '{SCHEDULE_KEY}' ({schedule}): gpy does not schedule jobs itself, so nothing runs this "
                        f"job on that schedule; `gpy schedule JOB --crontab` prints its crontab line{as_cron}, "
                        f"`gpy schedule JOB --airflow DIR` writes an Airflow DAG")
    if _true(props, DISABLED_KEY):
        warnings.append(f"key '{DISABLED_KEY}' is true: Gobblin's scheduler would not run this job, but gpy run "
                        "runs it; `gpy schedule` leaves it out")
    if schedule and _true(props, RUN_ONCE_KEY):
        warnings.append(f"key '{RUN_ONCE_KEY}' is true: Gobblin runs this job once and ignores its "
                        f"{SCHEDULE_KEY}; `gpy schedule` leaves it out")
    return warnings
