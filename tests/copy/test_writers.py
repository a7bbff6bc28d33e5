"""The copy writers on real files: staged through decodings, committed to the task's output folder; archives
unpacked, and archives whose entries would escape refused."""

from __future__ import annotations

import gzip
import io
import os
import tarfile
from pathlib import Path

import pyarrow.fs
import pytest

from gobblin_py.io.contained_paths import PathEscapeError
from gobblin_py.connectors.copy import descriptor
from gobblin_py.connectors.copy.descriptor import FileCopy
from gobblin_py.connectors.copy.tar_writer import TarArchiveInputStreamDataWriterBuilder
from gobblin_py.connectors.copy.writers import FileAwareInputStreamDataWriterBuilder, naming_the_copy, task_folders
from gobblin_py.sdk.errors import CorruptFileError, GobblinPyError, UsageError
from gobblin_py.sdk.states import WorkUnit, WorkUnitState
from tests.copy.files import LOG_ENTRIES, full_disk, log_data_tar_gz, tar_bytes, write


def task_state(tmp_path: Path, **extra: str) -> WorkUnitState:
    return WorkUnitState(WorkUnit(), {"writer.staging.dir": str(tmp_path / "staging"), "task.id": "task_7",
                                      "writer.output.dir": str(tmp_path / "output"), "task.attempt.id": "a1", **extra})


def write_files(builder, state, files: list[FileCopy]):
    writer = builder.build(state, descriptor.SCHEMA, 1, 0, "task_7_0")
    try:
        for batch in descriptor.batches(files):
            writer.write(batch)
        outputs = writer.commit()
    finally:
        writer.cleanup()
    return writer, outputs


def output_root(tmp_path: Path) -> Path:
    return Path(task_folders(task_state(tmp_path))[1])


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_files_are_copied_byte_for_byte_or_through_gzip_to_the_task_output(tmp_path):
    plain = write(tmp_path / "src" / "a.bin", bytes(range(256)) * 1000)
    zipped = write(tmp_path / "src" / "b.txt.gz", gzip.compress(b"hello\n" * 5000))
    state = task_state(tmp_path, **{"gobblin.copy.bufferSize": "1KB", "gobblin.copy.checkFileSize": "true"})
    writer, outputs = write_files(FileAwareInputStreamDataWriterBuilder(), state, [
        FileCopy(str(plain), "d/a.bin", plain.stat().st_size, 0),
        FileCopy(str(zipped), "d/b.txt", zipped.stat().st_size, 0, ("gzip",))])
    assert tree(output_root(tmp_path)) == {"d/a.bin": plain.read_bytes(), "d/b.txt": b"hello\n" * 5000}
    assert writer.records_written == 2 and writer.bytes_written == 256_000 + 30_000
    assert outputs == [str(output_root(tmp_path) / "d/a.bin"), str(output_root(tmp_path) / "d/b.txt")]
    assert not (tmp_path / "staging" / "_attempts" / "a1" / "_copy" / "task_7").exists()


def test_a_file_shorter_than_planned_fails_with_checkFileSize(tmp_path):
    plain = write(tmp_path / "src" / "a.bin", b"12345")
    state = task_state(tmp_path, **{"gobblin.copy.checkFileSize": "true"})
    with pytest.raises(GobblinPyError, match="incomplete copy, 5 bytes written where the file had 9"):
        write_files(FileAwareInputStreamDataWriterBuilder(), state, [FileCopy(str(plain), "a.bin", 9, 0)])
    assert not output_root(tmp_path).exists()


def test_a_corrupt_gzip_file_and_a_vanished_file_fail_naming_them(tmp_path):
    bad = write(tmp_path / "src" / "bad.gz", b"not gzip at all")
    with pytest.raises(CorruptFileError, match="bad.gz: cannot be decoded as gzip"):
        write_files(FileAwareInputStreamDataWriterBuilder(), task_state(tmp_path),
                    [FileCopy(str(bad), "bad", 15, 0, ("gzip",))])
    with pytest.raises(GobblinPyError, match="gone.txt: the file to copy is gone"):
        write_files(FileAwareInputStreamDataWriterBuilder(), task_state(tmp_path),
                    [FileCopy(str(tmp_path / "gone.txt"), "gone.txt", 1, 0)])


def test_two_files_with_one_destination_are_refused(tmp_path):
    one, two = write(tmp_path / "src" / "a.gz", gzip.compress(b"1")), write(tmp_path / "src" / "a", b"2")
    with pytest.raises(GobblinPyError, match="a is already written by another file of this task"):
        write_files(FileAwareInputStreamDataWriterBuilder(), task_state(tmp_path),
                    [FileCopy(str(two), "a", 1, 0), FileCopy(str(one), "a", 20, 0, ("gzip",))])


def test_the_copy_writers_write_one_branch_of_copied_files(tmp_path):
    with pytest.raises(UsageError, match="a copy job has one branch"):
        FileAwareInputStreamDataWriterBuilder().build(task_state(tmp_path), descriptor.SCHEMA, 2, 0, "w")


def test_the_tar_writer_unpacks_under_the_destination_with_the_root_renamed(tmp_path):
    archive = log_data_tar_gz(tmp_path / "src" / "LogData.tar.gz")
    renamed = write(tmp_path / "src" / "x.tar", tar_bytes({"LogData/a.txt": b"a", "top.txt": b"t"},
                                                          folders=["LogData/"]))
    writer, _ = write_files(TarArchiveInputStreamDataWriterBuilder(), task_state(tmp_path), [
        FileCopy(str(archive), "LogData", 1, 0, ("gzip",)), FileCopy(str(renamed), "sub/x", 1, 0)])
    assert tree(output_root(tmp_path)) == {**LOG_ENTRIES, "sub/x/a.txt": b"a", "sub/top.txt": b"t"}
    assert writer.records_written == 2 and writer.bytes_written == sum(map(len, LOG_ENTRIES.values())) + 2


def test_an_archive_whose_first_entry_is_a_file_loses_nothing(tmp_path):
    archive = write(tmp_path / "src" / "flat.tar", tar_bytes({"one.txt": b"1", "d/two.txt": b"2"}))
    write_files(TarArchiveInputStreamDataWriterBuilder(), task_state(tmp_path), [FileCopy(str(archive), "flat", 1, 0)])
    assert tree(output_root(tmp_path)) == {"one.txt": b"1", "d/two.txt": b"2"}


@pytest.mark.parametrize("entry", ["../evil", "LogData/../../evil", "/etc/evil"])
def test_an_entry_escaping_the_destination_is_refused_naming_the_archive_and_the_entry(tmp_path, entry):
    archive = write(tmp_path / "src" / "bad.tar", tar_bytes({"LogData/ok.txt": b"ok", entry: b"x"},
                                                            folders=["LogData/"]))
    with pytest.raises(GobblinPyError) as error:
        write_files(TarArchiveInputStreamDataWriterBuilder(), task_state(tmp_path),
                    [FileCopy(str(archive), "LogData", 1, 0)])
    assert str(archive) in str(error.value) and repr(entry) in str(error.value)
    assert "which would leave its folder" in str(error.value) or "is an absolute path" in str(error.value)
    assert not (tmp_path / "evil").exists() and not output_root(tmp_path).exists()
    assert not (tmp_path / "staging" / "_attempts" / "a1" / "_copy" / "task_7").exists()  # cleaned up


def test_links_and_unreadable_archives_are_refused(tmp_path):
    linked = write(tmp_path / "src" / "l.tar", tar_bytes({"a.txt": b"a"}, links={"l": "/etc/passwd"}))
    with pytest.raises(GobblinPyError, match="entry 'l' is a link or special file"):
        write_files(TarArchiveInputStreamDataWriterBuilder(), task_state(tmp_path), [FileCopy(str(linked), "l", 1, 0)])
    gz = log_data_tar_gz(tmp_path / "src" / "z.tar.gz")
    with pytest.raises(CorruptFileError, match="a .tar.gz needs UnGzipConverter"):
        write_files(TarArchiveInputStreamDataWriterBuilder(), task_state(tmp_path), [FileCopy(str(gz), "z", 1, 0)])
    not_gzip = write(tmp_path / "src" / "n.tar.gz", b"not gzip at all")
    with pytest.raises(CorruptFileError, match=r"n.tar.gz: cannot be decoded as gzip"):
        write_files(TarArchiveInputStreamDataWriterBuilder(), task_state(tmp_path),
                    [FileCopy(str(not_gzip), "n", 1, 0, ("gzip",))])
    truncated = write(tmp_path / "src" / "t.tar", tar_bytes({"big": b"x" * 5000})[:3000])
    with pytest.raises(CorruptFileError, match=r"t.tar: not a readable tar archive \([^)]*\)$"):
        write_files(TarArchiveInputStreamDataWriterBuilder(), task_state(tmp_path),
                    [FileCopy(str(truncated), "t", 1, 0)])  # a plain .tar: no hint about gzip


def test_a_path_two_entries_share_is_refused(tmp_path):
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as archive:
        for data in (b"first", b"second"):
            info = tarfile.TarInfo("same.txt")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    twice = write(tmp_path / "src" / "twice.tar", out.getvalue())
    with pytest.raises(GobblinPyError, match="same.txt is already written by another file"):
        write_files(TarArchiveInputStreamDataWriterBuilder(), task_state(tmp_path), [FileCopy(str(twice), "t", 1, 0)])


def test_an_entry_under_a_file_entry_is_refused_naming_the_archive_and_the_entry(tmp_path):
    archive = write(tmp_path / "src" / "t.tar", tar_bytes({"a": b"file", "a/b": b"under it"}))
    with pytest.raises(GobblinPyError, match=r"t.tar entry 'a/b': a/b needs a folder where this task already wrote"):
        write_files(TarArchiveInputStreamDataWriterBuilder(), task_state(tmp_path), [FileCopy(str(archive), "t", 1, 0)])


@pytest.mark.parametrize("entry", ["LogData/bad\udcff.txt", "LogData/\udcfe/x.txt"])
def test_an_entry_whose_name_is_not_utf8_is_refused_naming_the_archive_and_the_entry(tmp_path, entry):
    archive = write(tmp_path / "src" / "bad.tar", tar_bytes({"LogData/ok.txt": b"ok", entry: b"x"},
                                                            folders=["LogData/"]))
    with pytest.raises(PathEscapeError) as error:
        write_files(TarArchiveInputStreamDataWriterBuilder(), task_state(tmp_path),
                    [FileCopy(str(archive), "LogData", 1, 0)])
    message = str(error.value)
    assert str(archive) in message and repr(entry) in message and "not valid UTF-8" in message
    assert not output_root(tmp_path).exists()


@pytest.mark.parametrize("destination", ["a\x00b", "../up", "/abs"])
def test_a_destination_that_could_leave_the_final_dir_is_refused_naming_the_source(tmp_path, destination):
    plain = write(tmp_path / "src" / "a.txt", b"a")
    with pytest.raises(PathEscapeError) as error:
        write_files(FileAwareInputStreamDataWriterBuilder(), task_state(tmp_path),
                    [FileCopy(str(plain), destination, 1, 0)])
    assert str(plain) in str(error.value) and repr(destination) in str(error.value)
    assert not (tmp_path / "up").exists() and not output_root(tmp_path).exists()


def test_a_full_disk_fails_naming_the_file_copied_and_its_destination(tmp_path):
    big = write(tmp_path / "src" / "big.bin", os.urandom(2 << 20))
    with full_disk(tmp_path / "full") as folder:
        state = task_state(tmp_path, **{"writer.staging.dir": str(folder / "staging")})
        with pytest.raises(GobblinPyError) as error:
            write_files(FileAwareInputStreamDataWriterBuilder(), state, [FileCopy(str(big), "d/big.bin", 2 << 20, 0)])
        message = str(error.value)
        assert str(big) in message and str(folder / "staging") in message and "d/big.bin" in message, message
        assert "No space left on device" in message
        assert list(folder.rglob("*.bin")) == []  # the partial file went with the staging folder


def test_memory_a_copy_cannot_get_fails_naming_the_file_and_its_destination(tmp_path):
    plain = write(tmp_path / "src" / "a.txt", b"a")
    state = task_state(tmp_path, **{"gobblin.copy.bufferSize": "4194304TB"})  # 2^62 bytes: no allocator has them
    with pytest.raises(GobblinPyError, match=rf"copying {plain} to .*/d/a.txt: out of memory"):
        write_files(FileAwareInputStreamDataWriterBuilder(), state, [FileCopy(str(plain), "d/a.txt", 1, 0)])
    with pytest.raises(GobblinPyError, match=rf"copying {plain} to /x/a.txt: out of memory \(malloc of size"):
        with naming_the_copy(str(plain), "/x/a.txt"):  # pyarrow's own allocation failure, ArrowMemoryError
            pyarrow.fs.LocalFileSystem().open_input_stream(str(plain)).read_buffer(1 << 62)


def test_a_full_disk_while_unpacking_fails_naming_the_archive_its_entry_and_the_destination(tmp_path):
    archive = write(tmp_path / "src" / "big.tar", tar_bytes({"big/data.bin": os.urandom(2 << 20)}, folders=["big/"]))
    with full_disk(tmp_path / "full") as folder:
        state = task_state(tmp_path, **{"writer.staging.dir": str(folder / "staging")})
        with pytest.raises(GobblinPyError) as error:
            write_files(TarArchiveInputStreamDataWriterBuilder(), state, [FileCopy(str(archive), "out", 1, 0)])
        message = str(error.value)
        assert f"{archive} entry 'big/data.bin'" in message and "out/data.bin" in message, message
        assert "No space left on device" in message
