"""Requests that do not depend on one another go to S3 together, a bounded number at a time (``fs.s3a.threads.max``):
the lookups of a dataset's destinations before its commit is logged, and the uploads of its files, one step of
the commit each, which completes only once every upload has. An upload that fails fails the step naming its
object, after the others ran; the commit stays logged and the next run finishes it. Counted on the real client
with botocore's own events, against the session's S3 server."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from gobblin_py.cli import main
from gobblin_py.io import fs as fsutil
from gobblin_py.io import fs_settings
from gobblin_py.io.object_store import files_exist
from gobblin_py.io.rename_step import FsRenameStep
from gobblin_py.runtime.commit.commit_sequence import CommitSequence
from gobblin_py.sdk.commit import PublishConflictError
from gobblin_py.sdk.errors import GobblinPyError

FILES = 12


class InFlight:
    """The most requests of one operation the client had sent and not yet had answered at once."""

    def __init__(self, client, operation: str, under: str = "") -> None:
        self.now = self.most = self.sent = 0
        self.under = under  # only requests for keys below this prefix count
        self._lock = threading.Lock()
        client.meta.events.register(f"before-send.s3.{operation}", self._sent)
        client.meta.events.register(f"needs-retry.s3.{operation}", self._answered)

    def _counted(self, url: str) -> bool:
        return not self.under or f"/{self.under}" in url

    def _sent(self, request=None, **_) -> None:
        if request is not None and not self._counted(request.url):
            return
        with self._lock:
            self.now += 1
            self.sent += 1
            self.most = max(self.most, self.now)

    def _answered(self, request_dict=None, **_) -> None:
        if request_dict is not None and not self._counted(request_dict.get("url", "")):
            return
        with self._lock:
            self.now -= 1


@pytest.fixture
def s3(s3_server, bucket):
    """The job's S3 settings applied, with at most 4 requests of a step at once; the bucket's filesystem as gpy
    opens it (its client connected)."""
    keys = dict(line.split("=", 1) for line in s3_server.job_keys().splitlines() if line)
    fs_settings.apply({**keys, "fs.s3a.threads.max": "4"})
    fs, _ = fsutil.open_fs(f"s3://{bucket}/x")
    fs.connect()
    yield fs
    fs_settings.reset()


def moves(tmp_path: Path, bucket: str, prefix: str = "") -> list[FsRenameStep]:
    steps = []
    for i in range(FILES):
        source = tmp_path / f"part{i}.csv"
        source.write_text(f"id\n{i}\n")
        steps.append(FsRenameStep(str(source), f"s3://{bucket}/published/{prefix}part{i}.csv"))
    return steps


def test_uploads_of_datasets_committing_at_once_share_the_limit(tmp_path, s3, bucket):
    # each upload holds its file in memory while it is sent: the limit bounds the process, not one commit step,
    # whether a dataset's moves run alone or together
    uploads = InFlight(s3.s3, "PutObject")
    sequences = []
    for d in range(6):
        folder = tmp_path / f"d{d}"
        folder.mkdir()
        sequences.append(CommitSequence("Job", f"d{d}", "job_Job_1", moves(folder, bucket, prefix=f"d{d}/")[:d % 3 + 1]))
    start = threading.Barrier(len(sequences))

    def commit(sequence: CommitSequence) -> None:
        start.wait()
        sequence.execute(fresh=True)

    threads = [threading.Thread(target=commit, args=(sequence,)) for sequence in sequences]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert uploads.sent == sum(len(sequence.steps) for sequence in sequences) == 12
    assert 1 < uploads.most <= 4, uploads.most


def test_a_datasets_uploads_go_together_at_most_the_limit_at_once_and_its_boundaries_stay_in_order(tmp_path, s3,
                                                                                                   bucket):
    uploads = InFlight(s3.s3, "PutObject")
    steps = moves(tmp_path, bucket)
    seen: list[str] = []
    CommitSequence("Job", "d", "job_Job_1", steps).execute(on_step=seen.append, fresh=True)
    assert uploads.sent == FILES
    assert 1 < uploads.most <= 4, uploads.most
    assert seen == [f"d:step{i}:fs_rename" for i in range(FILES)]
    assert sorted(s3.find(f"{bucket}/published")) == sorted(f"{bucket}/published/part{i}.csv" for i in range(FILES))
    assert not list(tmp_path.glob("part*.csv"))  # every source removed once uploaded


def test_an_upload_that_fails_fails_the_step_naming_its_object_and_the_next_run_finishes_it(tmp_path, s3, bucket):
    steps = moves(tmp_path, bucket)
    s3.pipe_file(f"{bucket}/published/part5.csv", b"someone else's")
    sequence = CommitSequence("Job", "d", "job_Job_1", steps)
    seen: list[str] = []
    with pytest.raises(PublishConflictError, match=f"s3://{bucket}/published/part5.csv already exists"):
        sequence.execute(on_step=seen.append, fresh=True)
    assert seen == []  # the step did not complete: no boundary after it
    assert len(s3.find(f"{bucket}/published")) == FILES  # the others were uploaded meanwhile
    assert (tmp_path / "part5.csv").exists()
    s3.rm(f"{bucket}/published/part5.csv")  # a person removed the conflict: the logged commit is finished
    sequence.execute(on_step=seen.append)
    assert s3.cat_file(f"{bucket}/published/part5.csv") == b"id\n5\n"
    assert not list(tmp_path.glob("part*.csv"))


@pytest.mark.parametrize("files", [1, 3])
def test_an_upload_the_store_refuses_names_its_object_whether_alone_or_with_others(tmp_path, s3, bucket, files):
    """A dataset of one file is published by a step alone; its failure names the object as one of a group does."""
    steps = moves(tmp_path, f"{bucket}-gone")[:files]  # a bucket that does not exist
    first = f"cannot publish {steps[0].src} -> s3://{bucket}-gone/published/part0.csv: FileNotFoundError"
    for fresh in (True, False):  # the run that logged the commit, then the next one finishing it
        with pytest.raises(GobblinPyError, match=re.escape(first)):
            CommitSequence("Job", "d", "job_Job_1", steps).execute(fresh=fresh)
    assert (tmp_path / "part0.csv").read_text() == "id\n0\n"  # nothing lost


def test_the_lookups_of_many_destinations_go_together(s3, bucket):
    lookups = InFlight(s3.s3, "HeadObject")
    s3.pipe_file(f"{bucket}/there/3.csv", b"x")
    paths = [f"{bucket}/there/{i}.csv" for i in range(FILES)]
    assert files_exist(s3, paths) == [i == 3 for i in range(FILES)]
    assert lookups.sent == FILES and 1 < lookups.most <= 4, (lookups.sent, lookups.most)


def test_the_lookups_of_a_datasets_files_written_by_several_tasks_go_together(tmp_path, s3, s3_server, bucket):
    """Each task writes its files in a folder of its own: the dataset's lookups still go together, not a task's
    (the folder's owner marker, looked up before the run and claimed before the commit, is not the dataset's)."""
    lookups = InFlight(s3.s3, "HeadObject", under="published/shop/")
    (tmp_path / "data" / "d").mkdir(parents=True)
    for i in range(FILES):  # a task each
        (tmp_path / "data" / "d" / f"part{i}.csv").write_text(f"id\n{i}\n")
    job = tmp_path / "lookups.pull"
    job.write_text("\n".join([
        "job.name=Lookups", "source.class=gobblin_py.connectors.files.filebased.FileBasedSource",
        f"source.filebased.data.directory={tmp_path}/data", "source.filebased.dataset.urn.level=subdirectory",
        "extract.namespace=shop", "writer.output.format=CSV", f"writer.staging.dir={tmp_path}/staging",
        f"writer.output.dir={tmp_path}/output", f"data.publisher.final.dir=s3://{bucket}/published",
        f"state.store.dir={tmp_path}/state", "fs.s3a.threads.max=4", s3_server.job_keys()]))
    result = CliRunner().invoke(main, ["run", str(job), "--engine", "local"])
    assert result.exit_code == 0, result.output
    assert len(s3.find(f"{bucket}/published/shop")) == FILES  # and beside them the job's marker
    assert lookups.sent == FILES and 1 < lookups.most <= 4, (lookups.sent, lookups.most)


@pytest.mark.parametrize("keys,pool", [({}, 64), ({"fs.s3a.connection.maximum": "8"}, 8)])
def test_the_clients_connection_pool_holds_every_commit_threads_requests(s3_server, bucket, keys, pool):
    """botocore keeps 10 connections by default, fewer than a run's 20 commit threads."""
    job = dict(line.split("=", 1) for line in s3_server.job_keys().splitlines() if line)
    fs_settings.apply({**job, **keys})
    try:
        fs, _ = fsutil.open_fs(f"s3://{bucket}/x")
        fs.connect()
        assert fs.s3.meta.config.max_pool_connections == pool
    finally:
        fs_settings.reset()
