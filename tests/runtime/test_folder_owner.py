"""A final folder belongs to the job that first published into it: another job publishing there is refused before
any work (exit 2, naming both jobs, the folder and the key), unless it says the folder is shared on purpose."""

from __future__ import annotations

import json

import pytest

from tests.support.jobs import Job, run_local, write_csv


def two_jobs(tmp_path, extra: str = "") -> tuple[Job, Job]:
    """Orders, and Refunds configured to publish into Orders' final folder (each with its own state)."""
    orders = Job(tmp_path / "orders")
    write_csv(orders.data / "a.csv", 1)
    refunds = Job(tmp_path / "refunds", extra=f"job.name=Refunds\ndata.publisher.final.dir={orders.final}\n{extra}")
    write_csv(refunds.data / "b.csv", 101)
    return orders, refunds


def test_a_second_job_publishing_into_another_jobs_folder_is_refused_naming_both(tmp_path):
    orders, refunds = two_jobs(tmp_path)
    first = run_local(orders)
    assert first.returncode == 0, first.stdout + first.stderr
    owner = json.loads((orders.final / "_gpy_owner.marker").read_text())
    assert owner["job"] == "Orders" and owner["job_file"] == str(orders.file)
    before = sorted(str(p.relative_to(orders.final)) for p in orders.final.rglob("*"))

    second = run_local(refunds)
    assert second.returncode == 2, second.stdout + second.stderr
    error = second.stderr
    assert f"the final folder {orders.final} (data.publisher.final.dir) belongs to job 'Orders'" in error
    assert "job 'Refunds'" in error and "data.publisher.final.dir.shared=true" in error
    assert sorted(str(p.relative_to(orders.final)) for p in orders.final.rglob("*")) == before  # nothing written
    assert orders.published_ids() == list(range(1, 41))
    assert not (refunds.state / "Refunds").exists() or not list((refunds.state / "Refunds").glob("*.jst"))

    again = run_local(orders)  # its owner still publishes there
    assert again.returncode == 0, again.stdout + again.stderr


def test_a_folder_shared_on_purpose_takes_both_jobs(tmp_path):
    orders, refunds = two_jobs(tmp_path, extra="data.publisher.final.dir.shared=true\n")
    assert run_local(orders).returncode == 0
    shared = run_local(refunds)
    assert shared.returncode == 0, shared.stdout + shared.stderr
    assert orders.published_ids() == list(range(1, 41)) + list(range(101, 141))
    assert json.loads((orders.final / "_gpy_owner.marker").read_text())["job"] == "Orders"  # still Orders'


def test_a_renamed_job_is_refused_and_told_how_to_hand_the_folder_over(tmp_path):
    orders = Job(tmp_path, extra="state.store.enabled=false\n")  # no state: the lost-state check does not apply
    write_csv(orders.data / "a.csv", 1)
    assert run_local(orders).returncode == 0
    orders.file.write_text(orders.file.read_text().replace("job.name=Orders", "job.name=OrdersV2"))
    renamed = run_local(orders)
    assert renamed.returncode == 2, renamed.stdout + renamed.stderr
    assert "This job file published there as job 'Orders'" in renamed.stderr
    assert "give it its name back (job.name=Orders)" in renamed.stderr
    assert f"deleting {orders.final / '_gpy_owner.marker'}" in renamed.stderr
    (orders.final / "_gpy_owner.marker").unlink()  # handed over: the next run claims it
    write_csv(orders.data / "b.csv", 101)
    assert run_local(orders).returncode == 0
    assert json.loads((orders.final / "_gpy_owner.marker").read_text())["job"] == "OrdersV2"


def test_a_folder_published_into_before_claims_existed_is_claimed_by_the_next_run(tmp_path):
    orders, refunds = two_jobs(tmp_path)
    # what an earlier version left: both jobs' data and published markers, no owner
    assert run_local(orders).returncode == 0
    (orders.final / "_gpy_owner.marker").unlink()
    (orders.final / "_gpy_published.Refunds.marker").write_text(json.dumps(
        {"job": "Refunds", "job_file": str(refunds.file), "state_store": str(refunds.state)}))
    write_csv(orders.data / "c.csv", 201)
    assert run_local(orders).returncode == 0  # claims it, warning that Refunds published there too
    assert json.loads((orders.final / "_gpy_owner.marker").read_text())["job"] == "Orders"
    assert run_local(refunds).returncode == 2


def test_a_folder_each_run_replaces_stays_its_jobs(tmp_path):
    extra = ("data.publisher.replace.final.dir=true\ngobblin.runtime.delivery.semantics=AT_LEAST_ONCE\n"
             "data.publisher.appendExtractToFinalDir=false\n")
    orders, refunds = two_jobs(tmp_path, extra=extra)
    orders.file.write_text(orders.file.read_text() + extra)
    assert run_local(orders).returncode == 0  # the run emptied the folder, marker included, then claimed it again
    assert json.loads((orders.final / "_gpy_owner.marker").read_text())["job"] == "Orders"
    assert run_local(refunds).returncode == 2


def test_of_two_jobs_reaching_their_commits_together_the_second_is_refused_there(tmp_path):
    from gobblin_py.runtime.commit.folder_owner import FolderOwnedError, check_folder_owners

    orders, refunds = two_jobs(tmp_path)
    props = {"job.name": "Orders", "data.publisher.final.dir": str(orders.final)}
    first = check_folder_owners(props, "Orders", str(orders.file))
    second = check_folder_owners({**props, "job.name": "Refunds"}, "Refunds", str(refunds.file))
    assert len(first.unclaimed) == len(second.unclaimed) == 1  # both found it unclaimed at their start
    first.claim()
    with pytest.raises(FolderOwnedError, match="belongs to job 'Orders'"):
        second.claim()
    shared = check_folder_owners({**props, "data.publisher.final.dir.shared": "true"}, "Refunds", None)
    shared.claim()  # shared on purpose: no refusal, and the owner stays
    assert json.loads((orders.final / "_gpy_owner.marker").read_text())["job"] == "Orders"
    assert not [p for p in orders.final.iterdir() if p.name.endswith(".new")]
