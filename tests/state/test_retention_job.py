"""Gobblin's retention job files run as they are (``job.class=…DatasetCleanerJob``): the state store's old run
files, or a dataset's old published versions, deleted by Gobblin's time-based selection policies."""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from tests.support.cli import run_gpy_here
from tests.support.paths import CORPUS, NEEDS_CORPUS
from tests.support.retention import add_old_runs, tree_digest

EXAMPLES = CORPUS / "gobblin-example" / "src" / "main" / "resources"
needs_corpus = NEEDS_CORPUS


def _pointed_at(source: Path, target: Path, **values: str) -> Path:
    """The job file ``source`` with only the keys in ``values`` given other values (folders pointed elsewhere)."""
    lines = []
    for line in source.read_text().splitlines():
        key = line.split("=", 1)[0].strip()
        lines.append(f"{key}={values[key]}" if key in values and "=" in line else line)
    target.write_text("\n".join(lines) + "\n")
    return target


@needs_corpus
def test_gobblins_state_store_retention_job_runs_as_it_is(job, tmp_path):  # noqa: F811
    state_dir, published = tmp_path / "state", tmp_path / "published"
    old = add_old_runs(state_dir, 50, oldest_days=1)  # all older than the file's 30 minutes
    recent = add_old_runs(state_dir, 1, oldest_days=0.01, first=1_800_000_000_000)[0]  # 14 minutes old: kept
    before = tree_digest(published)
    cleaner = _pointed_at(EXAMPLES / "state-store-retention.pull", tmp_path / "state-store-retention.pull",
                          **{"state.store.fs.uri": "file:///", "state.store.dir": str(state_dir)})

    valid = run_gpy_here("validate", str(cleaner))
    assert valid.returncode == 0, valid.stdout + valid.stderr

    dry = run_gpy_here("run", str(cleaner), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert sorted(line.split(None, 2)[-1] for line in dry.stdout.splitlines() if line.startswith("would delete")) \
        == sorted(str(p) for p in old)
    assert "50 state file(s)" in dry.stdout and all(p.exists() for p in old)

    result = run_gpy_here("run", str(cleaner))
    assert result.returncode == 0, result.stderr
    assert f"50 state file(s) under {state_dir} deleted" in result.stdout
    assert not any(p.exists() for p in old) and recent.exists()
    assert len(list((state_dir / "Orders").glob("*.jst"))) == 3  # the job's run, its current, the recent one
    assert tree_digest(published) == before
    shown = run_gpy_here("state", "show", str(job))
    assert shown.returncode == 0, shown.stderr


@needs_corpus
def test_the_mysql_retention_job_names_the_encrypted_password_its_missing_master_key_cannot_decrypt(tmp_path):
    source = EXAMPLES / "mysql-state-store-retention.pull"
    result = run_gpy_here("validate", str(source))
    assert result.returncode == 2, result.stdout
    assert ("key 'state.store.db.password': ENC(…) cannot be decrypted: encrypt.key.loc /export/home/app/clusterMasterKey "
            "is not found") in result.stdout
    assert "source.class" not in result.stdout  # a retention job: no pipeline is asked for
    run = run_gpy_here("run", str(source))
    assert run.returncode == 2 and "state.store.db.password" in run.stderr and "Traceback" not in run.stderr


def _folder(day: datetime, pattern: str) -> str:
    return day.strftime(pattern)


def _written_on(folder: Path, day: datetime) -> None:
    """Give ``folder`` and everything in it the modification time ``day``, as if written then."""
    moment = day.timestamp()
    for path in [*folder.rglob("*"), folder]:
        os.utime(path, (moment, moment))


def _versions_job(tmp_path: Path, lookback: str, extra: str = "", policy: str = "SelectBeforeTimeBasedPolicy") -> Path:
    job_file = tmp_path / "published-retention.pull"
    job_file.write_text("\n".join([
        "job.name=PublishedRetention",
        "job.class=org.apache.gobblin.data.management.retention.DatasetCleanerJob",
        "gobblin.retention.dataset.finder.class=org.apache.gobblin.data.management.retention.profile."
        "GlobCleanableDatasetFinder",
        f"gobblin.retention.dataset.pattern={tmp_path / 'published'}/shop/*",
        "gobblin.retention.version.finder.class=org.apache.gobblin.data.management.version.finder."
        "DateTimeDatasetVersionFinder",
        "gobblin.retention.version.datetime.timezone=UTC",
        f"gobblin.retention.selection.policy.class=org.apache.gobblin.data.management.policy.{policy}",
        f"gobblin.retention.selection.timeBased.lookbackTime={lookback}",
        extra,
    ]) + "\n")
    return job_file


def test_published_date_partitioned_versions_older_than_the_lookback_are_deleted(tmp_path):
    today = datetime.now(timezone.utc)
    orders = tmp_path / "published" / "shop" / "orders"
    days = {age: orders / _folder(today - timedelta(days=age), "%Y/%m/%d") for age in (1, 5, 12, 40)}
    for age, folder in days.items():
        folder.mkdir(parents=True)
        (folder / "part-0.parquet").write_bytes(b"data")
        _written_on(folder, today - timedelta(days=age))
    (orders / "latest").mkdir()  # not a date: never a version
    outside = tmp_path / "elsewhere" / "2001" / "01" / "01"
    outside.mkdir(parents=True)
    job_file = _versions_job(tmp_path, "10d", "gobblin.retention.version.datetime.pattern=yyyy/MM/dd")

    dry = run_gpy_here("run", str(job_file), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert sorted(line.split(None, 2)[-1] for line in dry.stdout.splitlines() if line.startswith("would delete")) \
        == sorted([str(days[12]), str(days[40])])
    assert all(folder.exists() for folder in days.values())

    result = run_gpy_here("run", str(job_file))
    assert result.returncode == 0, result.stderr
    assert not days[12].exists() and not days[40].exists() and days[1].exists() and days[5].exists()
    assert (orders / "latest").is_dir() and outside.is_dir()
    # the folders a deletion left empty go too, up to the dataset's folder
    assert not days[40].parent.exists() or any(days[40].parent.iterdir())


def test_append_folders_are_versions_and_the_newest_is_kept_by_a_combined_policy(tmp_path):
    now = datetime.now(timezone.utc)
    events = tmp_path / "published" / "shop" / "events"
    folders = [events / f"{_folder(now - timedelta(days=age), '%Y%m%d%H%M%S')}_append" for age in (20, 30, 45)]
    for age, folder in zip((20, 30, 45), folders, strict=True):
        folder.mkdir(parents=True)
        (folder / "part.json").write_text("{}\n")
        _written_on(folder, now - timedelta(days=age))
    policy = "org.apache.gobblin.data.management.policy."
    job_file = _versions_job(tmp_path, "10d", "\n".join([
        "gobblin.retention.version.datetime.pattern=yyyyMMddHHmmss",
        "gobblin.retention.selection.combine.operation=intersect",
        f"gobblin.retention.selection.combine.policy.classes={policy}SelectBeforeTimeBasedPolicy,"
        f"{policy}NewestKSelectionPolicy",
        "gobblin.retention.selection.newestK.versionsNotSelected=1",
    ]), policy="CombineSelectionPolicy")
    result = run_gpy_here("run", str(job_file))
    assert result.returncode == 0, result.stderr
    assert [f.exists() for f in folders] == [True, False, False]  # all older than 10 days; the newest kept


def test_a_version_that_leads_outside_its_dataset_is_refused(tmp_path):
    outside = tmp_path / "precious" / "2001"
    (outside / "01" / "01").mkdir(parents=True)
    (outside / "01" / "01" / "keep.txt").write_text("x")
    _written_on(outside, datetime(2001, 1, 1, tzinfo=timezone.utc))  # old by its name and by its files
    orders = tmp_path / "published" / "shop" / "orders"
    orders.mkdir(parents=True)
    (orders / "2001").symlink_to(outside, target_is_directory=True)  # the year's folder leads elsewhere
    job_file = _versions_job(tmp_path, "10d", "gobblin.retention.version.datetime.pattern=yyyy/MM/dd\n"
                             "gobblin.retention.version.globPattern=2001/*/*")  # a glob that goes through it
    result = run_gpy_here("run", str(job_file))
    assert result.returncode == 2 and "symbolic link" in result.stderr, result.stdout + result.stderr
    assert (outside / "01" / "01" / "keep.txt").exists()


def test_a_version_folder_that_is_a_link_is_not_followed(tmp_path):
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "keep.txt").write_text("x")
    orders = tmp_path / "published" / "shop" / "orders"
    (orders / "2001" / "01").mkdir(parents=True)
    (orders / "2001" / "01" / "01").symlink_to(outside, target_is_directory=True)
    job_file = _versions_job(tmp_path, "10d", "gobblin.retention.version.datetime.pattern=yyyy/MM/dd")
    run_gpy_here("run", str(job_file))
    assert (outside / "keep.txt").exists()


def test_a_bad_lookback_is_refused_before_anything_is_deleted(tmp_path):
    orders = tmp_path / "published" / "shop" / "orders" / "2001" / "01" / "01"
    orders.mkdir(parents=True)
    job_file = _versions_job(tmp_path, "ten days", "gobblin.retention.version.datetime.pattern=yyyy/MM/dd")
    run = run_gpy_here("run", str(job_file))
    assert run.returncode == 2 and "gobblin.retention.selection.timeBased.lookbackTime='ten days'" in run.stderr
    assert orders.exists()


def test_a_retention_finder_gpy_lacks_is_named_with_the_nearest_one(tmp_path):
    job_file = tmp_path / "managed.pull"
    job_file.write_text("\n".join([
        "job.class=org.apache.gobblin.data.management.retention.DatasetCleanerJob",
        "gobblin.retention.dataset.finder.class=org.apache.gobblin.data.management.retention.profile."
        "ManagedCleanableDatasetFinder",
        f"state.store.dir={tmp_path / 'state'}",
    ]) + "\n")
    result = run_gpy_here("validate", str(job_file))
    assert result.returncode == 2
    assert "unsupported: gobblin.retention.dataset.finder.class=" in result.stdout
    assert "nearest gpy built-in: GlobCleanableDatasetFinder" in result.stdout


@pytest.mark.parametrize(("pattern", "says"), [
    ("yyyy/mm/dd", "has minutes (mm) and no hour: 'mm' is minutes, a month is 'MM'"),
    ("MM/dd", "has no year (yyyy): every folder would read as a day of 1900"),
    ("yyyy/dd", "has a day of month (dd) without a month (MM)"),
    ("yyyyMMddhhmmss", "has a 12-hour clock (hh) without AM/PM (a)"),
])
def test_a_version_pattern_that_cannot_name_its_folders_dates_is_refused(tmp_path, pattern, says):
    today = datetime.now(timezone.utc)
    version = tmp_path / "published" / "shop" / "orders" / today.strftime("%Y/%m/%d")
    version.mkdir(parents=True)
    job_file = _versions_job(tmp_path, "10d", f"gobblin.retention.version.datetime.pattern={pattern}")
    validated = run_gpy_here("validate", str(job_file))
    assert validated.returncode == 2, validated.stdout + validated.stderr
    assert f"gobblin.retention.version.datetime.pattern={pattern!r} {says}" in validated.stdout
    ran = run_gpy_here("run", str(job_file))
    assert ran.returncode == 2 and says in ran.stderr, ran.stdout + ran.stderr
    assert version.is_dir()  # today's folder, read as a January by yyyy/mm/dd, is still there


def test_a_version_named_old_whose_files_are_new_is_kept_with_a_warning(tmp_path):
    """Whatever the name's parse says, a version with files modified within the lookback is not deleted."""
    now = datetime.now(timezone.utc)
    orders = tmp_path / "published" / "shop" / "orders"
    misnamed = orders / "2001" / "01" / "01"  # today's data in a folder whose name says 2001
    misnamed.mkdir(parents=True)
    (misnamed / "part-0.parquet").write_bytes(b"today's data")
    old = orders / _folder(now - timedelta(days=40), "%Y/%m/%d")
    old.mkdir(parents=True)
    (old / "part-0.parquet").write_bytes(b"old data")
    _written_on(old, now - timedelta(days=40))
    job_file = _versions_job(tmp_path, "10d", "gobblin.retention.version.datetime.pattern=yyyy/MM/dd")
    result = run_gpy_here("run", str(job_file))
    assert result.returncode == 0, result.stderr
    assert misnamed.is_dir() and not old.exists()
    assert f"kept  {misnamed}: its name reads 2001-01-01T00:00:00Z, older than the lookback, but it holds entries " \
           "modified" in result.stdout
    assert "1 dataset version(s)" in result.stdout and "1 kept: modified within the lookback" in result.stdout
    assert "retention_version_kept" in result.stderr


@pytest.mark.parametrize(("operation", "policies", "cutoff_days"), [
    ("intersect", "SelectBeforeTimeBasedPolicy,NewestKSelectionPolicy", 10),  # a version must pass both
    ("union", "SelectBeforeTimeBasedPolicy,NewestKSelectionPolicy", None),  # newest-k alone may pick any version
    ("union", "SelectBeforeTimeBasedPolicy,SelectBetweenTimeBasedPolicy", 3),  # the later of the two cutoffs
])
def test_the_newest_time_a_combined_policy_may_delete(operation, policies, cutoff_days):
    from gobblin_py.connectors.retention.policies import CombineSelectionPolicy
    from gobblin_py.connectors.retention.settings import CleanerSettings

    settings = CleanerSettings.load({
        "gobblin.retention.dataset.finder.class": "GlobCleanableDatasetFinder",
        "gobblin.retention.selection.combine.operation": operation,
        "gobblin.retention.selection.combine.policy.classes": policies,
        "gobblin.retention.selection.timeBased.lookbackTime": "10d",
        "gobblin.retention.selection.timeBased.minLookbackTime": "3d",
    })
    now = datetime(2026, 3, 1, tzinfo=timezone.utc).timestamp()
    expected = None if cutoff_days is None else now - cutoff_days * 86_400
    assert CombineSelectionPolicy.newest_selected(settings, now) == expected
