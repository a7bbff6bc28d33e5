"""A forked incremental job living on S3: its source files, staging, output, published files (Parquet and JSON
lines), state store, commit log and lock are all in a bucket of a real S3 API server."""

from __future__ import annotations

import io
import json

import pyarrow.json as pa_json
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from gobblin_py.cli import main
from gobblin_py.io import fs_settings
from gobblin_py.store import FsDatasetStateStore
from gobblin_py.store.sequencefile import SequenceFileReader
from tests.support.cli import run_gpy, run_gpy_here
from tests.support.s3 import SECRET_KEY

ROWS = 25


def put_csv(fs, path: str, first_id: int) -> None:
    rows = "\n".join(f"{first_id + i},{(first_id + i) * 1.5:.2f}" for i in range(ROWS))
    fs.pipe_file(path, f"order_id,amount\n{rows}\n".encode())


def ids(fs, paths: list[str], fmt: str) -> list[int]:
    out = []
    for path, data in sorted(fs.cat(paths).items()) if paths else []:
        table = pq.read_table(io.BytesIO(data)) if fmt == "parquet" else pa_json.read_json(io.BytesIO(data))
        out.extend(table.column("order_id").to_pylist())
    return sorted(out)


def published(fs, bucket: str, branch: str, ext: str) -> list[str]:
    return sorted(p for p in fs.find(f"{bucket}/published/{branch}") if p.endswith(ext))


@pytest.fixture
def job(tmp_path, s3_server, bucket):
    """The job file (the only local file, with branch 0 staging on local disk and branch 1 on S3)."""
    path = tmp_path / "orders.pull"
    path.write_text("\n".join([
        "job.name=S3Orders",
        "source.class=gobblin_py.connectors.files.filebased.FileBasedSource",
        f"source.filebased.data.directory=s3://{bucket}/incoming",
        "source.filebased.dataset.urn.level=subdirectory",
        "extract.namespace=shop",
        "converter.classes=gobblin_py.transforms.converters.cast.TypeCastConverter",
        "converter.cast.fields=order_id:int64",
        "fork.branches=2",
        "fork.branch.name.0=parquet",
        "fork.branch.name.1=jsonl",
        "writer.output.format.0=PARQUET",
        "writer.output.format.1=JSON",
        f"writer.staging.dir.0={tmp_path}/staging-local",
        f"writer.output.dir.0={tmp_path}/output-local",
        f"task.data.root.dir=s3://{bucket}/task-data",
        f"data.publisher.final.dir=s3://{bucket}/published",
        "writer.file.pathType=TABLENAME",
        f"state.store.dir=s3://{bucket}/state",
        "task.maxretries=0",
        s3_server.job_keys(),
    ]))
    yield path
    fs_settings.reset()  # the in-process Spark run applied the job's settings to this process


def test_forked_incremental_job_on_s3(job, s3_server, bucket, spark):
    fs = s3_server.filesystem()
    put_csv(fs, f"{bucket}/incoming/eu/day1.csv", 1)
    put_csv(fs, f"{bucket}/incoming/us/day1.csv", 101)

    # first run on Spark: its executors open S3 with the job's keys too
    first = CliRunner().invoke(main, ["run", str(job), "--engine", "spark", "--master", "local[2]"])
    assert first.exit_code == 0, first.output
    assert SECRET_KEY not in first.output
    expected = list(range(1, 1 + ROWS)) + list(range(101, 101 + ROWS))
    assert ids(fs, published(fs, bucket, "parquet", ".parquet"), "parquet") == expected
    assert ids(fs, published(fs, bucket, "jsonl", ".json"), "json") == expected
    before = json.loads(run_gpy_here("state", "show", str(job), "--json").stdout)
    assert {d["urn"] for d in before["datasets"]} == {"eu", "us"} and before["store"] == f"s3://{bucket}/state"

    # new data arrives; the second run (local engine, a separate process as cron runs it) pulls only that
    put_csv(fs, f"{bucket}/incoming/eu/day2.csv", 201)
    second = run_gpy_here("run", str(job), "--engine", "local")
    assert second.returncode == 0, second.stderr
    assert SECRET_KEY not in second.stdout + second.stderr
    expected += list(range(201, 201 + ROWS))
    assert ids(fs, published(fs, bucket, "parquet", ".parquet"), "parquet") == sorted(expected)
    assert ids(fs, published(fs, bucket, "jsonl", ".json"), "json") == sorted(expected)
    after = json.loads(run_gpy_here("state", "show", str(job), "--json").stdout)
    old = {d["urn"]: d for d in before["datasets"]}
    new = {d["urn"]: d for d in after["datasets"]}
    assert new["eu"]["job_id"] != old["eu"]["job_id"]  # eu's state moved to the second run
    assert [t["records_extracted"] for t in new["eu"]["tasks"]] == [ROWS]
    assert new["us"] == old["us"]  # nothing new for us: its state stays the first run's
    # the watermark moved on: the second run started where the first ended
    assert new["eu"]["tasks"][0]["low_watermark"] == old["eu"]["tasks"][0]["actual_high_watermark"]
    assert new["eu"]["tasks"][0]["actual_high_watermark"]["value"] >= new["eu"]["tasks"][0]["low_watermark"]["value"]

    # the state store is Gobblin's SequenceFiles, in the bucket; the commit log is empty and the lock released
    state_files = sorted(fs.find(f"{bucket}/state/S3Orders"))
    assert f"{bucket}/state/S3Orders/eu-current.jst" in state_files and len(state_files) == 5  # 2 current + 3 runs
    with fs.open(f"{bucket}/state/S3Orders/eu-current.jst", "rb") as stream:
        header = SequenceFileReader(stream, "eu-current.jst").header
    assert header.value_class.endswith("JobState$DatasetState")
    assert not [p for p in fs.find(f"{bucket}/state") if "_commit_sequences" in p]
    assert not fs.exists(f"{bucket}/state/S3Orders.lock")
    assert not fs.find(f"{bucket}/task-data")  # staging and task output of both runs are gone
    # the secret is in no stored state (only the job file holds it)
    store = FsDatasetStateStore(f"s3://{bucket}/state", storage_options=_options(s3_server))
    for urn in ("eu", "us"):
        for task in store.get_latest_dataset_state("S3Orders", urn).all_task_states():
            assert SECRET_KEY not in json.dumps(task.properties)

    third = run_gpy_here("run", str(job), "--engine", "local")
    assert third.returncode == 0 and "nothing new to pull" in third.stdout


def _options(server) -> dict:
    from tests.support.s3 import ACCESS_KEY

    return {"key": ACCESS_KEY, "secret": SECRET_KEY, "client_kwargs": {"endpoint_url": server.endpoint},
            "use_listings_cache": False}


def test_a_job_file_on_s3_with_its_folders_global_file(tmp_path, s3_server, bucket):
    fs = s3_server.filesystem()
    put_csv(fs, f"{bucket}/incoming/day1.csv", 1)
    fs.pipe_file(f"{bucket}/jobs/shop/shop.properties", b"extract.namespace=shop\ntask.maxretries=0\n")
    fs.pipe_file(f"{bucket}/jobs/shop/orders.pull", "\n".join([
        "job.name=RemoteOrders",
        "source.class=gobblin_py.connectors.files.filebased.FileBasedSource",
        f"source.filebased.data.directory=s3://{bucket}/incoming",
        f"task.data.root.dir=s3://{bucket}/task-data",
        f"data.publisher.final.dir=s3://{bucket}/published",
        "writer.file.pathType=NAMESPACE_TABLE",
        f"state.store.dir=s3://{bucket}/state",
        s3_server.job_keys(),
    ]).encode())
    url = f"s3://{bucket}/jobs/shop/orders.pull"
    env = {**s3_server.env(), "AWS_EC2_METADATA_DISABLED": "true"}  # reading the job file: the environment's keys

    result = run_gpy_here("run", url, "--engine", "local", env=env)
    assert result.returncode == 0, result.stderr
    # the folder's global file applied: extract.namespace=shop names the published folder
    files = [p for p in fs.find(f"{bucket}/published") if p.endswith(".parquet")]
    assert files and all(p.startswith(f"{bucket}/published/shop/") for p in files)
    assert ids(fs, files, "parquet") == list(range(1, 1 + ROWS))
    shown = run_gpy_here("state", "show", url, "--json", env=env)
    assert shown.returncode == 0 and json.loads(shown.stdout)["datasets"][0]["job"] == "RemoteOrders"
    assert run_gpy_here("lock", "show", url, env=env).stdout.strip() == f"s3://{bucket}/state/RemoteOrders.lock: free"

    # errors name the URL and line of the file that holds the key
    fs.pipe_file(f"{bucket}/jobs/shop/shop.properties", b"extract.namespace=shop\ntask.maxretries=many\n")
    bad = run_gpy_here("run", url, "--engine", "local", env=env)
    assert bad.returncode == 2
    assert bad.stderr.strip() == (f"gpy: error: s3://{bucket}/jobs/shop/shop.properties:2: key 'task.maxretries': "
                                  "'many': not a whole number; expected whole number (>= 0, <= 100)")
    missing = run_gpy_here("run", f"s3://{bucket}/jobs/shop/nothing.pull", env=env)
    assert missing.returncode == 2 and "job file not found" in missing.stderr
    no_keys = run_gpy(  # a new process: no filesystem cached with the keys above
        "run", url, env={"AWS_ENDPOINT_URL": s3_server.endpoint, "AWS_ACCESS_KEY_ID": "",
                         "AWS_SECRET_ACCESS_KEY": "", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
                         "AWS_CONFIG_FILE": "/nonexistent", "AWS_EC2_METADATA_DISABLED": "true"})
    assert no_keys.returncode == 2 and len(no_keys.stderr.strip().splitlines()) == 1
    assert "S3: Unable to locate credentials; set fs.s3a.access.key" in no_keys.stderr


def test_a_data_prefix_without_objects_is_named(tmp_path, s3_server, bucket):
    job = tmp_path / "empty.pull"
    job.write_text("\n".join([
        "job.name=Empty", "source.class=gobblin_py.connectors.files.filebased.FileBasedSource",
        f"source.filebased.data.directory=s3://{bucket}/nothing-here", f"task.data.root.dir=s3://{bucket}/task-data",
        f"data.publisher.final.dir=s3://{bucket}/published", f"state.store.dir=s3://{bucket}/state",
        s3_server.job_keys(),
    ]))
    result = run_gpy_here("run", str(job), "--engine", "local")
    assert result.returncode == 2
    assert (f"source.filebased.data.directory=s3://{bucket}/nothing-here: no such directory "
            "(no object has this prefix)") in result.stdout + result.stderr
    assert not s3_server.filesystem().exists(f"{bucket}/state/Empty.lock")  # released
