"""DatePartitionedAvroFileSource: Gobblin's DatePartitionedAvroFileExtractorTest layout, watermarks, lead time."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from zoneinfo import ZoneInfo

import fastavro
import pytest

from gobblin_py.connectors.files.date_partitioned import DatePartitionedAvroFileSource, DatePartitionedDailyAvroSource, add_unit
from gobblin_py.sdk.run_states import SourceState

ZONE = ZoneInfo("America/Los_Angeles")
SCHEMA = {"type": "record", "name": "R", "fields": [{"name": "at", "type": "long"}]}


def write(path: Path, at: dt.datetime) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as out:
        fastavro.writer(out, SCHEMA, [{"at": int(at.timestamp() * 1000)}])


@pytest.fixture
def layout(tmp_path):
    """Gobblin's test: <out>/testsource/minutes/yyyy/MM/dd/HH_mm/test/<file>.avro, one record at a start six hours
    ago (minute 30) and three at +4h1m, +4h2m, +4h3m."""
    start = (dt.datetime.now(ZONE) - dt.timedelta(hours=6)).replace(minute=30, second=0, microsecond=0)
    times = [start] + [start + dt.timedelta(hours=4, minutes=m) for m in (1, 2, 3)]
    for i, at in enumerate(times):
        write(tmp_path / "testsource" / "minutes" / at.strftime("%Y/%m/%d/%H_%M") / "test" / f"f{i}.avro", at)
    return tmp_path, start, times


def units(props: dict) -> list:
    base = {"source.timezone": "America/Los_Angeles", "extract.table.type": "SNAPSHOT_ONLY",
            "date.partitioned.source.partition.pattern": "yyyy/MM/dd/HH_mm"}
    return DatePartitionedAvroFileSource().get_workunits(SourceState({**base, **props}))


def test_one_work_unit_per_file_from_one_step_after_the_min_watermark(layout):
    root, start, times = layout
    found = units({"source.filebased.data.directory": str(root / "testsource"),
                   "date.partitioned.source.partition.prefix": "minutes",
                   "date.partitioned.source.partition.suffix": "test",
                   "date.partitioned.source.min.watermark.value": (start - dt.timedelta(minutes=1)).strftime("%Y/%m/%d/%H_%M")})
    assert len(found) == 4
    assert [u.get_prop_as_int("workunit.source.date.partition") for u in found] == \
        [int(t.timestamp() * 1000) for t in times]  # each work unit's time is its record's
    first = found[0]
    assert first.get_prop("extract.table.name") == "testsource" and first.get_prop("source.entity") == "testsource"
    assert first.get_prop("workunit.low.water.mark") == first.get_prop("workunit.high.water.mark")
    assert first.get_prop("workunit.source.date.partitionName") == "minutes/" + start.strftime("%Y/%m/%d/%H_%M") + "/test"
    # the min watermark's own partition is never read
    assert units({"source.filebased.data.directory": str(root / "testsource"),
                  "date.partitioned.source.partition.prefix": "minutes",
                  "date.partitioned.source.partition.suffix": "test",
                  "date.partitioned.source.min.watermark.value": start.strftime("%Y/%m/%d/%H_%M")}).__len__() == 3


def test_lead_time_leaves_recent_partitions_for_later(layout):
    root, start, _ = layout
    found = units({"source.filebased.data.directory": str(root / "testsource"),
                   "date.partitioned.source.partition.prefix": "minutes",
                   "date.partitioned.source.partition.suffix": "test",
                   "date.partitioned.source.partition.lead_time.size": "3",
                   "date.partitioned.source.partition.lead_time.granularity": "HOUR",
                   "date.partitioned.source.min.watermark.value": (start - dt.timedelta(minutes=1)).strftime("%Y/%m/%d/%H_%M")})
    assert len(found) == 1


def test_without_a_prefix_the_data_directory_may_include_it(layout):
    root, start, _ = layout
    found = units({"source.filebased.data.directory": str(root / "testsource" / "minutes"),
                   "date.partitioned.source.partition.suffix": "test",
                   "date.partitioned.source.min.watermark.value": (start - dt.timedelta(minutes=1)).strftime("%Y/%m/%d/%H_%M")})
    assert len(found) == 4


def test_max_files_takes_whole_partitions_and_many_units_are_packed(tmp_path):
    for day in (1, 2):
        for i in range(3):
            write(tmp_path / "data" / f"2017/03/0{day}" / f"p{i}.avro", dt.datetime(2017, 3, day, tzinfo=ZONE))
    props = {"source.filebased.data.directory": str(tmp_path / "data"), "extract.table.type": "SNAPSHOT_ONLY",
             "date.partitioned.source.min.watermark.value": "2017/02/28", "source.timezone": "America/Los_Angeles",
             "date.partitioned.source.max.files.per.job": "2", "date.partitioned.source.max.workunits.per.job": "2"}
    found = DatePartitionedDailyAvroSource().get_workunits(SourceState(props))
    assert len(found) == 2 and sum(len(u.work_units) for u in found) == 3  # the first day whole, packed in 2


def test_calendar_steps_and_gobblins_fixed_increment():
    moment = dt.datetime(2015, 1, 31, tzinfo=ZONE)
    assert add_unit(moment, "MONTH") == dt.datetime(2015, 2, 28, tzinfo=ZONE)
    assert add_unit(dt.datetime(2015, 3, 8, 1, tzinfo=ZONE), "HOUR").hour == 3  # a duration across the DST gap
    source = DatePartitionedAvroFileSource()
    from gobblin_py.connectors.files.date_partitioned import DatePartitionSettings

    settings = DatePartitionSettings.load({"source.filebased.data.directory": "/x", "extract.table.type": "SNAPSHOT_ONLY",
                                           "date.partitioned.source.partition.pattern": "yyyy/MM",
                                           "date.partitioned.source.min.watermark.value": "2015/01",
                                           "source.timezone": "Europe/Zurich"})
    low = source.low_watermark_ms(settings, [], 0)
    # one "month" is Gobblin's fixed 31 days from the epoch: 2015/01/01 + 31 days = 2015/02/01, so January is skipped
    assert dt.datetime.fromtimestamp(low / 1000, ZoneInfo("Europe/Zurich")).strftime("%Y/%m/%d") == "2015/02/01"


def test_a_min_watermark_that_does_not_fit_the_pattern_is_refused():
    from gobblin_py.connectors.files.date_partitioned import DatePartitionSettings

    problems = DatePartitionSettings.problems({"source.filebased.data.directory": "/x", "extract.table.type": "SNAPSHOT_ONLY",
                                               "date.partitioned.source.partition.pattern": "yyyy/MM/dd"})
    assert [p.key for p in problems] == ["date.partitioned.source.min.watermark.value"]
