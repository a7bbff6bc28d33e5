"""``gpy validate`` warns when a retention job reads its version folders' names otherwise than they were written.

gpy (as Gobblin) names ``<extract id>_append`` folders in UTC; Gobblin's retention reads version dates in
``America/Los_Angeles`` unless told otherwise, so over gpy's folders it deleted each version 7 or 8 hours late —
with a lookback of hours, nothing — until the time zone was set.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import run_gpy_here

TIMEZONE = "gobblin.retention.version.datetime.timezone"
PATTERN = "gobblin.retention.version.datetime.pattern"


def retention_job(tmp_path: Path, *extra: str) -> Path:
    job_file = tmp_path / "retention.pull"
    job_file.write_text("\n".join([
        "job.name=LakeRetention",
        "job.class=org.apache.gobblin.data.management.retention.DatasetCleanerJob",
        "gobblin.retention.dataset.finder.class=org.apache.gobblin.data.management.retention.profile."
        "GlobCleanableDatasetFinder",
        f"gobblin.retention.dataset.pattern={tmp_path / 'published'}/shop/*",
        "gobblin.retention.version.finder.class=org.apache.gobblin.data.management.version.finder."
        "DateTimeDatasetVersionFinder",
        "gobblin.retention.selection.policy.class=org.apache.gobblin.data.management.policy."
        "SelectBeforeTimeBasedPolicy",
        "gobblin.retention.selection.timeBased.lookbackTime=6h",
        *extra,
    ]) + "\n")
    return job_file


def append_folders(tmp_path: Path) -> None:
    for name in ("20240101120000_append", "20240102120000_append"):
        (tmp_path / "published" / "shop" / "events" / name).mkdir(parents=True)


def warnings(result) -> list[str]:
    return [line.split("warning:", 1)[1].strip() for line in result.stdout.splitlines() if "warning:" in line]


def test_gobblins_default_zone_over_gpys_append_folders_warns_and_utc_does_not(tmp_path):
    append_folders(tmp_path)
    job = retention_job(tmp_path, f"{PATTERN}=yyyyMMddHHmmss")
    result = run_gpy_here("validate", str(job))
    assert result.returncode == 0, result.stdout  # a warning: Gobblin's default stays
    [warning] = warnings(result)
    assert f"{job}: key '{TIMEZONE}': America/Los_Angeles" in warning
    assert "_append" in warning and "UTC" in warning and f"set {TIMEZONE}=UTC" in warning
    utc = run_gpy_here("validate", str(retention_job(tmp_path, f"{PATTERN}=yyyyMMddHHmmss", f"{TIMEZONE}=UTC")))
    assert utc.returncode == 0 and warnings(utc) == []


def test_a_glob_of_append_folders_is_enough_to_know(tmp_path):
    (tmp_path / "published" / "shop" / "events").mkdir(parents=True)  # nothing published yet
    job = retention_job(tmp_path, f"{PATTERN}=yyyyMMddHHmmss", "gobblin.retention.version.globPattern=*_append",
                        f"{TIMEZONE}=Europe/Berlin")
    [warning] = warnings(run_gpy_here("validate", str(job)))
    assert "Europe/Berlin" in warning and "too old" in warning


def test_a_date_pattern_over_append_folders_warns(tmp_path):
    append_folders(tmp_path)
    [warning] = warnings(run_gpy_here("validate", str(retention_job(tmp_path, f"{PATTERN}=yyyy/MM/dd"))))
    assert f"key '{PATTERN}'" in warning and "yyyyMMddHHmmss" in warning


@pytest.mark.parametrize("zone", [None, "UTC"])
def test_date_partitioned_folders_get_no_zone_warning(tmp_path, zone):
    # named in the writing job's writer.partition.timezone, which nothing in the folders records
    (tmp_path / "published" / "shop" / "orders" / "2024" / "01" / "02").mkdir(parents=True)
    job = retention_job(tmp_path, f"{PATTERN}=yyyy/MM/dd", f"{TIMEZONE}={zone}" if zone else "")
    result = run_gpy_here("validate", str(job))
    assert result.returncode == 0 and warnings(result) == []


def test_a_pattern_that_reads_none_of_the_folders_warns(tmp_path):
    (tmp_path / "published" / "shop" / "orders" / "2024-01-02").mkdir(parents=True)
    [warning] = warnings(run_gpy_here("validate", str(retention_job(tmp_path, f"{PATTERN}=yyyyMMdd"))))
    assert f"key '{PATTERN}'" in warning and "reads none" in warning and "2024-01-02" in warning
