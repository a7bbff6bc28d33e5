"""A startpoint names a dataset the job has: one with state, or one its source would plan now. Any other name
(a URN written the way an older README told, a typo) is refused before anything is stored."""

from __future__ import annotations

import json

from tests.sql.helpers import SqliteDb, SqlJob, create_shop
from tests.support.cli import run_gpy


def set_startpoint(job: SqlJob, dataset: str, *args: str):
    return run_gpy("state", "startpoint", "set", str(job.file), "--dataset", dataset, *args)


def stored(job: SqlJob) -> dict:
    listed = run_gpy("state", "startpoint", "list", str(job.file), "--json")
    assert listed.returncode == 0, listed.stderr
    return json.loads(listed.stdout)


def test_an_unknown_dataset_is_refused_listing_the_known_ones(tmp_path):
    db = SqliteDb(tmp_path / "shop.db")
    create_shop(db, orders=10, customers=3)
    job = SqlJob(tmp_path / "job", db)  # extract.namespace=shop: the URNs are still the table names
    refused = set_startpoint(job, "shop.orders", "--oldest")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "Traceback" not in refused.stderr
    [line] = [line for line in refused.stderr.splitlines() if line.startswith("gpy: error:")]
    assert "'shop.orders'" in line and "'customers', 'orders'" in line and "did you mean 'orders'" in line, line
    assert stored(job) == {}
    # before any run the source's plan knows the tables
    assert set_startpoint(job, "orders", "--oldest").returncode == 0
    assert list(stored(job)) == ["orders"]


def test_a_dataset_known_only_from_its_state_is_accepted(tmp_path):
    db = SqliteDb(tmp_path / "shop.db")
    create_shop(db, orders=10, customers=3)
    job = SqlJob(tmp_path / "job", db)
    assert job.run().returncode == 0
    job.set(source__entities="orders")  # customers is no longer planned, but it has state
    assert set_startpoint(job, "customers", "--oldest").returncode == 0
    shown = run_gpy("run", str(job.file), "--engine", "local", "--dry-run")
    assert "customers: keep the startpoint at the oldest data (OLDEST startpoint " in shown.stdout, shown.stdout
    assert "no work unit of this dataset is planned" in shown.stdout
    refused = set_startpoint(job, "custmers", "--oldest")
    assert refused.returncode == 2 and "did you mean 'customers'" in refused.stderr, refused.stderr
