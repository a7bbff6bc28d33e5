"""gpy's local filesystem answers every call it defines exactly as fsspec's LocalFileSystem does."""

from __future__ import annotations

import os
import pickle

import pytest
from fsspec.implementations.local import LocalFileSystem as FsspecLocal

from gobblin_py.io import fs as fsutil
from gobblin_py.io.local_fs import LocalFileSystem


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "f.txt").write_bytes(b"hello")
    (tmp_path / "a" / "g.bin").write_bytes(b"\0" * 10)
    (tmp_path / "empty").mkdir()
    os.symlink(tmp_path / "a" / "g.bin", tmp_path / "link")
    os.symlink(tmp_path / "nowhere", tmp_path / "dangling")
    os.mkfifo(tmp_path / "fifo")
    os.symlink(tmp_path / "a", tmp_path / "folder_link")
    return tmp_path


def both(call):
    return call(LocalFileSystem()), call(FsspecLocal())


@pytest.mark.parametrize("call", [
    lambda fs, t: fs.info(str(t / "a" / "b" / "f.txt")),
    lambda fs, t: fs.info(f"file://{t}/a/"),
    lambda fs, t: fs.info(str(t / "link")),
    lambda fs, t: fs.info(str(t / "fifo")),
    lambda fs, t: sorted(fs.ls(str(t), detail=False)),
    lambda fs, t: sorted(fs.ls(str(t), detail=True), key=lambda i: i["name"]),
    lambda fs, t: fs.ls(str(t / "a" / "g.bin")),
    lambda fs, t: fs.find(str(t)),
    lambda fs, t: fs.find(str(t), detail=True, withdirs=False),
    lambda fs, t: fs.find(str(t), withdirs=True),
    lambda fs, t: fs.find(str(t), maxdepth=1),
    lambda fs, t: fs.find(str(t / "a" / "g.bin"), detail=True),
    lambda fs, t: fs.find(str(t / "missing")),
    lambda fs, t: [fs.find(str(t / n)) for n in ("a/g.bin", "link", "dangling", "fifo", "folder_link", "empty")],
    lambda fs, t: [fs.find(str(t / n), detail=True) for n in ("link", "dangling", "folder_link", "a")],
    lambda fs, t: fs.find(str(t), maxdepth=2, detail=True),
    lambda fs, t: [fs.exists(str(t / n)) for n in ("a", "a/g.bin", "link", "dangling", "missing")],
    lambda fs, t: [fs.isdir(str(t / n)) for n in ("a", "a/g.bin", "missing")],
    lambda fs, t: [fs.isfile(str(t / n)) for n in ("a", "a/g.bin", "link", "missing")],
    lambda fs, t: (fs.size(str(t / "a" / "g.bin")), fs.modified(str(t / "a" / "g.bin"))),
    lambda fs, t: fs.cat_file(str(t / "a" / "b" / "f.txt")),
    lambda fs, t: fs.cat_file(str(t / "a" / "b" / "f.txt"), start=1, end=3),
    lambda fs, t: [fs._strip_protocol(p) for p in ("file:///x/y/", "local:///x", "/", "file:/x", "rel/p", "./q", ".")],
    lambda fs, t: [fs.unstrip_protocol(p) for p in ("/x/y", "file:///x/")],
    lambda fs, t: fs._parent("/x/y/z"),
], ids=lambda c: "")
def test_reads_match_fsspec(tree, call):
    ours, theirs = both(lambda fs: call(fs, tree))
    assert ours == theirs


@pytest.mark.parametrize("call", [
    lambda fs, t: fs.info(str(t / "missing")),
    lambda fs, t: fs.ls(str(t / "missing")),
    lambda fs, t: fs.rm(str(t / "a")),
    lambda fs, t: fs.rm(str(t / "missing")),
    lambda fs, t: fs.makedirs(str(t / "a")),
    lambda fs, t: fs.cp_file(str(t / "missing"), str(t / "x")),
    lambda fs, t: fs.open(str(t / "missing"), "rb"),
], ids=lambda c: "")
def test_errors_match_fsspec(tree, call):
    errors = []
    for fs in (LocalFileSystem(), FsspecLocal()):
        with pytest.raises(Exception) as info:
            call(fs, tree)
        errors.append(type(info.value))
    assert errors[0] is errors[1]


def test_changes_match_fsspec(tmp_path):
    results = []
    for name, fs in (("ours", LocalFileSystem()), ("fsspec", FsspecLocal())):
        root = tmp_path / name
        fs.makedirs(str(root / "d" / "e"), exist_ok=True)
        fs.pipe_file(str(root / "d" / "x"), b"1234")
        with fs.open(str(root / "d" / "x"), "ab") as out:
            out.write(b"5")
        fs.cp_file(str(root / "d" / "x"), str(root / "copy"))
        fs.mv(str(root / "copy"), str(root / "d" / "e" / "moved"))
        fs.get_file(str(root / "d" / "x"), str(root / "got"))
        fs.put_file(str(root / "got"), str(root / "put"))
        fs.rm(str(root / "got"))
        fs.rm(str(root / "d" / "e"), recursive=True)
        results.append({os.path.relpath(p, root): open(p, "rb").read() for p in fs.find(str(root))})
    assert results[0] == results[1] == {"d/x": b"12345", "put": b"12345"}


def test_local_urls_open_without_fsspec_and_other_calls_reach_it(tmp_path):
    fs, path = fsutil.open_fs(f"file://{tmp_path}/")
    assert isinstance(fs, LocalFileSystem) and path == str(tmp_path) and fsutil.is_local(fs)
    assert fsutil.open_fs(str(tmp_path / "x"))[1] == str(tmp_path / "x")
    assert pickle.loads(pickle.dumps(fs)) == fs  # travels to Spark executors
    (tmp_path / "t.txt").write_text("text")
    with fs.open(str(tmp_path / "t.txt"), "r") as text:  # text mode: fsspec's own
        assert text.read() == "text"
    assert fs.glob(str(tmp_path / "*.txt")) == [str(tmp_path / "t.txt")]  # not defined here: fsspec's


def test_find_names_files_without_a_stat_each(tmp_path, monkeypatch):
    # publishing lists every task's output folder, planning the data folder: a stat per file adds up
    for k in range(5):
        (tmp_path / f"d{k}").mkdir()
        (tmp_path / f"d{k}" / "part.csv").write_text("x")
    stats = []
    real = LocalFileSystem.info
    monkeypatch.setattr(LocalFileSystem, "info", lambda self, path, **kw: stats.append(path) or real(self, path, **kw))
    names = LocalFileSystem().find(str(tmp_path))
    assert names == [f"{tmp_path}/d{k}/part.csv" for k in range(5)]
    assert stats == []
    assert len(LocalFileSystem().find(str(tmp_path), detail=True)) == 5
    assert len(stats) == 10 + 1  # each entry once (the details asked for), the folder named once; not its sub-folders


def test_a_tree_of_empty_folders_goes_by_one_rmdir_each(tmp_path, monkeypatch):
    # a run's task output: thousands of attempt folders, empty once their files are published
    import shutil

    root = tmp_path / "output"
    for k in range(20):
        (root / "_attempts" / f"task_{k}").mkdir(parents=True)
    (root / "_attempts" / "task_3" / "left.parquet").write_bytes(b"x")
    (root / "_attempts" / "task_4" / "deeper" / "more").mkdir(parents=True)
    walks = []
    real = shutil.rmtree
    monkeypatch.setattr(shutil, "rmtree", lambda path, *a, **k: walks.append(os.path.basename(path)) or real(path, *a, **k))
    fsutil.remove_tree(LocalFileSystem(), str(root))
    assert not root.exists()
    assert sorted(walks) == ["task_3", "task_4"]
