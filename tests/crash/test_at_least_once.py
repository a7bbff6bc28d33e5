"""At least once, as documented: with AT_LEAST_ONCE delivery, or a publisher without plan(), a dataset is published
and then its state saved — a run killed between the two publishes the same data again on the next run."""

from __future__ import annotations

import signal

from tests.support.jobs import Job, run_local_process, write_csv

PLUGINS = "tests.runtime.sample_plugins"


def test_at_least_once_delivery_republishes_what_a_crash_left_without_state(tmp_path):
    marker = tmp_path / "died"
    job = Job(tmp_path / "job", extra=(f"gobblin.runtime.delivery.semantics=AT_LEAST_ONCE\n"
                                       f"data.publisher.type={PLUGINS}.DieAfterPublishing\ntest.die.marker={marker}\n"))
    write_csv(job.data / "a.csv", 1)
    killed = run_local_process(job)
    assert killed.returncode == -signal.SIGKILL and marker.exists()
    assert job.published_ids() == list(range(1, 41))  # published ...
    assert not list(job.state.rglob("*.jst"))  # ... and killed before its state was saved
    again = run_local_process(job)
    assert again.returncode == 0, again.stdout + again.stderr
    assert job.published_ids() == sorted(list(range(1, 41)) * 2)  # the same rows again: at least once
    assert "nothing new to pull" in run_local_process(job).stdout


def test_a_publisher_without_plan_publishes_at_least_once_and_says_so(tmp_path):
    job = Job(tmp_path / "job", extra=f"data.publisher.type={PLUGINS}.PublishOnly\n")
    write_csv(job.data / "a.csv", 1)
    first = run_local_process(job)
    assert first.returncode == 0, first.stdout + first.stderr
    [warning] = [line for line in first.stderr.splitlines() if "publisher_not_exactly_once" in line]
    assert "PublishOnly" in warning
    assert job.published_ids() == list(range(1, 41)) and list(job.state.rglob("*.jst"))
    assert not list((job.state / "_commit_sequences").rglob("*.json"))  # nothing logged: no plan to log
    # killed between its publishing and the state: the next run publishes the new file again
    marker = tmp_path / "died"
    job = Job(tmp_path / "job", extra=f"data.publisher.type={PLUGINS}.PublishOnly\ntest.die.marker={marker}\n")
    write_csv(job.data / "b.csv", 101)
    assert run_local_process(job).returncode == -signal.SIGKILL
    assert run_local_process(job).returncode == 0
    assert job.published_ids() == list(range(1, 41)) + sorted(list(range(101, 141)) * 2)
