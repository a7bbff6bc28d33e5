"""A compaction job file is checked before any work: ``gpy validate`` accepts Gobblin's compaction jobs, and a bad
value stops ``gpy validate`` and ``gpy run`` with exit code 2, naming the key, before anything is read or written."""

from __future__ import annotations

import json

import pytest

from tests.compaction.lake import GOBBLIN_TEST_JOBS, Lake, event
from tests.support.cli import run_gpy_here


def test_gobblins_compaction_jobs_validate_with_no_writer_publisher_or_folder_keys():
    result = run_gpy_here("validate", str(GOBBLIN_TEST_JOBS))
    assert result.returncode == 0, result.stdout
    assert "5 job files, 5 valid" in result.stdout
    explained = run_gpy_here("validate", "--explain", "compaction.timebased.max.time.ago")
    assert "CompactionSource" in explained.stdout and "3d" in explained.stdout


@pytest.mark.parametrize(("key", "value", "message"), [
    ("compaction.timebased.max.time.ago", "3days", "is not a period"),
    ("compaction.job.dedup.key", "PRIMARY", "is not ALL, KEY or CUSTOM"),
    ("compaction.job.dedup.key", "CUSTOM", "CUSTOM needs compaction.job.avro.key.schema.loc"),
    ("compaction.timezone", "Mars/Olympus", "is not a time zone"),
    ("compaction.whitelist", "Identity/(", "is not a regex"),
    ("compaction.datasets.finder", "org.apache.gobblin.compaction.dataset.NoSuchFinder", "NoSuchFinder"),
    ("compaction.datasets.finder", "CompactionSource", "is not one of TimeBasedSubDirDatasetsFinder"),
    ("compaction.folder.pattern", "YYYY/mm/dd", "'mm' is minutes"),
    ("compaction.should.deduplicate", "yes", "compaction.should.deduplicate"),
    ("recompaction.write.to.new.folder", "true", "not built yet"),
    ("compaction.local.partition.bytes", "1k", "compaction.local.partition.bytes"),
])
def test_a_bad_value_is_refused_up_front_naming_its_key(tmp_path, key, value, message):
    lake = Lake(tmp_path)
    lake.ingest([event(1, 0)])
    job = lake.gobblin_job("minutely_to_hourly.pull", **{key.replace(".", "__"): value})
    checked = run_gpy_here("validate", str(job))
    assert checked.returncode == 2 and key in checked.stdout and message in checked.stdout, checked.stdout
    ran = run_gpy_here("run", str(job), "--engine", "local")
    assert ran.returncode == 2 and key in ran.stderr, ran.stderr
    assert not (lake.dataset / "hourly").exists()


def test_keys_the_job_sets_win_over_those_a_compaction_implies(tmp_path):
    lake = Lake(tmp_path)
    lake.ingest([event(1, 0)])
    job = lake.gobblin_job("minutely_to_hourly.pull", state__store__dir=str(tmp_path / "my-state"))
    shown = run_gpy_here("validate", "--json", str(job))
    props = json.loads(shown.stdout)[0]["properties"]
    assert props["state.store.dir"] == str(tmp_path / "my-state")
    assert props["task.data.root.dir"] == f"{tmp_path}/tmp/MinutelyToHourly"  # compaction.tmp.dest.dir
    assert props["data.publisher.type"].endswith("CompactionPublisher")
    lake.run(job)
    assert (tmp_path / "my-state" / "MinutelyToHourly").is_dir()
    assert not (tmp_path / "tmp" / "MinutelyToHourly" / "_state_store").exists()


def test_a_min_time_ago_longer_than_the_max_is_refused_naming_it():
    """Folders between max.time.ago and min.time.ago ago are compacted: the other way round, none ever is."""
    from gobblin_py.connectors.compaction.settings import CompactionSettings
    from gobblin_py.sdk.settings import SettingsError

    keys = {"source.class": "org.apache.gobblin.compaction.source.CompactionSource",
            "compaction.input.dir": "/data/in", "compaction.dest.dir": "/data/out",
            "compaction.timebased.max.time.ago": "12h", "compaction.timebased.min.time.ago": "1d"}
    with pytest.raises(SettingsError) as refused:
        CompactionSettings.load(keys)
    [problem] = refused.value.problems
    assert problem.key == "compaction.timebased.min.time.ago" and "no time folder is ever compacted" in str(problem)
    CompactionSettings.load({**keys, "compaction.timebased.max.time.ago": "1d"})  # equal: accepted
