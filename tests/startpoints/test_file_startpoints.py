"""Startpoints, completeness and replay on the file source, end to end through the CLI.

Each file holds rows with an event time (column ``at``); files' modification times grow with their number.
"""

from __future__ import annotations

import json
import os

import pytest

from tests.support.cli import run_gpy, run_gpy_here
from tests.support.file_events import FIRST_RUN, EventJob

DAY_MS = 86_400_000
BASE_MS = 1_704_067_200_000  # 2024-01-01T00:00:00Z


def day(k: int, hour: int = 0) -> int:
    return BASE_MS + k * DAY_MS + hour * 3_600_000


@pytest.fixture
def job(tmp_path) -> EventJob:
    job = EventJob(tmp_path)
    job.add(3)
    job.run()
    assert job.ids() == FIRST_RUN
    return job


def test_oldest_reads_everything_again_and_is_consumed(job):
    job.startpoint("--oldest")
    job.run()
    assert job.ids() == sorted([k * 100 + i for k in range(3) for i in range(10)] * 2)
    assert job.pending_startpoints() == {}
    job.run()  # consumed: the next run is back to normal
    assert job.ids() == sorted(FIRST_RUN * 2)


def test_upcoming_skips_what_exists_now(job):
    job.add(2)  # files 3 and 4 are there now
    job.startpoint("--upcoming")
    done = job.run()
    assert "records extracted 0" in done.stdout
    assert job.ids() == [k * 100 + i for k in range(3) for i in range(10)]
    assert job.pending_startpoints() == {}
    job.add(1)  # file 5 comes after
    job.run()
    assert job.ids()[-10:] == list(range(500, 510)) and 300 not in job.ids()


def test_specific_starts_at_a_modification_time(job):
    job.startpoint("--value", str((1_700_000_000 + 100) * 1000))  # file 1's modification time
    job.run()
    assert job.ids() == sorted([k * 100 + i for k in range(3) for i in range(10)] + [100 + i for i in range(10)]
                               + [200 + i for i in range(10)])


def test_timestamp_replays_from_an_event_time_and_filters_older_records(job):
    job.startpoint("--timestamp", "2024-01-02T05:00:00Z")  # day 1, hour 5: in file 1
    job.run()
    again = [1 * 100 + i for i in range(5, 10)] + [200 + i for i in range(10)]  # older rows of file 1 filtered out
    assert job.ids() == sorted([k * 100 + i for k in range(3) for i in range(10)] + again)


def test_timestamp_replay_filters_every_work_unit_it_replans(tmp_path):
    # files copied together share a modification time, so a replay from day 2 re-plans all three files, each as
    # its own work unit: the older rows of every one of them are filtered, not only those of the first unit
    job = EventJob(tmp_path)
    job.add(3)
    for path in job.data.iterdir():
        os.utime(path, (1_700_000_000, 1_700_000_000))
    job.run()
    job.startpoint("--timestamp", "2024-01-03T05:00:00Z")  # day 2, hour 5: in file 2
    done = job.run()
    assert "records extracted 5 " in done.stdout.replace("written", " written"), done.stdout
    assert job.ids() == sorted([k * 100 + i for k in range(3) for i in range(10)] + [200 + i for i in range(5, 10)])


def test_failed_and_killed_runs_keep_the_startpoint_and_a_commit_consumes_it(job, tmp_path):
    job.startpoint("--oldest")
    [point_id] = [p["id"] for p in job.pending_startpoints()[""].values()]
    # a run killed before its commit is logged keeps the startpoint, and publishes nothing
    killed = run_gpy("run", str(job.file), "--engine", "local", env={"GPY_TEST_CRASH_AT_BOUNDARY": "1"})
    assert killed.returncode == -9
    assert [p["id"] for p in job.pending_startpoints()[""].values()] == [point_id]
    assert job.ids() == FIRST_RUN
    # a run killed after its commit is logged: the next run finishes that commit, which consumes the startpoint
    killed = run_gpy("run", str(job.file), "--engine", "local", env={"GPY_TEST_CRASH_AT_BOUNDARY": "2"})
    assert killed.returncode == -9
    assert [p["id"] for p in job.pending_startpoints()[""].values()] == [point_id]
    job.run()
    assert job.pending_startpoints() == {}
    assert job.ids() == sorted(FIRST_RUN * 2)  # the replay published once, whatever the kills


def test_a_failing_run_keeps_the_startpoint(tmp_path):
    job = EventJob(tmp_path)
    job.add(2)
    job.run()
    job.startpoint("--oldest")
    bad = job.file.read_text().replace("converter.cast.fields=at:timestamp[ms, UTC]", "converter.cast.fields=id:int8,at:timestamp[ms, UTC]")
    job.file.write_text(bad.replace("task.maxretries=0", "task.maxretries=0\nconverter.cast.safe=true"))
    (job.data / "f001.csv").write_text("id,at\n1000,2024-01-02T00:00:00Z\n")  # 1000 does not fit an int8
    os.utime(job.data / "f001.csv", (1_700_000_100, 1_700_000_100))
    job.run(expect=65)  # bad data
    assert len(job.pending_startpoints()[""]) == 1  # kept for the next run
    job.file.write_text(bad.replace("id:int8,", ""))
    job.run()
    assert job.pending_startpoints() == {}


def test_dry_run_prints_the_plan_with_startpoints_and_changes_nothing(job):
    job.add(1)
    job.startpoint("--timestamp", "2024-01-02T00:00:00Z")
    before = sorted((str(p), p.stat().st_mtime_ns) for p in job.root.rglob("*") if p.is_file())
    shown = job.run("--dry-run")
    assert '"": start at 2024-01-02T00:00:00Z (TIMESTAMP startpoint ' in shown.stdout
    assert "plan 3 work unit(s)" in shown.stdout and "1 file(s)" in shown.stdout
    assert sorted((str(p), p.stat().st_mtime_ns) for p in job.root.rglob("*") if p.is_file()) == before


def test_completeness_watermark_and_the_sensor_exit_codes(job):
    shown = run_gpy_here("state", "watermark", str(job.file), "--dataset", "", "--json")
    assert shown.returncode == 0
    assert json.loads(shown.stdout)["watermark_ms"] == day(2, 9)  # file 2's latest event
    assert run_gpy_here("state", "watermark", str(job.file), "--dataset", "", "--at", "2024-01-03T09:00:00Z").returncode == 0
    late = run_gpy_here("state", "watermark", str(job.file), "--dataset", "", "--at", "2024-01-03T09:00:01Z")
    assert late.returncode == 1 and "not yet" in late.stdout
    text = run_gpy_here("state", "show", str(job.file))
    assert "complete  up to 2024-01-03T09:00:00.000Z" in text.stdout


def test_a_failed_run_does_not_move_the_completeness_watermark(tmp_path):
    job = EventJob(tmp_path, job__commit__policy="successful",
                   converter__classes="TypeCastConverter,tests.runtime.sample_plugins.FailOnMarker")
    job.add(2)
    job.run()
    before = json.loads(run_gpy_here("state", "watermark", str(job.file), "--dataset", "", "--json").stdout)["watermark_ms"]
    job.add(1)
    (job.data / "f002.csv").write_text("id,at,note\n200,2024-01-03T00:00:00Z,FAIL\n")  # this file's task fails
    os.utime(job.data / "f002.csv", (1_700_000_200, 1_700_000_200))
    job.add(1)  # file 3 commits, with later events
    job.run(expect=3)
    after = json.loads(run_gpy_here("state", "watermark", str(job.file), "--dataset", "", "--json").stdout)["watermark_ms"]
    assert after == before  # a failed work unit holds the clock


def test_a_lossy_converter_is_caught_by_reconciliation(tmp_path):
    job = EventJob(tmp_path, converter__classes="TypeCastConverter,tests.runtime.sample_plugins.DropEveryOther")
    job.add(1)
    done = job.run(expect=1)
    assert "DropEveryOther received 10 rows and gave 5" in done.stdout and "5 rows were lost" in done.stdout
    assert job.ids() == []  # nothing committed


def test_a_deleted_task_output_file_is_caught_before_publishing(tmp_path):
    job = EventJob(tmp_path, converter__classes="TypeCastConverter,tests.runtime.sample_plugins.DeleteFirstTaskOutput",
                   test__output__dir=str(tmp_path / "work"))
    job.add(2)
    done = job.run(expect=1)
    assert "wrote 10 records to this file, and it is gone" in done.stdout
    assert job.ids() == []  # nothing of the dataset is published
    state = run_gpy_here("state", "show", str(job.file), "--json")
    assert all(t["working_state"] != "COMMITTED" for d in json.loads(state.stdout)["datasets"] for t in d["tasks"])


def test_reset_export_and_import(job, tmp_path):
    exported = tmp_path / "gobblin-store"
    assert run_gpy_here("state", "export", str(job.file), str(exported)).returncode == 0
    files = sorted(p.name for p in (exported / "Events").iterdir())
    assert "current.jst" in files and any(n.startswith("job_Events_") for n in files)
    # the exported store is a plain Gobblin store: every file decodes as a Hadoop SequenceFile of dataset states
    from gobblin_py.store import FsDatasetStateStore

    assert FsDatasetStateStore(str(exported)).get_latest_dataset_state("Events", "") is not None
    dry = run_gpy_here("state", "reset", str(job.file), "--dataset", "", "--dry-run")
    assert dry.returncode == 0 and "replaced by an empty one" in dry.stdout
    assert run_gpy_here("state", "reset", str(job.file), "--dataset", "").returncode == 2  # no terminal: --yes needed
    assert run_gpy_here("state", "reset", str(job.file), "--dataset", "", "--yes").returncode == 0
    job.run()
    assert job.ids() == sorted(FIRST_RUN * 2)  # reset: the dataset started afresh (published data was not touched)
    refused = run_gpy_here("state", "import", str(job.file), str(exported))
    assert refused.returncode == 2 and "--replace" in refused.stderr
    assert run_gpy_here("state", "import", str(job.file), str(exported), "--replace").returncode == 0
    job.add(1)
    job.run()  # continues from the imported watermarks: only the new file
    assert job.ids() == sorted(FIRST_RUN * 2 + list(range(300, 310)))
