"""Gobblin's Quartz ``job.schedule`` as a 5-field cron expression: the corpus's schedules, refusals by name, and
the same firing times for every expression the translation accepts."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gobblin_py.jobconf.schedule import ScheduleError, quartz_to_cron, scheduling_warnings
from tests.support.environment import missing
from tests.support.paths import CORPUS

# the schedules of Gobblin's own job files (the corpus), then Quartz's documented examples cron can express
EXAMPLES = [
    ("0 0/2 * * * ?", "*/2 * * * *"),
    ("0 0 18 ? * Sunday", "0 18 * * 0"),
    ("0 0 12 * * ?", "0 12 * * *"),
    ("0 15 10 ? * *", "15 10 * * *"),
    ("0 15 10 * * ? *", "15 10 * * *"),
    ("0 * 14 * * ?", "* 14 * * *"),
    ("0 0/5 14,18 * * ?", "*/5 14,18 * * *"),
    ("0 0-5 14 * * ?", "0-5 14 * * *"),
    ("0 10,44 14 ? 3 WED", "10,44 14 * 3 3"),
    ("0 15 10 ? * MON-FRI", "15 10 * * 1-5"),
    ("0 15 10 15 * ?", "15 10 15 * *"),
    ("0 0 12 1/5 * ?", "0 12 */5 * *"),
    ("0 11 11 11 11 ?", "11 11 11 11 *"),
    ("0 5/20 * ? JAN-MAR 2-6/2", "5-59/20 * * 1-3 1-5/2"),
    ("0 0 0 ? * 7,1", "0 0 * * 6,0"),
]

REFUSED = [
    ("30 * * * * ?", "seconds field '30'"),
    ("0/10 * * * * ?", "seconds field '0/10'"),
    ("0 15 10 L * ?", "'L' (the last day"),
    ("0 15 10 ? * 6L", "'L' (the last day"),
    ("0 15 10 L-2 * ?", "'L' (the last day"),
    ("0 15 10 15W * ?", "'W' (the weekday nearest"),
    ("0 15 10 LW * ?", "'L'"),
    ("0 15 10 ? * 6#3", "'#' (the nth weekday"),
    ("0 15 10 * * ? 2005", "year field '2005'"),
    ("0 15 10 * * ? 2005-2010", "year field"),
    ("0 15 10 * * MON", "'?' in the day-of-month or the day-of-week"),
    ("0 15 10 ? * ?", "not both"),
    ("<cron schedule>", "6 or 7 fields"),
    ("0 0 25 * * ?", "hour field: 25 is not within 0-23"),
    ("0 0 0 ? * Funday", "not a day name"),
    ("0 0 0 ? * FRI-MON", "runs backwards"),
    ("0 \u00b2 0 * * ?", "minute field: '\u00b2' is not a number"),  # a digit to str.isdigit, not to int()
]


@pytest.mark.parametrize(("quartz", "cron"), EXAMPLES)
def test_quartz_examples_become_cron(quartz, cron):
    assert quartz_to_cron(quartz) == cron


@pytest.mark.parametrize(("quartz", "says"), REFUSED)
def test_what_cron_cannot_say_is_refused_by_name(quartz, says):
    with pytest.raises(ScheduleError) as err:
        quartz_to_cron(quartz)
    assert says in str(err.value) and "job.schedule" in str(err.value)
    assert err.value.exit_code == 2


def test_every_schedule_of_the_corpus_is_translated_or_refused():
    if not CORPUS.is_dir():
        missing(f"the Gobblin job corpus is not beside the repository ({CORPUS})")
    seen = set()
    for path in CORPUS.rglob("*.pull"):
        for line in Path(path).read_text(errors="replace").splitlines():
            if line.startswith("job.schedule="):
                seen.add(line.split("=", 1)[1].strip())
    assert seen == {"0 0/2 * * * ?", "0 0 18 ? * Sunday", "<cron schedule>"}  # (the last: a fill-in template)
    assert {quartz_to_cron(q) for q in seen - {"<cron schedule>"}} == {"*/2 * * * *", "0 18 * * 0"}


# ---- the same firing times: Quartz's meaning and cron's, each read by its own small evaluator -----------------

DAYS = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"]
MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]
BOUNDS = {"minute": (0, 59), "hour": (0, 23), "dom": (1, 31), "month": (1, 12), "dow": (1, 7)}


def quartz_values(text: str, low: int, high: int, names: list[str] | None) -> set[int]:
    """The values a Quartz field selects (Quartz's numbering: days of the week 1-7 from Sunday)."""
    if text in ("*", "?"):
        return set(range(low, high + 1))

    def number(token: str) -> int:
        return names.index(token.upper()[:3]) + low if names and token.isalpha() else int(token)

    out: set[int] = set()
    for item in text.split(","):
        base, _, step = item.partition("/")
        if base == "*":
            first, last = low, high
        elif "-" in base:
            first, last = (number(p) for p in base.split("-"))
        else:
            first = number(base)
            last = high if step else first
        out.update(range(first, last + 1, int(step) if step else 1))
    return out


def cron_values(text: str, low: int, high: int) -> set[int]:
    """The values a cron field selects (cron's numbering: days of the week 0-6 from Sunday)."""
    out: set[int] = set()
    for item in text.split(","):
        match = re.fullmatch(r"(\*|(\d+)(?:-(\d+))?)(?:/(\d+))?", item)
        assert match, item
        star, first, last, step = match.groups()
        if star == "*":
            start, end = low, high
        else:
            start, end = int(first), int(last) if last else int(first)
        out.update(range(start, end + 1, int(step) if step else 1))
    return out


def fires_quartz(fields: list[str]):
    """When the Quartz fields (minute … day-of-week) fire: a test of a moment."""
    minute, hour, dom, month, dow = (quartz_values(text, *BOUNDS[name], DAYS if name == "dow" else
                                                   MONTHS if name == "month" else None)
                                     for text, name in zip(fields, BOUNDS, strict=True))
    return lambda at: (at.minute in minute and at.hour in hour and at.day in dom and at.month in month
                       and (at.isoweekday() % 7) + 1 in dow)  # Quartz: Sunday 1 … Saturday 7


def fires_cron(expression: str):
    """When the cron expression fires: a test of a moment."""
    texts = expression.split()
    minute, hour, dom, month, dow = (cron_values(text, low, high) for text, (low, high) in
                                     zip(texts, [(0, 59), (0, 23), (1, 31), (1, 12), (0, 6)], strict=True))
    either = not (texts[2].startswith("*") or texts[4].startswith("*"))  # cron: both restricted → either day

    def fires(at: dt.datetime) -> bool:
        days = (at.day in dom, at.isoweekday() % 7 in dow)
        return at.minute in minute and at.hour in hour and at.month in month and (any(days) if either else all(days))
    return fires


def field(name: str) -> st.SearchStrategy[str]:
    low, high = BOUNDS[name]
    names = DAYS if name == "dow" else MONTHS if name == "month" else None
    value = st.integers(low, high).map(str)
    if names:
        value = value | st.integers(low, high).map(lambda v: names[v - low])
    ranged = st.tuples(st.integers(low, high), st.integers(low, high)).map(sorted).map(lambda p: f"{p[0]}-{p[1]}")
    stepped = st.tuples(st.sampled_from(["*"]) | st.integers(low, high).map(str) | ranged,
                        st.integers(1, high - low + 1)).map(lambda p: f"{p[0]}/{p[1]}")
    item = value | ranged | stepped
    return st.just("*") | st.lists(item, min_size=1, max_size=3).map(",".join)


@st.composite
def quartz_expressions(draw) -> str:
    dom, dow = draw(field("dom")), draw(field("dow"))
    dom, dow = (dom, "?") if draw(st.booleans()) else ("?", dow)
    year = draw(st.sampled_from(["", " *"]))
    return f"0 {draw(field('minute'))} {draw(field('hour'))} {dom} {draw(field('month'))} {dow}{year}"


MOMENTS = [dt.datetime(2026, 1, 1) + dt.timedelta(minutes=37 * i) for i in range(0, 14000, 7)]  # ~9 months


@given(quartz_expressions())
def test_a_translated_schedule_fires_exactly_when_quartz_would(quartz):
    cron = quartz_to_cron(quartz)
    assert len(cron.split()) == 5
    fields = quartz.split()[1:6]
    for name, q_text, c_text, shift in zip(BOUNDS, fields, cron.split(), (0, 0, 0, 0, -1), strict=True):
        low, high = BOUNDS[name]
        names = DAYS if name == "dow" else MONTHS if name == "month" else None
        assert {v + shift for v in quartz_values(q_text, low, high, names)} == \
            cron_values(c_text, low + shift, high + shift), (name, quartz, cron)
    quartz_fires, cron_fires = fires_quartz(fields), fires_cron(cron)
    assert [quartz_fires(m) for m in MOMENTS] == [cron_fires(m) for m in MOMENTS], (quartz, cron)


@given(quartz_expressions(), st.integers(1, 59))
def test_any_second_but_0_is_refused(quartz, second):
    with pytest.raises(ScheduleError, match="seconds field"):
        quartz_to_cron(f"{second}{quartz[1:]}")


def test_warnings_name_the_keys_and_point_at_gpy_schedule():
    [warning] = scheduling_warnings({"job.schedule": "0 0/2 * * * ?"})
    assert "job.schedule" in warning and "gpy does not schedule" in warning and "gpy schedule" in warning
    assert "(cron: */2 * * * *)" in warning
    [refused] = scheduling_warnings({"job.schedule": "0 0 0 L * ?"})
    assert "(cron cannot express it: day-of-month field 'L'" in refused
    assert scheduling_warnings({"job.name": "x"}) == []
    assert any("job.disabled" in w for w in scheduling_warnings({"job.disabled": "true"}))
    assert any("job.runonce" in w for w in scheduling_warnings({"job.schedule": "0 0 * * * ?", "job.runonce": "true"}))
