"""`gpy state show` / `gpy state history` through the real CLI, on a store of three datasets."""

import json
import shutil

import pytest

from tests.support.cli import run_gpy_here


@pytest.fixture
def store_dir(tmp_path, sample_store_module):
    sample_store_module.build(str(tmp_path / "store"))
    return tmp_path / "store"


def test_show_json_lists_every_dataset_with_its_watermarks(store_dir, sample_store_module):
    result = run_gpy_here("state", "show", str(store_dir), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    datasets = {d["urn"]: d for d in report["datasets"]}
    assert set(datasets) == set(sample_store_module.DATASETS)
    for urn, tasks in sample_store_module.DATASETS.items():
        shown = datasets[urn]
        assert shown["job"] == sample_store_module.JOB_NAME and shown["state"] == "COMMITTED"
        assert shown["task_count"] == len(tasks)
        assert [
            (t["low_watermark"]["value"], t["expected_high_watermark"]["value"], t["actual_high_watermark"]["value"])
            for t in shown["tasks"]
        ] == tasks
        assert all(t["records_written"] == actual - low for t, (low, _, actual) in zip(shown["tasks"], tasks))


def test_show_text_and_job_folder_and_dataset_filter(store_dir):
    result = run_gpy_here("state", "show", str(store_dir / "SampleOrdersPull"), "--dataset", "orders_db:public.refunds")
    assert result.returncode == 0, result.stderr
    assert "dataset orders_db:public.refunds" in result.stdout
    assert "orders_db:public.orders" not in result.stdout
    # the task's row, column by column: low 120, expected high 480, actual high 360, 240 extracted and written
    [row] = [line.split() for line in result.stdout.splitlines() if line.strip().startswith("task_")]
    assert row == ["task_SampleOrdersPull_1763600000000_0", "COMMITTED", "120", "480", "360", "240", "240"]


def test_unknown_dataset_and_missing_target_exit_2(store_dir, tmp_path):
    result = run_gpy_here("state", "show", str(store_dir), "--dataset", "nope")
    assert result.returncode == 2 and "no state for dataset 'nope'" in result.stderr
    result = run_gpy_here("state", "show", str(tmp_path / "missing"))
    assert result.returncode == 2 and "no such job file or state store directory" in result.stderr


def test_history_lists_runs(store_dir):
    result = run_gpy_here("state", "history", str(store_dir), "--dataset", "orders_db:public.orders", "--json")
    assert result.returncode == 0, result.stderr
    runs = json.loads(result.stdout)["runs"]
    assert [r["job_id"] for r in runs] == ["job_SampleOrdersPull_1763600000000"]


def test_truncating_any_state_file_by_one_byte_gives_exit_2_and_one_line(store_dir, tmp_path):
    files = sorted(store_dir.rglob("*.jst"))
    assert len(files) == 6
    for victim in files:
        copy = tmp_path / f"copy-{victim.name}"
        shutil.copytree(store_dir, copy)
        target = copy / victim.relative_to(store_dir)
        target.write_bytes(target.read_bytes()[:-1])
        urn = victim.name.rsplit("-", 1)[0].replace(".", ":", 1)
        command = ["show", str(copy)] if victim.name.endswith("current.jst") else ["history", str(copy), "--dataset", urn]
        result = run_gpy_here("state", *command)
        assert result.returncode == 2, (victim, result.stdout, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in result.stderr
        assert str(target) in lines[0] and "truncated" in lines[0]
