"""State-store retention (``gpy state clean``): run files older than the lookback go, the state each dataset's
next run starts from never does, and published data is never touched (kills while cleaning:
tests/crash/test_retention_kills.py)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from gobblin_py.sdk.errors import UsageError
from gobblin_py.store import FsDatasetStateStore
from gobblin_py.store.retention import Lookback, plan_state_clean, select_before
from tests.support.cli import run_gpy_here
from tests.support.retention import DAY, add_old_runs, tree_digest, write_orders

OLD_RUNS = 1000


def _published_ids(folder: Path) -> list[int]:
    import json

    return sorted(json.loads(line)["order_id"] for p in folder.rglob("*.json") for line in p.read_text().splitlines())


def test_a_store_of_1000_runs_is_cleaned_and_the_job_resumes_from_its_watermark(job, tmp_path):
    state_dir, published = tmp_path / "state", tmp_path / "published"
    kept = {p.name for p in (state_dir / "Orders").glob("*.jst")}
    assert len(kept) == 2  # the first run's file and current
    old = add_old_runs(state_dir, OLD_RUNS)
    before = tree_digest(published)

    dry = run_gpy_here("state", "clean", str(job), "--older-than", "30d", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    listed = [line.split(None, 2)[-1] for line in dry.stdout.splitlines() if line.startswith("would delete")]
    assert sorted(listed) == sorted(str(p) for p in old)
    assert f"{OLD_RUNS} state file(s) older than 30d would be deleted (dry run)" in dry.stdout
    assert all(p.exists() for p in old)

    result = run_gpy_here("state", "clean", str(job), "--older-than", "30d")
    assert result.returncode == 0, result.stderr
    assert f"Orders: {OLD_RUNS} state file(s) older than 30d deleted" in result.stdout
    assert {p.name for p in (state_dir / "Orders").glob("*.jst")} == kept
    assert tree_digest(published) == before  # state retention never touches published data

    write_orders(tmp_path / "incoming", "orders-2.csv", 4, 2)
    rerun = run_gpy_here("run", str(job), "--engine", "local")
    assert rerun.returncode == 0, rerun.stderr
    assert "records extracted 2" in rerun.stdout  # only the new file: the watermark survived the cleaning
    assert _published_ids(published) == [1, 2, 3, 4, 5]


def test_current_and_the_run_it_copies_are_kept_however_old(job, tmp_path):
    folder = tmp_path / "state" / "Orders"
    ancient = time.time() - 400 * DAY
    for path in folder.glob("*.jst"):
        os.utime(path, (ancient, ancient))
    result = run_gpy_here("state", "clean", str(job), "--older-than", "1d")
    assert result.returncode == 0, result.stderr
    assert "Orders: 0 state file(s) older than 1d deleted" in result.stdout
    assert len(list(folder.glob("*.jst"))) == 2


@pytest.mark.parametrize("text, expected", [
    ("30m", Lookback(minutes=30)), ("18h", Lookback(hours=18)), ("1d12h", Lookback(days=1, hours=12)),
    ("2M", Lookback(months=2)), ("1y", Lookback(years=1)),
])
def test_lookback_times_are_read_as_gobblin_writes_them(text, expected):
    assert Lookback.parse(text, "k") == expected


@pytest.mark.parametrize("text", ["", "30", "30 days", "h", "1h1d", "-3d"])
def test_a_bad_lookback_time_names_the_key(text):
    with pytest.raises(UsageError, match="selection.timeBased.lookbackTime"):
        Lookback.parse(text, "selection.timeBased.lookbackTime")


def test_months_are_counted_by_the_calendar():
    march_31 = 1711843200.0  # 2024-03-31T00:00:00Z
    assert Lookback(months=1).cutoff(march_31) == 1709164800.0  # 2024-02-29T00:00:00Z


def test_the_plan_lists_nothing_in_a_store_without_old_runs(job, tmp_path):
    store = FsDatasetStateStore(str(tmp_path / "state"))
    assert plan_state_clean(store, select_before(Lookback(days=30))) == []


def test_gobblins_selection_policies_pick_what_gobblin_picks():
    from gobblin_py.store.retention import Version, combine, newest_k, select_between

    now = 100 * DAY
    versions = [Version(f"v{age}", now - age * DAY) for age in (1, 3, 10, 40)]  # newest first
    before_5d = select_before(Lookback(days=5))
    assert [v.path for v in before_5d(versions, now)] == ["v10", "v40"]
    assert [v.path for v in select_between(Lookback(days=2), Lookback(days=20))(versions, now)] == ["v3", "v10"]
    assert [v.path for v in newest_k(2, exclude=False)(versions, now)] == ["v1", "v3"]
    assert [v.path for v in newest_k(3, exclude=True)(versions, now)] == ["v40"]
    keep_three = newest_k(3, exclude=True)
    assert [v.path for v in combine([before_5d, keep_three], "intersect")(versions, now)] == ["v40"]
    assert [v.path for v in combine([before_5d, keep_three], "union")(versions, now)] == ["v10", "v40"]
