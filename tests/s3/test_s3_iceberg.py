"""An Iceberg table whose warehouse is on S3 (the suite's S3 server): the job's fs.s3a.* keys reach pyiceberg's S3
file IO, the run's files are moved into the table's data folder in the bucket and added in one snapshot."""

from __future__ import annotations

from tests.support.cli import run_gpy_here
from tests.support.s3 import ACCESS_KEY, SECRET_KEY


def test_a_table_in_a_bucket_is_appended_once_per_run(tmp_path, s3_server, bucket):
    from pyiceberg.catalog import load_catalog

    data = tmp_path / "data"
    data.mkdir()
    (data / "a.csv").write_text("id,name\n1,a\n2,b\n")
    job = tmp_path / "orders.pull"
    job.write_text("".join(f"{k}={v}\n" for k, v in {
        "job.name": "Orders", "source.class": "FileBasedSource", "source.filebased.data.directory": str(data),
        "extract.namespace": "shop", "extract.table.name": "orders", "writer.output.format": "PARQUET",
        "data.publisher.type": "IcebergPublisher", "data.publisher.final.dir": f"s3://{bucket}/warehouse",
        "state.store.dir": str(tmp_path / "state"), "task.data.root.dir": str(tmp_path / "work")}.items())
        + s3_server.job_keys())
    first = run_gpy_here("run", str(job), "--engine", "local")
    assert first.returncode == 0, first.stdout + first.stderr
    (data / "b.csv").write_text("id,name\n3,c\n")
    assert run_gpy_here("run", str(job), "--engine", "local").returncode == 0

    catalog = load_catalog("gpy", type="sql", uri=f"sqlite:///{tmp_path}/state/iceberg_catalog.db",
                           **{"s3.endpoint": s3_server.endpoint, "s3.access-key-id": ACCESS_KEY,
                              "s3.secret-access-key": SECRET_KEY})
    table = catalog.load_table("shop.orders")
    assert table.location().startswith(f"s3://{bucket}/warehouse/")
    assert sorted(table.scan().to_arrow().column("id").to_pylist()) == [1, 2, 3]
    assert len(table.snapshots()) == 2
    files = s3_server.filesystem().find(f"{bucket}/warehouse/shop/orders/data")
    assert len([f for f in files if f.endswith(".parquet")]) == 2
