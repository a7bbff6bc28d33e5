"""The job lock's keys: the refresh follows the timeout unless set, and an explicit refresh must be shorter."""

from __future__ import annotations

import pytest

from gobblin_py.runtime.plan.locks import LockSettings
from tests.support.cli import run_gpy
from tests.support.jobs import Job


@pytest.mark.parametrize(("timeout", "refresh"), [("5", 5 / 3), ("1", 1 / 3), ("90", 30.0), ("300", 30.0),
                                                  ("60", 20.0)])
def test_the_default_refresh_is_a_third_of_the_timeout_at_most_30_s(timeout, refresh):
    settings = LockSettings.load({"state.store.dir": "/tmp/state", "job.lock.timeout.seconds": timeout})
    assert settings.check() == []
    assert settings.refresh_interval == pytest.approx(refresh)


def test_no_lock_keys_keep_the_30_s_refresh_and_300_s_timeout():
    settings = LockSettings.load({"state.store.dir": "/tmp/state"})
    assert (settings.timeout_s, settings.refresh_interval) == (300.0, 30.0)


def test_only_a_short_timeout_is_accepted_by_validate(tmp_path):
    job = Job(tmp_path, extra="job.lock.timeout.seconds=5\n")
    result = run_gpy("validate", str(job.file))
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("refresh", ["5", "8"])
def test_an_explicit_refresh_not_shorter_than_the_timeout_is_refused_naming_both_keys(tmp_path, refresh):
    job = Job(tmp_path, extra=f"job.lock.timeout.seconds=5\njob.lock.refresh.seconds={refresh}\n")
    result = run_gpy("validate", str(job.file))
    assert result.returncode == 2
    assert "key 'job.lock.refresh.seconds'" in result.stdout + result.stderr
    assert "job.lock.timeout.seconds (5 s)" in result.stdout + result.stderr
