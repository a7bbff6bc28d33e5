"""Completeness before compaction (``compaction.completeness.verification.*``): an hour is compacted only once the
ingestion job's completeness clock (``gpy state watermark --at``) is past its end; an incomplete hour is skipped
and named, or compacted all the same when the key says so; a clock that cannot answer stops the run, exit 2."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from gobblin_py.connectors.compaction.finder import window_end_ms
from gobblin_py.connectors.compaction.settings import CompactionSettings
from tests.compaction.lake import Lake, event, ids
from tests.support.cli import run_gpy_here

HOUR_10, HOUR_11 = "hourly/2017/04/03/10", "hourly/2017/04/03/11"


def _lake(tmp_path: Path) -> Lake:
    """A lake whose ingestion job keeps a completeness clock (its records' event time is ``at``)."""
    lake = Lake(tmp_path, "PARQUET")
    lake.ingest_job.write_text(lake.ingest_job.read_text() + "source.event.time.column=at\n")
    return lake


def _job(lake: Lake, **extra: str) -> Path:
    verify = "compaction__completeness__verification__"
    keys = {"compaction__timezone": "UTC", f"{verify}enabled": "true", f"{verify}job__name": "Ingest",
            f"{verify}state__store__dir": str(lake.root / "ingest-state"), f"{verify}dataset__urn": ""}
    return lake.gobblin_job("minutely_to_hourly.pull", **{**keys, **extra})


def _events(out: str, name: str) -> list[dict]:
    return [e for e in (json.loads(line) for line in out.splitlines() if line.startswith("{")) if e["event"] == name]


def test_an_hour_the_ingestion_clock_has_not_passed_waits_for_a_later_run(tmp_path):
    lake = _lake(tmp_path)
    first = [event(i, i) for i in range(90)]  # 10:00 … 11:29: the clock stops at 11:29
    lake.ingest(first)
    out = lake.run(_job(lake))
    assert f"{HOUR_10}: COMMITTED" in out and f"{HOUR_11}: COMMITTED" not in out
    [skipped] = _events(out, "compaction_incomplete_skipped")
    assert skipped["dataset"].endswith(HOUR_11) and skipped["time"] == "2017/04/03/11"
    assert skipped["clock"] == "2017-04-03T11:29:00.000Z" and skipped["complete_up_to_needed"] == "2017-04-03T12:00:00.000Z"
    [named] = _events(out, "compaction_incomplete_datasets_skipped")
    assert named["count"] == 1 and named["datasets"][0].endswith(HOUR_11)
    assert not (lake.dataset / HOUR_11).exists()

    lake.ingest([event(200 + i, 90 + i) for i in range(40)])  # 11:30 … 12:09: hour 11 is complete now, 12 not
    out = lake.run(_job(lake))
    assert f"{HOUR_11}: COMMITTED" in out
    assert [e["time"] for e in _events(out, "compaction_incomplete_skipped")] == ["2017/04/03/12"]
    assert ids(lake.records("hourly")) == sorted((e["event_id"], 0) for e in first if e["at"].hour == 10) + \
        sorted((e, 0) for e in [*range(60, 90), *range(200, 230)])
    assert not (lake.dataset / "hourly/2017/04/03/12").exists()


def test_nothing_complete_says_so_in_the_summary(tmp_path):
    lake = _lake(tmp_path)
    lake.ingest([event(i, 70 + i) for i in range(10)])  # 11:10 … 11:19
    out = lake.run(_job(lake))
    assert "1 datasets found: 1 not complete yet, skipped (" in out and f"{HOUR_11}); none other" in out


def test_the_publish_anyway_key_compacts_an_incomplete_hour_and_says_so(tmp_path):
    lake = _lake(tmp_path)
    lake.ingest([event(i, i) for i in range(90)])
    out = lake.run(_job(lake, compaction__completeness__verification__publish__data__if__cannot__verify="true"))
    assert f"{HOUR_10}: COMMITTED" in out and f"{HOUR_11}: COMMITTED" in out
    [anyway] = _events(out, "compaction_incomplete_compacted_anyway")
    assert anyway["dataset"].endswith(HOUR_11) and anyway["clock"] == "2017-04-03T11:29:00.000Z"
    assert not _events(out, "compaction_incomplete_skipped")
    assert len(ids(lake.records("hourly"))) == 90


@pytest.mark.parametrize("broken", ["no such job", "no such folder", "corrupt state"])
def test_a_clock_that_cannot_answer_stops_the_run_before_any_work(tmp_path, broken):
    lake = _lake(tmp_path)
    lake.ingest([event(i, i) for i in range(90)])
    extra = {}
    if broken == "no such job":
        extra["compaction__completeness__verification__job__name"] = "Ingestion"
    elif broken == "no such folder":
        extra["compaction__completeness__verification__state__store__dir"] = str(tmp_path / "elsewhere")
    else:
        for current in (tmp_path / "ingest-state" / "Ingest").glob("*current.jst"):
            current.write_bytes(b"SEQ\x06garbage")
    job = _job(lake, **extra)
    for command in (("validate", str(job)), ("run", str(job), "--engine", "local")):
        result = run_gpy_here(*command)
        shown = result.stdout + result.stderr
        assert result.returncode == 2, shown
        assert "compaction.completeness.verification.state.store.dir" in shown and "cannot answer" in shown, shown
    assert not (lake.dataset / "hourly").exists()


@pytest.mark.parametrize(("extra", "key"), [
    ({"compaction.completeness.verification.job.name": ""}, "compaction.completeness.verification.job.name"),
    ({"compaction.completeness.verification.state.store.dir": ""}, "compaction.completeness.verification.state.store.dir"),
    ({"compaction.completeness.verification.dataset.urn": "{topic}"}, "compaction.completeness.verification.dataset.urn"),
    ({"gobblin.dataset.pattern": "", "compaction.datasets.finder": "org.apache.gobblin.compaction.dataset.SimpleDatasetsFinder"},
     "compaction.completeness.verification.enabled"),
    ({"compaction.completeness.verification.whitelist": "a("}, "compaction.completeness.verification.whitelist"),
])
def test_verification_keys_that_cannot_work_are_refused_naming_the_key(extra, key):
    props = {"compaction.input.dir": "/in", "compaction.dest.dir": "/out", "gobblin.dataset.pattern": "/in/*/hourly/*",
             "compaction.completeness.verification.enabled": "true",
             "compaction.completeness.verification.job.name": "Ingest",
             "compaction.completeness.verification.state.store.dir": "/state", **extra}
    assert [p.key for p in CompactionSettings.problems(props)] == [key]


def test_a_time_folders_window_is_one_unit_of_its_pattern_on_the_zones_calendar():
    la = ZoneInfo("America/Los_Angeles")

    def ms(*parts: int) -> int:
        return int(datetime(*parts, tzinfo=la).timestamp() * 1000)

    assert window_end_ms(ms(2024, 3, 10, 1), "YYYY/MM/dd/HH", la) - ms(2024, 3, 10, 1) == 3_600_000
    assert window_end_ms(ms(2024, 3, 10), "YYYY/MM/dd", la) == ms(2024, 3, 11)  # a 23-hour day
    assert window_end_ms(ms(2024, 3, 10), "YYYY/MM/dd", la) - ms(2024, 3, 10) == 23 * 3_600_000
    assert window_end_ms(ms(2024, 12, 1), "YYYY/MM", la) == ms(2025, 1, 1)
    assert window_end_ms(ms(2024, 5, 1, 13, 5), "YYYY/MM/dd/HH/mm", la) == ms(2024, 5, 1, 13, 6)


def test_only_folders_never_compacted_that_the_lists_let_through_are_verified(capsys):
    from gobblin_py.connectors.compaction.completeness import CompletenessClock, CompletenessGate
    from gobblin_py.connectors.compaction.finder import Dataset
    from gobblin_py.connectors.compaction.plan import COMPACT, Action

    settings = CompactionSettings.load({
        "compaction.input.dir": "/in", "compaction.dest.dir": "/out", "gobblin.dataset.pattern": "/in/*/*/hourly/*",
        "compaction.completeness.verification.enabled": "true", "compaction.completeness.verification.job.name": "K",
        "compaction.completeness.verification.state.store.dir": "/s",
        "compaction.completeness.verification.dataset.urn": "{table}",
        "compaction.completeness.verification.blacklist": "ns/Audit.*"})
    gate = CompletenessGate(settings, CompletenessClock(settings, {"PageView": 5_000, "Click": None}))

    def action(name: str, first: bool = True) -> Action:
        folder = Dataset(name, "t", f"/in/{name}", None, f"/out/{name}", f"/out/{name}_late", 1_000, 4_600)
        return Action(folder, COMPACT, [], 0, first=first)

    assert gate.admits(action("ns/PageView"))  # the clock (5000) is past the hour's end (4600)
    assert not gate.admits(action("ns/Click"))  # no event time committed yet
    assert not gate.admits(action("ns/Signup"))  # no state at all for the topic: not complete either
    assert gate.admits(action("ns/Click", first=False))  # late data of a compacted hour: not verified (Gobblin)
    assert gate.admits(action("ns/AuditLog"))  # blacklisted: not verified
    assert gate.skipped == ["/out/ns/Click", "/out/ns/Signup"]
    logged = capsys.readouterr().err
    assert "compaction_incomplete_skipped" in logged and "the ingestion job has no state for this dataset" in logged


def test_the_hour_the_clocks_repeat_ends_after_both_of_its_hours():
    """On the last day of summer time 01:00-02:00 happens twice in America/Los_Angeles (Gobblin's default zone) and
    the ingestion's writer puts both hours' records in the folder ``…/01``: that hour is not complete until the
    second one ends (it was taken as complete an hour early, its second hour's records then late data)."""
    la, utc = ZoneInfo("America/Los_Angeles"), ZoneInfo("UTC")

    def at(*parts: int) -> int:
        return int(datetime(*parts, tzinfo=utc).timestamp() * 1000)

    hour_1 = int(datetime(2024, 11, 3, 1, tzinfo=la).timestamp() * 1000)  # 01:00 PDT, as the finder parses it
    assert hour_1 == at(2024, 11, 3, 8)
    assert window_end_ms(hour_1, "YYYY/MM/dd/HH", la) == at(2024, 11, 3, 10)  # 02:00 PST
    assert window_end_ms(at(2024, 11, 3, 7), "YYYY/MM/dd/HH", la) == at(2024, 11, 3, 8)  # hour 00 ends at 01:00 PDT
    assert window_end_ms(hour_1 + 30 * 60_000, "YYYY/MM/dd/HH/mm", la) == at(2024, 11, 3, 9, 31)  # 01:30 twice
    assert window_end_ms(at(2024, 3, 10, 9, 59), "YYYY/MM/dd/HH/mm", la) == at(2024, 3, 10, 10)  # 01:59 PST
    assert window_end_ms(at(2024, 3, 10, 9), "YYYY/MM/dd/HH", la) == at(2024, 3, 10, 10)  # 01:00 PST, then 03:00
    assert window_end_ms(at(2024, 11, 3, 7), "YYYY/MM/dd", la) == at(2024, 11, 4, 8)  # a 25-hour day
