"""What a run with its state and published data on S3 asks of the store, counted in the server's own request log.

A dataset's commit is bound by requests, not bytes: each is a round trip. A dataset of one file costs one look
at its destination before anything is logged (a file there is a conflict), the upload itself and its two state
files — no look at its own commit log (the run's one listing of the log answers that), no listing beside a
lookup, no second look at the destination just before the upload (the upload is conditional), no read of the
published file back (the upload sent the very local file whose records were counted, unchanged while it was
sent). The next run reads each dataset's previous state with one request.
"""

from __future__ import annotations

import io
import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gobblin_py.connectors.files.publish_check import PublishedFile, PublishedRecordsStep
from gobblin_py.formats.counting import count_records
from gobblin_py.io import fs_settings
from gobblin_py.io.fs import local_identity
from gobblin_py.io.rename_step import FsRenameStep
from gobblin_py.sdk.commit import PublishConflictError
from gobblin_py.sdk.errors import RecordsLost, StateStoreError
from gobblin_py.store.store import FsDatasetStateStore
from tests.support.cli import run_gpy
from tests.support.states import make_state

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


def _of_dataset(requests: list[tuple[str, str, int]], name: str) -> list[tuple[str, str, int]]:
    """The requests that name one dataset's keys (its published file, state files or commit log)."""
    return [r for r in requests if re.search(rf"(/|prefix=[^&]*/){name}(/|-|\.json)", r[1])]


def test_a_dataset_costs_one_lookup_its_upload_and_its_two_state_files(one_run):
    bucket, batched, requests = one_run
    for name in DATASETS:
        asked = [(method, re.sub(r"job_Scale_\d+|task_Scale_\d+_\d+_\d+", "ID", path), status)
                 for method, path, status in _of_dataset(requests, name)]
        published = f"/{bucket}/published/{name}/part.ID.parquet"
        # its commit logged in a batch file with others', or in a file of its own (deleted with the others')
        log = [] if batched else [("PUT", f"/{bucket}/state/_commit_sequences/Scale/{name}.json", 200)]
        assert asked == [
            ("HEAD", published, 404),  # before anything is logged: a file there would be a conflict
            *log,
            ("PUT", published, 200),  # the upload, conditional: it never replaces a file
            # no read of its footer: the upload sent the local file counted before, unchanged meanwhile
            ("PUT", f"/{bucket}/state/Scale/{name}-ID.jst", 200),
            ("PUT", f"/{bucket}/state/Scale/{name}-current.jst", 200),
        ], asked


def test_no_dataset_has_its_commit_log_looked_up(one_run):
    _, batched, requests = one_run
    logs = [r for r in requests if "_commit_sequences/" in r[1] and "list-type=2" not in r[1]]
    # each log file is written (PUT) and deleted (in a bulk delete, POST), never looked up (HEAD) first
    assert {method for method, _, _ in logs} == {"PUT"}, logs
    assert len(logs) == (2 if batched else len(DATASETS))
    listings = [r for r in requests if "list-type=2" in r[1] and "_commit_sequences" in r[1]]
    assert 0 < len(listings) <= 4, listings  # the run's listings of the log, whatever the number of datasets


def test_a_file_already_at_a_destination_on_s3_fails_its_dataset_before_anything_moves(tmp_path, s3_server, bucket):
    fs = s3_server.filesystem()
    job = write_job(tmp_path, bucket, s3_server, extra="writer.file.name=data.parquet")
    fs.pipe_file(f"{bucket}/published/d1/data.parquet", b"someone else's")
    done = run_gpy("run", str(job), "--engine", "local")
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"{bucket}/published/d1/data.parquet already exists" in done.stdout
    assert fs.cat_file(f"{bucket}/published/d1/data.parquet") == b"someone else's"
    assert sorted(fs.find(f"{bucket}/published")) == [f"{bucket}/published/_gpy_owner.marker",
                                                      f"{bucket}/published/_gpy_published.Scale.marker"] + [
        f"{bucket}/published/{n}/data.parquet" for n in DATASETS]  # d0 and d2 published, and their job's markers
    assert not fs.find(f"{bucket}/state/_commit_sequences")  # nothing left logged: d1 logged nothing
    shown = json.loads(run_gpy("state", "show", str(job), "--json").stdout)
    tasks = {d["urn"]: d["tasks"][0] for d in shown["datasets"]}
    assert tasks["d1"]["actual_high_watermark"] == tasks["d1"]["low_watermark"]  # its watermark did not move
    assert tasks["d0"]["actual_high_watermark"] != tasks["d0"]["low_watermark"]


def test_an_upload_onto_a_file_that_appeared_since_the_plan_is_refused(tmp_path, s3_server, bucket):
    fs = s3_server.filesystem()
    source = tmp_path / "part.parquet"
    source.write_bytes(b"the run's file")
    fs.pipe_file(f"{bucket}/published/part.parquet", b"someone else's")
    step = FsRenameStep(str(source), f"s3://{bucket}/published/part.parquet")
    fs_settings.apply(dict(line.split("=", 1) for line in s3_server.job_keys().splitlines() if line))
    try:
        with pytest.raises(PublishConflictError, match="already exists"):
            step.execute(fresh=True)  # a fresh commit: the plan found nothing there, the upload finds the file
    finally:
        fs_settings.reset()
    assert fs.cat_file(f"{bucket}/published/part.parquet") == b"someone else's"
    assert source.read_bytes() == b"the run's file"  # kept: nothing was published


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
    with pytest.raises(pa.ArrowInvalid, match="(?i)parquet"):
        count_records(fs, f"{bucket}/empty.parquet")
    with pytest.raises(FileNotFoundError):
        count_records(fs, f"{bucket}/missing.parquet")


def test_every_datasets_previous_state_is_one_read_of_its_current_file(s3_server, bucket):
    store = FsDatasetStateStore(f"s3://{bucket}/state")
    store.fs = s3_server.filesystem()
    for i, urn in enumerate(("a", "b", "c", "d")):
        store.persist_dataset_state(make_state(urn, job_id=f"job_Pull_{1000 + i}", high=10 + i), urn)
    store.persist_dataset_state(make_state("b", job_id="job_Pull_2000", high=99), "b")  # b's newer run
    start = s3_server.log.stat().st_size
    latest = store.get_latest_dataset_states_by_urns("Pull")
    assert {urn: s.job_id for urn, s in latest.items()} == {"a": "job_Pull_1000", "b": "job_Pull_2000",
                                                             "c": "job_Pull_1002", "d": "job_Pull_1003"}
    asked = requests_since(s3_server.log, start)
    # one listing of the job's folder, then one GET of each current file (no lookup of its size first)
    assert sorted((m, p.rsplit("/", 1)[-1], s) for m, p, s in asked if "list-type=2" not in p) == [
        ("GET", f"{urn}-current.jst", 206) for urn in "abcd"], asked
    assert len([r for r in asked if "list-type=2" in r[1]]) <= 2, asked
    store.fs.rm(f"{bucket}/state/Pull/c-current.jst")  # gone between the listing and the read: named
    store.fs.invalidate_cache()
    real_ls, listed = store.fs.ls, []

    def ls_with_c(path, detail=True, **kwargs):
        entries = real_ls(path, detail=detail, **kwargs)
        listed.append(path)
        extra = {"name": f"{bucket}/state/Pull/c-current.jst", "type": "file", "size": 1}
        return [*entries, extra if detail else extra["name"]]

    store.fs.ls = ls_with_c
    with pytest.raises(StateStoreError, match=f"s3://{bucket}/state/Pull/c-current.jst: no such state file"):
        store.get_latest_dataset_states_by_urns("Pull")
    assert listed


def test_an_upload_counts_as_read_back_only_when_it_sent_the_very_file_counted(tmp_path, s3_server, bucket):
    """The commit that uploads a local file the publisher counted takes that count for the published file (the
    upload sent those bytes: the file was unchanged while it was sent); a file changed after it was counted, and
    every file of a commit a later run finishes, is read back from the store."""
    fs_settings.apply(dict(line.split("=", 1) for line in s3_server.job_keys().splitlines() if line))
    try:
        same, changed = tmp_path / "same.parquet", tmp_path / "changed.parquet"
        pq.write_table(pa.table({"id": [1, 2, 3]}), same)
        pq.write_table(pa.table({"id": [1, 2, 3]}), changed)
        counted = {path: local_identity(str(path)) for path in (same, changed)}
        pq.write_table(pa.table({"id": [9]}), changed)  # changed after it was counted: one record now
        files = []
        for path in (same, changed):
            step = FsRenameStep(str(path), f"s3://{bucket}/published/{path.name}")
            step.execute(fresh=True)
            files.append(PublishedFile(step.dst, None, 3, counted[path], moved_by=step))
        start = s3_server.log.stat().st_size
        PublishedRecordsStep("d", files[:1]).execute(fresh=True)
        assert requests_since(s3_server.log, start) == []  # the upload sent what was counted: not read back
        with pytest.raises(RecordsLost, match="changed.parquet holds 1 record, not 3"):
            PublishedRecordsStep("d", files).execute(fresh=True)
        assert [(m, p.rsplit("/", 1)[-1]) for m, p, _ in requests_since(s3_server.log, start)] == [
            ("GET", "changed.parquet")]  # only the changed file is read back
        start = s3_server.log.stat().st_size
        PublishedRecordsStep("d", files[:1]).execute(fresh=False)  # a later run finishing the commit reads it
        assert [(m, p.rsplit("/", 1)[-1]) for m, p, _ in requests_since(s3_server.log, start)] == [
            ("GET", "same.parquet")]
    finally:
        fs_settings.reset()
