"""Forks and quality checkers end to end through `gpy run` (local engine, real files)."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.support.cli import run_gpy
from tests.support.jobs import Job, run_local, write_csv

ALL = list(range(1, 41)) + list(range(101, 141))


def ids(root) -> list[int]:
    return sorted(i for f in root.rglob("*.parquet") for i in pq.read_table(f).column("order_id").to_pylist())


def two_files(job: Job) -> None:
    write_csv(job.data / "a.csv", 1)
    write_csv(job.data / "b.csv", 101)


def task_states(job: Job) -> list[dict]:
    from gobblin_py.store import FsDatasetStateStore

    state = FsDatasetStateStore(str(job.state)).get_latest_dataset_state("Orders", "")
    return [t.all_properties() | {"_state": t.working_state.value} for t in state.all_task_states()]


@pytest.mark.parametrize("branches", [1, 2, 6])
def test_identity_fork_writes_every_row_to_every_branch(tmp_path, branches):
    job = Job(tmp_path, extra=f"fork.branches={branches}\n")
    two_files(job)
    result = run_local(job)
    assert result.returncode == 0, result.stdout + result.stderr
    if branches == 1:
        assert ids(job.final) == ALL
    else:
        for i in range(branches):
            assert ids(job.final / f"fork_{i}") == ALL, i
        for task in task_states(job):
            assert task["fork.branches"] == str(branches)
            assert [task[f"writer.records.written.{i}"] for i in range(branches)] == ["40"] * branches
            assert task["writer.records.written"] == str(40 * branches)


def test_vectorised_router_with_per_branch_converters(tmp_path):
    job = Job(tmp_path, extra=(
        "fork.operator.class=tests.runtime.sample_plugins.RouteByParity\n"
        "fork.branch.name.0=even\nfork.branch.name.1=odd\n"
        "converter.classes.0=gobblin_py.transforms.converters.projection.FieldProjectionConverter\n"
        "converter.projection.fields.0=order_id,amount\n"
        "converter.classes.1=gobblin_py.transforms.converters.cast.TypeCastConverter\n"
        "converter.cast.fields.1=amount:string\n"
    ))
    two_files(job)
    result = run_local(job)
    assert result.returncode == 0, result.stdout + result.stderr
    even, odd = ids(job.final / "even"), ids(job.final / "odd")
    assert even == [i for i in ALL if i % 2 == 0] and odd == [i for i in ALL if i % 2]
    even_table = pq.read_table(next((job.final / "even").rglob("*.parquet")))
    odd_table = pq.read_table(next((job.final / "odd").rglob("*.parquet")))
    assert even_table.schema.names == ["order_id", "amount"]
    assert odd_table.schema.field("amount").type == pa.string() and "currency" in odd_table.schema.names


def test_per_record_fork_operator(tmp_path):
    job = Job(tmp_path, extra="fork.operator.class=tests.runtime.sample_plugins.RouteByCustomerPerRecord\n")
    two_files(job)
    assert run_local(job).returncode == 0
    routed = [ids(job.final / f"fork_{i}") for i in range(3)]
    assert sorted(sum(routed, [])) == ALL
    assert all(all(i % 17 % 3 == b for i in routed[b]) for b in range(3))  # customer_id = order_id % 17


def test_wrong_length_answer_raises_fork_branch_mismatch_naming_the_operator(tmp_path):
    job = Job(tmp_path, extra="fork.operator.class=tests.runtime.sample_plugins.WrongLengthFork\n")
    two_files(job)
    result = run_local(job)
    assert result.returncode == 1
    assert "ForkBranchMismatchError" in result.stderr
    assert "tests.runtime.sample_plugins.WrongLengthFork: number of forked data records [3] is not equal to number of branches [2]" in result.stderr
    assert ids(job.final) == []


def failing_branch_job(root, policy: str) -> Job:
    job = Job(root, extra=(
        f"job.commit.policy={policy}\nfork.branches=2\n"
        "converter.classes.1=tests.runtime.sample_plugins.FailOnMarker\ntest.fail.marker=BROKEN\n"
    ))
    write_csv(job.data / "good.csv", 1)
    write_csv(job.data / "bad.csv", 101, note="BROKEN")
    return job


def test_failing_branch_under_full_commits_no_branch(tmp_path):
    job = failing_branch_job(tmp_path, "full")
    result = run_local(job)
    assert result.returncode == 1
    assert ids(job.final) == []  # not even branch 0 of the failed task, nor the good task's branches
    assert not list(job.state.rglob("*.jst"))


@pytest.mark.parametrize("policy", ["successful", "partial"])
def test_failing_branch_under_successful_and_partial_drops_that_task_entirely(tmp_path, policy):
    job = failing_branch_job(tmp_path, policy)
    result = run_local(job)
    assert result.returncode == 3, result.stdout
    assert ids(job.final / "fork_0") == list(range(1, 41))  # branch 0 of the bad task is not published either
    assert ids(job.final / "fork_1") == list(range(1, 41))
    tasks = {t["source.filebased.files.to.pull"].rsplit("/", 1)[1]: t for t in task_states(job)}
    assert tasks["bad.csv"]["_state"] == "FAILED" and tasks["good.csv"]["_state"] == "COMMITTED"
    bad_interval = json.loads(tasks["bad.csv"]["watermark.interval.value"])
    assert json.loads(tasks["bad.csv"]["workunit.state.actual.high.water.mark"]) == bad_interval["low.watermark.to.json"]


def test_queue_back_pressure_with_capacity_one(tmp_path):
    job = Job(tmp_path, extra=(
        "source.filebased.file.pattern=*.parquet\nsource.filebased.batch.size=10\n"
        "fork.branches=2\nfork.record.queue.capacity=1\nfork.record.queue.timeout=50\n"
        "converter.classes=\nconverter.classes.1=tests.runtime.sample_plugins.SlowConverter\n"
    ))
    table = pa.table({"order_id": pa.array(range(400), pa.int64()), "v": pa.array([1.5] * 400)})
    pq.write_table(table, job.data / "orders.parquet")
    result = run_gpy("--log-level", "DEBUG", "--log-format", "json", "run", str(job.file), "--engine", "local")
    assert result.returncode == 0, result.stderr[-2000:]
    stats = [json.loads(line) for line in result.stderr.splitlines() if '"fork_queue_stats"' in line]
    final = [s for s in stats if s.get("final")]
    assert len(final) == 2
    for s in final:
        assert s["max_size"] <= 1 and s["fill_ratio"] <= 1
        assert s["put_attempts"] >= 41  # 40 batches and the end of input, each put at least once
    slow = next(s for s in final if s["branch"] == "fork_1")
    # the slow branch held the reader back: its queue of one batch was found full again and again (a batch
    # takes it 20 ms; the reader puts the next within a millisecond), where an unbounded queue never is
    assert slow["puts_blocked"] >= 10, slow
    assert ids(job.final / "fork_0") == list(range(400)) == ids(job.final / "fork_1")


def test_a_full_queue_makes_the_put_wait_and_counts_it():
    import threading
    import time

    from gobblin_py.runtime.execute.fork import BoundedBatchQueue

    queue = BoundedBatchQueue(1, 0.01, "fork_1")
    assert queue.put("first", lambda: True) and queue.puts_blocked == 0

    def consumer() -> None:
        for _ in range(10_000):  # until the reader is waiting for room (bounded)
            if queue.puts_blocked:
                break
            time.sleep(0.001)
        taken.append(queue.get())

    taken: list[str] = []
    thread = threading.Thread(target=consumer)
    thread.start()
    assert queue.put("second", lambda: True)  # waits until the consumer takes "first"
    thread.join()
    assert taken == ["first"] and queue.puts_blocked == 1 and queue.get() == "second"
    assert queue.stats()["puts_blocked"] == 1 and queue.max_size == 1


def test_row_policies_optional_drops_err_file_records_fail_fails(tmp_path):
    err_dir = tmp_path / "errors"
    job = Job(tmp_path / "job", extra=(
        "qualitychecker.row.policies=gobblin_py.transforms.quality.row.RequiredFieldsPolicy,tests.runtime.sample_plugins.PositiveAmount\n"
        "qualitychecker.row.policy.types=OPTIONAL,ERR_FILE\n"
        "qualitychecker.row.required.fields=customer_id\n"
        f"qualitychecker.row.err.file={err_dir}\n"
    ))
    lines = ["order_id,customer_id,amount,currency,note", "1,5,10.0,EUR,", "2,,11.0,EUR,", "3,7,-4.0,EUR,", "4,8,0,EUR,"]
    (job.data / "a.csv").write_text("\n".join(lines) + "\n")
    result = run_local(job)
    assert result.returncode == 0, result.stdout + result.stderr
    assert ids(job.final) == [1]
    [err_file] = list(err_dir.glob("*.err"))
    assert err_file.name.startswith("tests.runtime.sample_plugins.PositiveAmount-task_Orders_")
    assert [json.loads(line)["order_id"] for line in err_file.read_text().splitlines()] == [3, 4]
    assert "row policy RequiredFieldsPolicy (OPTIONAL): 1 row(s) failed" in result.stdout
    assert "row policy PositiveAmount (ERR_FILE): 2 row(s) failed" in result.stdout

    failing = Job(tmp_path / "fail", extra=(
        "qualitychecker.row.policies=tests.runtime.sample_plugins.PositiveAmount\nqualitychecker.row.policy.types=FAIL\n"
    ))
    (failing.data / "a.csv").write_text("\n".join(lines) + "\n")
    result = run_local(failing)
    assert result.returncode == 1
    assert "row policy tests.runtime.sample_plugins.PositiveAmount (FAIL) failed on record" in result.stderr


def parquet_job(root, extra: str) -> Job:
    job = Job(root, extra="source.filebased.file.pattern=*.parquet\nconverter.classes=\n" + extra)
    pq.write_table(pa.table({"order_id": pa.array(range(1, 11), pa.int64()), "amount": [1.0, -1.0] * 5}),
                   job.data / "a.parquet")
    return job


DROP_NEGATIVE = (
    "qualitychecker.row.policies=tests.runtime.sample_plugins.PositiveAmount\nqualitychecker.row.policy.types=OPTIONAL\n"
)


def test_fail_task_policy_blocks_the_commit_by_default(tmp_path):
    job = parquet_job(tmp_path, DROP_NEGATIVE + (
        "qualitychecker.task.policies=org.apache.gobblin.policies.count.RowCountPolicy\n"
        "qualitychecker.task.policy.types=FAIL\n"
    ))
    result = run_local(job)
    assert result.returncode == 1
    assert "task-level quality policy failed" in result.stderr and "RowCountPolicy" in result.stderr
    assert ids(job.final) == []


def test_enforce_failure_false_commits_and_records_the_failure(tmp_path):
    job = parquet_job(tmp_path, DROP_NEGATIVE + (
        "qualitychecker.task.policies=gobblin.policies.count.RowCountPolicy,gobblin_py.transforms.quality.task.SchemaCompatibilityPolicy\n"
        "qualitychecker.task.policy.types=FAIL,OPTIONAL\ndata.quality.enforce.failure=false\n"
    ))
    result = run_local(job)
    assert result.returncode == 0, result.stdout + result.stderr
    assert ids(job.final) == [1, 3, 5, 7, 9]
    assert "task policy RowCountPolicy (FAIL): FAILED in 1 task(s)" in result.stdout
    assert "task policy SchemaCompatibilityPolicy (OPTIONAL): PASSED in 1 task(s)" in result.stdout
    [task] = task_states(job)
    assert task["gobblin.task.level.policy.result"] == "FAILED"
    assert task["qualitychecker.rows.expected"] == "10" and task["qualitychecker.rows.written"] == "5"


def test_schema_compatibility_policy_compares_with_the_previous_run(tmp_path):
    job = parquet_job(tmp_path, (
        "qualitychecker.task.policies=org.apache.gobblin.policies.schema.SchemaCompatibilityPolicy\n"
        "qualitychecker.task.policy.types=FAIL\n"
    ))
    assert run_local(job).returncode == 0
    pq.write_table(pa.table({"order_id": pa.array([11], pa.int64()), "amount": ["changed type"]}), job.data / "b.parquet")
    result = run_local(job)
    assert result.returncode == 1
    assert "SchemaCompatibilityPolicy" in result.stderr
    assert ids(job.final) == list(range(1, 11))
