"""Where the publisher puts data: writer.file.pathType=NAMESPACE_TABLE, data.publisher.appendExtractToFinalDir=false,
and data.publisher.replace.final.dir (AT_LEAST_ONCE delivery only; refused otherwise, see the bad-configuration
corpus), through the real CLI."""

from __future__ import annotations

from tests.support.jobs import Job, run_local, write_csv


def parquet_files(job: Job) -> list[str]:
    return sorted(p.relative_to(job.final).as_posix() for p in job.final.rglob("*.parquet"))


def test_namespace_table_publishes_under_the_namespace_as_folders_then_the_table(tmp_path):
    job = Job(tmp_path, extra="writer.file.pathType=NAMESPACE_TABLE\nextract.namespace=shop.eu\n")
    write_csv(job.data / "a.csv", 1)
    assert run_local(job).returncode == 0
    write_csv(job.data / "b.csv", 101)
    assert run_local(job).returncode == 0
    files = parquet_files(job)
    assert len(files) == 2 and all(f.startswith("shop/eu/orders/part.task_Orders_") for f in files)
    assert job.published_ids() == list(range(1, 41)) + list(range(101, 141))


def test_append_extract_false_publishes_straight_into_the_final_folder(tmp_path):
    job = Job(tmp_path, extra="data.publisher.appendExtractToFinalDir=false\n")
    write_csv(job.data / "a.csv", 1)
    assert run_local(job).returncode == 0
    [name] = parquet_files(job)
    assert "/" not in name and name.startswith("part.task_Orders_")
    assert job.published_ids() == list(range(1, 41))


def test_replace_final_dir_empties_the_final_folder_before_publishing(tmp_path):
    job = Job(tmp_path, extra=("gobblin.runtime.delivery.semantics=AT_LEAST_ONCE\n"
                               "data.publisher.replace.final.dir=true\nwriter.file.pathType=TABLENAME\n"))
    write_csv(job.data / "a.csv", 1)
    assert run_local(job).returncode == 0
    assert job.published_ids() == list(range(1, 41))
    (job.final / "orders" / "stray.txt").write_text("left by someone")
    write_csv(job.data / "b.csv", 101)
    assert run_local(job).returncode == 0
    assert job.published_ids() == list(range(101, 141))  # the earlier run's files are gone
    assert not (job.final / "orders" / "stray.txt").exists()
    assert [f.split("/")[0] for f in parquet_files(job)] == ["orders"]

