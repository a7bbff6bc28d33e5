"""The fork example jobs under jobs/, run as a user would from a copy of the repository's jobs folder."""

import json
import shutil

import pyarrow.parquet as pq
import pytest

from tests.support.cli import run_gpy
from tests.support.paths import REPO


@pytest.fixture
def workdir(tmp_path):
    shutil.copytree(REPO / "jobs", tmp_path / "jobs")
    return tmp_path


def test_fork_by_classifier_routes_and_purges_sensitive_records(workdir):
    result = run_gpy("run", "jobs/fork_by_classifier.pull", "--engine", "local", cwd=workdir)
    assert result.returncode == 0, result.stdout + result.stderr
    published = workdir / "work" / "fork_by_classifier" / "published"
    purged = pq.read_table(next((published / "purged").rglob("*.parquet"))).to_pylist()
    clean = pq.read_table(next((published / "clean").rglob("*.parquet"))).to_pylist()
    source = [json.loads(line) for line in (workdir / "jobs/data/customers/customers-2026-11-01.jsonl").read_text().splitlines()]
    sensitive = {r["customer_id"] for r in source if r["ssn"] or r["card_number"]}
    assert {r["customer_id"] for r in purged} == sensitive
    assert {r["customer_id"] for r in clean} == {r["customer_id"] for r in source} - sensitive
    assert all(r["ssn"] is None and r["card_number"] is None for r in purged + clean)
    assert all(r["email"] for r in purged)


def test_fork_dual_write_writes_both_sinks(workdir):
    result = run_gpy("run", "jobs/fork_dual_write.pull", "--engine", "local", cwd=workdir)
    assert result.returncode == 0, result.stdout + result.stderr
    published = workdir / "work" / "fork_dual_write" / "published"
    parquet_ids = sorted(i for f in (published / "parquet").rglob("*.parquet") for i in pq.read_table(f).column("order_id").to_pylist())
    json_ids = sorted(json.loads(line)["order_id"] for f in (published / "jsonl").rglob("*.json") for line in f.read_text().splitlines())
    assert parquet_ids == json_ids == list(range(1, 751))
