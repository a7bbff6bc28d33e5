"""A TIMESTAMP startpoint on the file source replays files pulled before; it never skips a file not pulled yet, nor
drops a record of one, and a time after every file has nothing to replay (``set`` refuses it unless forced)."""

from __future__ import annotations

import os

import pytest

from tests.support.cli import run_gpy_here
from tests.support.file_events import FIRST_RUN, EventJob

MTIME = 1_700_000_000  # file k is modified at MTIME + k * 100 s: 2023-11-14T22:13:20Z + k * 100 s


def rows(k: int, first: int = 0) -> list[int]:
    return [k * 100 + i for i in range(first, 10)]


def late_file(job: EventJob, k: int) -> None:
    """File k with records whose event times are on day 0, before those of every file pulled so far."""
    path = job.data / f"f{k:03d}.csv"
    path.write_text("id,at\n" + "".join(f"{k * 100 + i},2024-01-01T{i:02d}:30:00Z\n" for i in range(10)))
    os.utime(path, (MTIME + k * 100, MTIME + k * 100))
    job.files = k + 1


def test_without_event_times_a_replay_follows_the_files_modification_times(tmp_path):
    job = EventJob(tmp_path, source__event__time__column=None)
    job.add(3)
    job.run()
    # after every file's modification time: nothing to replay; refused unless forced, and then no file again
    refused = run_gpy_here("state", "startpoint", "set", str(job.file), "--dataset", "", "--timestamp",
                           "2023-11-20T00:00:00Z")
    assert refused.returncode == 2, refused.stdout
    assert "after the latest data of dataset '' (2023-11-14T22:16:40Z, its newest record's time)" in refused.stderr
    job.startpoint("--timestamp", "2023-11-20T00:00:00Z", "--force")
    ran = job.run()
    assert '"startpoint_nothing_to_replay"' in ran.stderr and "replay_not_filtered" not in ran.stderr
    assert job.ids() == FIRST_RUN and job.pending_startpoints() == {}
    # from file 1's modification time: files 1 and 2 again, whole; file 3, never pulled, modified before it, too
    job.add(1)
    os.utime(job.data / "f003.csv", (MTIME + 50, MTIME + 50))
    job.startpoint("--timestamp", "2023-11-14T22:15:00Z")  # MTIME + 100 s
    job.run()
    assert job.ids() == sorted(FIRST_RUN + rows(1) + rows(2) + rows(3))


@pytest.mark.parametrize("units", [None, "1"], ids=["a-unit-a-file", "one-unit"])
def test_a_replay_by_event_time_pulls_a_file_not_pulled_yet_whole(tmp_path, units):
    # one unit: the files pulled again and the file not pulled yet are read by one task, which filters only the former
    job = EventJob(tmp_path, source__max__number__of__partitions=units)
    job.add(3)
    job.run()
    late_file(job, 3)  # not pulled yet: every record before the time
    job.startpoint("--timestamp", "2024-01-02T05:00:00Z")  # day 1, hour 5: in file 1
    job.run()
    assert job.ids() == sorted(FIRST_RUN + rows(1, 5) + rows(2) + rows(3))
    # a time after every record committed: nothing to replay, and the late file that arrives is pulled whole
    late_file(job, 4)
    job.startpoint("--timestamp", "2024-02-01T00:00:00Z")
    ran = job.run()
    assert '"startpoint_nothing_to_replay"' in ran.stderr
    assert job.ids() == sorted(FIRST_RUN + rows(1, 5) + rows(2) + rows(3) + rows(4))
