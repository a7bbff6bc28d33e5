"""Copy jobs run through the CLI on hostile inputs: links that lead out of a source or out of the final folder,
a destination inside its own source, file names that are not UTF-8, a full disk."""

from __future__ import annotations

import os

from tests.copy.files import full_disk, write
from tests.support.cli import run_gpy
from tests.support.copy_jobs import job_file, published, run


def test_a_symlinked_dataset_is_not_copied(tmp_path):
    write(tmp_path / "src" / "a" / "x.txt", b"a")
    write(tmp_path / "etc-secret" / "pw", b"hunter2")
    os.symlink(tmp_path / "etc-secret", tmp_path / "src" / "evil")  # ln -s /etc/secret src/evil
    job = job_file(tmp_path, tmp_path / "src" / "*", "FileAwareInputStreamDataWriterBuilder")
    result = run(job)
    assert published(tmp_path) == {"a/x.txt": b"a"}
    assert "copy_skipped_linked_datasets" in result.stderr and "evil" not in result.stdout


def test_a_link_in_the_final_dir_leading_outside_fails_the_dataset_naming_it(tmp_path):
    write(tmp_path / "src" / "a" / "x.txt", b"a")
    write(tmp_path / "src" / "b" / "y.txt", b"b")
    write(tmp_path / "outside" / "x.txt", b"A")  # what is there is no reason to skip the file, either
    (tmp_path / "publish").mkdir()
    os.symlink(tmp_path / "outside", tmp_path / "publish" / "a")
    job = job_file(tmp_path, tmp_path / "src" / "*", "FileAwareInputStreamDataWriterBuilder")
    result = run(job, expect=2)  # a retry cannot help: the exit code of a usage error
    assert "dataset a: FAILED" in result.stdout and "dataset b: COMMITTED" in result.stdout
    assert f"{tmp_path}/publish/a/x.txt leads through a symbolic link" in result.stdout
    assert [p.name for p in (tmp_path / "outside").iterdir()] == ["x.txt"] and published(tmp_path) == {"b/y.txt": b"b"}
    assert (tmp_path / "outside" / "x.txt").read_bytes() == b"A"


def test_a_final_dir_inside_its_source_is_refused_by_validate_and_run(tmp_path):
    write(tmp_path / "src" / "a.txt", b"a")
    job = job_file(tmp_path, str(tmp_path / "src") + "/", "FileAwareInputStreamDataWriterBuilder",
                   **{"data.publisher.final.dir": str(tmp_path / "src" / "copy")})
    checked = run_gpy("validate", str(job))
    assert checked.returncode == 2, checked.stdout + checked.stderr
    assert f"{tmp_path}/src/copy lies inside" in checked.stdout + checked.stderr
    for _ in range(3):
        result = run(job, expect=2)
        assert f"{tmp_path}/src/copy lies inside" in result.stderr and f"{tmp_path}/src/" in result.stderr
    assert [p.name for p in (tmp_path / "src").iterdir()] == ["a.txt"]


def test_a_file_name_that_is_not_utf8_is_skipped_naming_it_and_the_rest_is_copied_on_every_run(tmp_path):
    write(tmp_path / "src" / "a" / "ok.txt", b"ok")
    bad = os.fsencode(tmp_path / "src" / "a") + b"/bad\xff.txt"
    with open(bad, "wb") as out:
        out.write(b"x")
    job = job_file(tmp_path, tmp_path / "src" / "*", "FileAwareInputStreamDataWriterBuilder")
    for _ in range(2):
        result = run(job)
        assert "copy_skipped_unencodable_names" in result.stderr and "bad\\\\xff.txt" in result.stderr
        assert published(tmp_path) == {"a/ok.txt": b"ok"}


def test_a_full_disk_fails_the_dataset_naming_the_file_and_its_destination_and_a_rerun_copies_it(tmp_path):
    write(tmp_path / "src" / "a" / "big.bin", os.urandom(2 << 20))
    write(tmp_path / "src" / "b" / "small.txt", b"s")
    with full_disk(tmp_path / "full") as folder:
        job = job_file(tmp_path, tmp_path / "src" / "*", "FileAwareInputStreamDataWriterBuilder",
                       **{"writer.staging.dir": str(folder / "staging")})
        result = run(job, expect=1)
        # b's one byte may also meet the full disk, when its task runs while a's file fills it
        assert "dataset a: FAILED" in result.stdout
        assert (f"copying {tmp_path}/src/a/big.bin to {folder}/staging/" in result.stdout
                and "/a/big.bin: [Errno 28] No space left on device" in result.stdout), result.stdout
    run(job)  # room again: the file is copied
    copied = published(tmp_path)
    assert copied["a/big.bin"] == (tmp_path / "src" / "a" / "big.bin").read_bytes() and copied["b/small.txt"] == b"s"
