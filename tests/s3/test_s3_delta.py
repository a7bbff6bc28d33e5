"""A job publishing into a Delta table on S3 (the suite's moto server): delta-rs reaches the bucket with the job's
own fs.s3a.* keys, the task files move into the table's folder there, and each run commits one version."""

from __future__ import annotations

from tests.support.cli import run_gpy_here
from tests.support.s3 import ACCESS_KEY, SECRET_KEY


def test_a_delta_table_on_s3_takes_each_run_in_one_version(tmp_path, s3_server, bucket):
    fs = s3_server.filesystem()
    fs.pipe_file(f"{bucket}/incoming/a.csv", b"order_id,amount\n1,1.5\n2,2.5\n")
    path = tmp_path / "orders.pull"
    path.write_text("\n".join([
        "job.name=S3Delta", "source.class=FileBasedSource", f"source.filebased.data.directory=s3://{bucket}/incoming",
        "source.filebased.schema.change=allow", "extract.namespace=shop", "extract.table.name=orders",
        "writer.output.format=PARQUET", "data.publisher.type=DeltaPublisher",
        f"data.publisher.final.dir=s3a://{bucket}/lake", f"task.data.root.dir={tmp_path}/work",
        f"state.store.dir={tmp_path}/state", s3_server.job_keys()]))
    for _ in range(2):
        result = run_gpy_here("run", str(path), "--engine", "local")
        assert result.returncode == 0, result.stdout + result.stderr
        fs.pipe_file(f"{bucket}/incoming/b.csv", b"order_id,amount,country\n3,3.5,FR\n")
    storage = {"AWS_ENDPOINT_URL": s3_server.endpoint, "AWS_ACCESS_KEY_ID": ACCESS_KEY,
               "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "AWS_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true"}
    from deltalake import DeltaTable

    table = DeltaTable(f"s3://{bucket}/lake/shop/orders", storage_options=storage)
    assert [c["operation"] for c in reversed(table.history())] == ["CREATE TABLE", "ADD COLUMN", "WRITE"]
    from gobblin_py.connectors.delta.table import app_id, state_store_of
    from gobblin_py.connectors.tables.publisher import RunIdentity

    app = app_id(RunIdentity("S3Delta", "", "", ""), 1, 0, state_store_of({"state.store.dir": f"{tmp_path}/state"}))
    assert table.transaction_version(app) == 2
    rows = sorted(table.to_pyarrow_table().to_pylist(), key=lambda r: r["order_id"])
    assert rows == [{"order_id": 1, "amount": 1.5, "country": None}, {"order_id": 2, "amount": 2.5, "country": None},
                    {"order_id": 3, "amount": 3.5, "country": "FR"}]
    import polars as pl

    assert sorted(pl.read_delta(f"s3://{bucket}/lake/shop/orders", storage_options=storage)["order_id"]) == [1, 2, 3]
    assert SECRET_KEY not in str(table.history())  # the credentials stay out of the table's log


def test_a_store_delta_rs_cannot_reach_fails_the_run_naming_the_table_and_the_next_run_publishes(tmp_path, s3_server,
                                                                                                  bucket):
    fs = s3_server.filesystem()
    path = tmp_path / "orders.pull"
    keys = ["job.name=S3Down", "source.class=FileBasedSource", f"source.filebased.data.directory={tmp_path}/in",
            "extract.namespace=shop", "extract.table.name=orders", "writer.output.format=PARQUET",
            "data.publisher.type=DeltaPublisher", f"data.publisher.final.dir=s3://{bucket}/lake",
            f"task.data.root.dir={tmp_path}/work", f"state.store.dir={tmp_path}/state", s3_server.job_keys()]
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.csv").write_text("order_id\n1\n2\n")
    # delta-rs alone is sent to a closed port (its own storage options win over the fs.s3a.* keys)
    path.write_text("\n".join([*keys, "delta.storage.AWS_ENDPOINT_URL=http://127.0.0.1:9",
                               "delta.storage.max_retries=1"]))
    failed = run_gpy_here("run", str(path), "--engine", "local")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert f"Delta table s3://{bucket}/lake/shop/orders: cannot read it" in failed.stdout + failed.stderr
    assert "Connection refused" in failed.stdout + failed.stderr
    assert not fs.exists(f"{bucket}/lake")  # nothing published
    path.write_text("\n".join(keys))
    done = run_gpy_here("run", str(path), "--engine", "local")
    assert done.returncode == 0, done.stdout + done.stderr  # the watermark was kept: the file comes now
    storage = {"AWS_ENDPOINT_URL": s3_server.endpoint, "AWS_ACCESS_KEY_ID": ACCESS_KEY,
               "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "AWS_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true"}
    from deltalake import DeltaTable

    assert DeltaTable(f"s3://{bucket}/lake/shop/orders", storage_options=storage).to_pyarrow_table().num_rows == 2
