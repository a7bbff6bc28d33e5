"""Copy jobs run through the CLI: a glob of datasets copied byte for byte, a rerun that copies nothing, a job
refused before any work, and archives unpacked exactly once however the run is killed during its commit."""

from __future__ import annotations

import gzip
import os
import signal
from pathlib import Path

import pytest

from tests.copy.files import LOG_ENTRIES, log_data_tar_gz, tar_bytes, write
from tests.support.cli import run_gpy
from tests.support.copy_jobs import job_file, published, run


def leftovers(root: Path) -> list[str]:
    return [str(p.relative_to(root)) for folder in ("staging", "output") if (root / folder).exists()
            for p in (root / folder).rglob("*") if p.is_file()]


def test_a_glob_of_datasets_is_copied_byte_for_byte_and_a_rerun_copies_nothing(tmp_path):
    write(tmp_path / "logs" / "eu" / "2024" / "a.log", b"a" * 10_000)
    zipped = gzip.compress(b"kept compressed")
    write(tmp_path / "logs" / "eu" / "b.log.gz", zipped)
    write(tmp_path / "logs" / "us" / "c.log", b"c")
    write(tmp_path / "logs" / "tmp" / "d.log", b"d")
    job = job_file(tmp_path, tmp_path / "logs" / "*", "FileAwareInputStreamDataWriterBuilder",
                   **{"gobblin.dataset.blacklist": "/tmp$", "gobblin.copy.binPacking.maxSizePerBin": "1MB"})
    result = run(job)
    assert "dataset eu: COMMITTED" in result.stdout and "dataset us: COMMITTED" in result.stdout
    assert published(tmp_path) == {"eu/2024/a.log": b"a" * 10_000, "eu/b.log.gz": zipped,
                                   "us/c.log": b"c"}
    assert leftovers(tmp_path) == []
    assert "nothing new to pull" in run(job).stdout
    write(tmp_path / "logs" / "us" / "e.log", b"e")  # a new file: only it is copied
    run(job)
    assert published(tmp_path)["us/e.log"] == b"e" and len(published(tmp_path)) == 4


def test_a_job_with_a_key_it_would_ignore_is_refused_before_any_work(tmp_path):
    write(tmp_path / "data" / "a.txt", b"a")
    job = job_file(tmp_path, tmp_path / "data", "FileAwareInputStreamDataWriterBuilder",
                   **{"gobblin.copy.recursive.delete": "true"})
    result = run(job, expect=2)
    assert "gobblin.copy.recursive.delete" in result.stderr and "not supported" in result.stderr
    assert not (tmp_path / "publish").exists()


def archives_job(root: Path) -> Path:
    log_data_tar_gz(root / "data" / "LogData.tar.gz")
    write(root / "data" / "more.tgz", gzip.compress(tar_bytes({"more/x.txt": b"x", "more/y/z.txt": b"z"},
                                                               folders=["more/"])))
    return job_file(root, root / "data", "TarArchiveInputStreamDataWriterBuilder", "UnGzipConverter")


EXPECTED = {**LOG_ENTRIES, "more/x.txt": b"x", "more/y/z.txt": b"z"}


def test_archives_are_unpacked_once_wherever_the_commit_is_killed(tmp_path):
    killed_at = []
    for boundary in range(1, 40):
        root = tmp_path / str(boundary)
        root.mkdir()
        job = archives_job(root)
        crash = run_gpy("run", str(job), "--engine", "local", env={"GPY_TEST_CRASH_AT_BOUNDARY": str(boundary)})
        if crash.returncode != -signal.SIGKILL:
            assert crash.returncode == 0, crash.stdout + crash.stderr
            break  # the run passed every boundary: all were tried
        killed_at.append(boundary)
        run(job)  # finishes the commit the killed run logged, or copies again what it had not committed
        assert published(root) == EXPECTED, boundary
        assert "nothing new to pull" in run(job).stdout, boundary
        assert leftovers(root) == [], boundary
    assert len(killed_at) >= 3 + len(EXPECTED)  # logged, each move, the state, done: every one was a kill point


def test_a_changed_archive_whose_files_are_published_fails_rather_than_overwrite(tmp_path):
    job = archives_job(tmp_path)
    run(job)
    os.utime(tmp_path / "data" / "more.tgz", (2_000_000_000, 2_000_000_000))
    result = run(job, expect=1)
    assert "more/x.txt already exists (gpy never overwrites published data)" in result.stdout
    assert published(tmp_path) == EXPECTED


@pytest.mark.parametrize("phase", ["planning:1:0", "tasks:1:0", "tasks:1:0.05", "commit.log:1:0"])
def test_a_run_killed_while_planning_copying_or_logging_leaves_nothing_half_done(tmp_path, phase):
    job = archives_job(tmp_path)
    crash = run_gpy("run", str(job), "--engine", "local", env={"GPY_TEST_KILL_IN_PHASE": phase})
    assert crash.returncode == -signal.SIGKILL, crash.stdout + crash.stderr
    assert set(published(tmp_path)) <= set(EXPECTED)
    run(job)
    assert published(tmp_path) == EXPECTED and leftovers(tmp_path) == []
    assert "nothing new to pull" in run(job).stdout
