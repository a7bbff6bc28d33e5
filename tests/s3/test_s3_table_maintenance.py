"""Iceberg table maintenance on a table in a bucket (the suite's S3 server): the small files rewritten in one
snapshot, old snapshots expired, and the objects no snapshot references deleted once older than the retention,
through the job's fs.s3a.* keys; every object the table reads stays."""

from __future__ import annotations

from tests.support.cli import run_gpy_here
from tests.support.s3 import ACCESS_KEY, SECRET_KEY


def test_orphans_in_a_bucket_past_the_retention_are_deleted_and_the_tables_files_kept(tmp_path, s3_server, bucket):
    from pyiceberg.catalog import load_catalog

    data = tmp_path / "data"
    data.mkdir()
    keys = {"job.name": "Orders", "extract.namespace": "shop", "extract.table.name": "orders",
            "data.publisher.final.dir": f"s3://{bucket}/warehouse", "state.store.dir": str(tmp_path / "state")}
    job = tmp_path / "orders.pull"
    job.write_text("".join(f"{k}={v}\n" for k, v in {
        **keys, "source.class": "FileBasedSource", "source.filebased.data.directory": str(data),
        "writer.output.format": "PARQUET", "data.publisher.type": "IcebergPublisher",
        "task.data.root.dir": str(tmp_path / "work")}.items()) + s3_server.job_keys())
    for n in range(2):
        (data / f"{n}.csv").write_text(f"id,name\n{n * 2},a\n{n * 2 + 1},b\n")
        assert run_gpy_here("run", str(job), "--engine", "local").returncode == 0
    fs = s3_server.filesystem()
    stray = f"{bucket}/warehouse/shop/orders/data/00000-0-crashed-writer.parquet"
    fs.pipe(stray, b"PAR1")
    sibling = f"{bucket}/warehouse/shop/orders_v2/data/another-tables-file.parquet"  # its name starts as the table's
    fs.pipe(sibling, b"PAR1")

    maintain = tmp_path / "maintain.pull"
    maintain.write_text("".join(f"{k}={v}\n" for k, v in {**keys, "job.class": "IcebergMaintenanceJob"}.items())
                        + s3_server.job_keys())
    kept = run_gpy_here("run", str(maintain), "--dry-run")  # the default week: the stray object is too young
    assert kept.returncode == 0, kept.stdout + kept.stderr
    assert "0 file(s) no snapshot references, older than 168 h" in kept.stdout and fs.exists(stray)

    maintain.write_text(maintain.read_text() + "table.maintenance.retention.hours=0\n"
                        "table.maintenance.enforce.retention=false\n")
    done = run_gpy_here("run", str(maintain))
    assert done.returncode == 0, done.stdout + done.stderr
    assert fs.exists(sibling) and "orders_v2" not in done.stdout
    assert f"deleted  s3://{stray}" in done.stdout and "rewrote 2 small file(s) of shop.orders into 1" in done.stdout

    catalog = load_catalog("gpy", type="sql", uri=f"sqlite:///{tmp_path}/state/iceberg_catalog.db",
                           **{"s3.endpoint": s3_server.endpoint, "s3.access-key-id": ACCESS_KEY,
                              "s3.secret-access-key": SECRET_KEY})
    table = catalog.load_table("shop.orders")
    assert sorted(table.scan().to_arrow().column("id").to_pylist()) == [0, 1, 2, 3]
    assert len(table.snapshots()) == 1
    data_objects = {f"s3://{p}" for p in fs.find(f"{bucket}/warehouse/shop/orders/data")}
    assert data_objects == set(table.inspect.files().column("file_path").to_pylist())  # one file, the new one
    assert fs.exists(table.metadata_location.removeprefix("s3://"))
    for snapshot in table.snapshots():
        assert fs.exists(snapshot.manifest_list.removeprefix("s3://"))
