"""What a run with its state and published data on S3 asks of the store, counted in the server's own request log.

A dataset's commit is bound by requests, not bytes: each is a round trip. No dataset's own commit log is looked
up: the run's one listing of the log answers that. A published Parquet file's records are counted from its end,
read in one request.
"""

from __future__ import annotations

import io
import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gobblin_py.formats.counting import count_records
from tests.conftest import run_gpy

DATASETS = ("d0", "d1", "d2")


def requests_since(log: Path, start: int) -> list[tuple[str, str, int]]:
    """``(method, path with query, status)`` of every S3 request the server logged from byte ``start`` on."""
    found = []
    with open(log, "rb") as handle:
        handle.seek(start)
        text = handle.read().decode(errors="replace")
    for line in text.splitlines():
        parts = re.sub(r"\x1b\[[0-9;]*m", "", line).split('"')
        if len(parts) >= 3 and " " in parts[1] and "/moto-api" not in parts[1]:
            method, path = parts[1].split(" ")[:2]
            found.append((method, path, int(parts[2].split()[0])))
    return found


def write_job(root: Path, bucket: str, server, extra: str = "") -> Path:
    """One one-row CSV file per dataset folder on local disk, staged locally; state and published data on S3."""
    for i, name in enumerate(DATASETS):
        (root / "data" / name).mkdir(parents=True, exist_ok=True)
        (root / "data" / name / "part.csv").write_text(f"id,name\n{i},row{i}\n")
    job = root / "scale.pull"
    job.write_text("\n".join([
        "job.name=Scale",
        "source.class=gobblin_py.connectors.files.filebased.FileBasedSource",
        f"source.filebased.data.directory={root}/data",
        "source.filebased.dataset.urn.level=subdirectory",
        "extract.namespace=scale",
        f"writer.staging.dir={root}/staging",
        f"writer.output.dir={root}/output",
        f"data.publisher.final.dir=s3://{bucket}/published",
        f"state.store.dir=s3://{bucket}/state",
        "writer.file.pathType=TABLENAME",
        "task.maxretries=0",
        extra,
        server.job_keys(),
    ]))
    return job


@pytest.fixture(scope="module", params=["own-logs", "batched"])
def one_run(request, tmp_path_factory, s3_server) -> Iterator[tuple[str, bool, list[tuple[str, str, int]]]]:
    """A first run of three one-row datasets; its bucket, whether its commits were logged in batches (as a run of
    many datasets logs them) rather than each in a file of its own, and the requests it made."""
    fs = s3_server.filesystem()
    bucket = f"gpy-{uuid.uuid4().hex[:12]}"
    fs.mkdir(bucket)
    batched = request.param == "batched"
    # more datasets than commit threads: each thread logs its datasets' commits in one batch file
    job = write_job(tmp_path_factory.mktemp("requests"), bucket, s3_server,
                    extra="job.commit.parallelCommits=2" if batched else "")
    start = s3_server.log.stat().st_size
    done = run_gpy("run", str(job), "--engine", "local")
    assert done.returncode == 0, done.stdout + done.stderr
    yield bucket, batched, requests_since(s3_server.log, start)
    fs.rm(bucket, recursive=True)


def test_no_dataset_has_its_commit_log_looked_up(one_run):
    _, batched, requests = one_run
    logs = [r for r in requests if "_commit_sequences/" in r[1] and "list-type=2" not in r[1]]
    # each log file is written (PUT) and deleted (in a bulk delete, POST), never looked up (HEAD) first
    assert {method for method, _, _ in logs} == {"PUT"}, logs
    assert len(logs) == (2 if batched else len(DATASETS))
    listings = [r for r in requests if "list-type=2" in r[1] and "_commit_sequences" in r[1]]
    assert 0 < len(listings) <= 4, listings  # the run's listings of the log, whatever the number of datasets


@pytest.mark.parametrize("columns,reads", [(2, 1), (1000, 2)])
def test_a_parquet_file_on_s3_is_counted_from_its_end_in_one_read(s3_server, bucket, columns, reads):
    fs = s3_server.filesystem()
    data = io.BytesIO()
    pq.write_table(pa.table({f"c{i}": [1, 2, 3] for i in range(columns)}), data)
    fs.pipe_file(f"{bucket}/part.parquet", data.getvalue())
    start = s3_server.log.stat().st_size
    assert count_records(fs, f"{bucket}/part.parquet") == 3
    # a ranged GET of its last 64 KiB, without a lookup of its size; a footer longer than that (a thousand
    # columns) takes a second one
    assert [(method, status) for method, _, status in requests_since(s3_server.log, start)] == [("GET", 206)] * reads
    fs.pipe_file(f"{bucket}/empty.parquet", b"")
    with pytest.raises(Exception, match="(?i)parquet"):
        count_records(fs, f"{bucket}/empty.parquet")
    with pytest.raises(FileNotFoundError):
        count_records(fs, f"{bucket}/missing.parquet")
