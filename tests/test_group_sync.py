"""Group sync: inside a commit batch, nothing that must wait for durability happens before the flush has synced
what came before it, and a failure stops only its own commit."""

from __future__ import annotations

import os

import pytest

from gobblin_py.io import fs as fsutil
from gobblin_py.io import group_sync
from gobblin_py.io.group_sync import GroupSync
from gobblin_py.io.rename_step import FsRenameStep
from gobblin_py.sdk.run_states import DatasetState
from gobblin_py.store import FsDatasetStateStore
from tests.support.environment import needs


@pytest.fixture
def journal(monkeypatch):
    """Every sync (the paths it covers), rename and unlink, in order."""
    events: list[tuple[str, object]] = []
    real_sync, real_replace, real_unlink = group_sync.sync_paths, os.replace, os.unlink

    def sync(paths):
        events.append(("sync", sorted(set(paths))))
        real_sync(paths)

    def replace(src, dst, **kw):
        events.append(("replace", str(dst)))
        real_replace(src, dst, **kw)

    def unlink(path, **kw):
        events.append(("unlink", str(path)))
        real_unlink(path, **kw)

    monkeypatch.setattr(group_sync, "sync_paths", sync)
    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(os, "unlink", unlink)
    return events


def test_a_state_write_in_a_group_is_renamed_into_place_only_after_its_temporary_file_is_synced(tmp_path, journal):
    target, alias = str(tmp_path / "run.jst"), str(tmp_path / "current.jst")
    group = GroupSync()
    with group.active():
        fsutil.atomic_write_copies(fsutil.open_fs(str(tmp_path))[0], [target, alias], b"new state", grouped=True)
    assert not os.path.exists(target) and not os.path.exists(alias)  # nothing visible before the flush
    staged = [name for name in os.listdir(tmp_path) if name.startswith(fsutil.TEMP_PREFIX)]
    assert len(staged) == 2 and journal == []  # written, not yet synced, not renamed
    assert group.flush() == []
    kinds = [kind for kind, _ in journal]
    assert kinds == ["sync", "replace", "replace", "sync"]
    assert any(p.startswith(str(tmp_path / fsutil.TEMP_PREFIX)) for p in journal[0][1])  # the temporary file
    assert journal[-1][1] == [str(tmp_path)]  # then the folder the renames changed
    assert open(target, "rb").read() == open(alias, "rb").read() == b"new state"
    assert not [name for name in os.listdir(tmp_path) if name.startswith(fsutil.TEMP_PREFIX)]


def test_inside_a_group_a_write_that_does_not_join_it_is_in_place_at_once(tmp_path, journal):
    group = GroupSync()
    with group.active():  # a file other writes of the batch read back (a name map, say) must not wait
        fsutil.atomic_write(fsutil.open_fs(str(tmp_path))[0], str(tmp_path / "map"), b"a")
        assert (tmp_path / "map").read_bytes() == b"a"
    assert group.flush() == [] and [k for k, _ in journal] == ["replace"]


def test_several_new_datasets_in_one_batch_all_reach_the_guid_name_map(tmp_path):
    store = FsDatasetStateStore.from_properties({
        "state.store.dir": str(tmp_path),
        "state.store.datasetUrnStateStoreNameParser": "GuidDatasetUrnStateStoreNameParser"})
    group = GroupSync()
    urns = [f"db:t{i}" for i in range(5)]
    with group.active():
        for urn in urns:
            with group.owned_by(urn):
                store.persist_dataset_state(DatasetState("Pull", "job_Pull_1", dataset_urn=urn), urn, sync_folder=False)
    assert group.flush() == []
    assert sorted(store.name_parser.read_map(store.fs, str(tmp_path / "Pull")).values()) == [u.replace(":", ".") for u in urns]
    assert [store.get_latest_dataset_state("Pull", urn).job_id for urn in urns] == ["job_Pull_1"] * 5


def test_outside_a_group_every_write_is_durable_before_the_call_returns(tmp_path, journal, monkeypatch):
    synced = []
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd))
    fsutil.atomic_write(fsutil.open_fs(str(tmp_path))[0], str(tmp_path / "f"), b"x")
    assert open(tmp_path / "f", "rb").read() == b"x"
    assert len(synced) == 2 and [k for k, _ in journal] == ["replace"]  # the file, then its folder; no group


def test_a_published_file_keeps_its_source_until_its_new_link_is_synced(tmp_path, journal):
    src, dst = tmp_path / "output" / "part.parquet", tmp_path / "published" / "part.parquet"
    src.parent.mkdir()
    src.write_bytes(b"data")
    group = GroupSync()
    with group.active():
        FsRenameStep(str(src), str(dst)).execute(fresh=True)
    assert src.exists() and dst.exists() and os.path.samefile(src, dst)  # a finished move: both names
    assert journal == []
    assert group.flush() == []
    assert journal == [("sync", [str(dst.parent)]), ("unlink", str(src)), ("sync", [str(src.parent)])]
    assert not src.exists() and dst.read_bytes() == b"data"


def test_a_failed_action_stops_only_its_owners_later_actions():
    group, done = GroupSync(), []

    def fail():
        raise OSError(5, "Input/output error")

    with group.active():
        for owner in ("a", "b", "c"):
            with group.owned_by(owner):
                group.then(fail if owner == "b" else (lambda o=owner: done.append(f"{o}1")), "/")
                group.then(lambda o=owner: done.append(f"{o}2"), "/")
        with group.owned_by("d"):
            group.then(lambda: done.append("d1"), "/")
        group.discard("d")  # d's commit failed before the flush: its actions never run
    failures = group.flush()
    assert [(owner, str(exc)) for owner, exc in failures] == [("b", "[Errno 5] Input/output error")]
    assert done == ["a1", "a2", "c1", "c2"]


def test_a_sync_that_fails_fails_every_commit_with_queued_work(monkeypatch):
    group = GroupSync()
    with group.active():
        with group.owned_by("a"):
            group.note("/somewhere")
            group.then(lambda: None, "/")
        with group.owned_by("b"):
            group.then(lambda: None, "/")

    def broken(paths):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(group_sync, "sync_paths", broken)
    assert sorted(owner for owner, _ in group.flush()) == ["a", "b"]


@pytest.mark.parametrize("dirty,expected", [(0, "syncfs"), (group_sync.MAX_DIRTY_BYTES + 1, "fsync")])
def test_one_syncfs_per_filesystem_unless_much_is_waiting_to_be_written(tmp_path, monkeypatch, dirty, expected):
    calls = []
    monkeypatch.setattr(group_sync, "_dirty_bytes", lambda: dirty)
    monkeypatch.setattr(group_sync, "_syncfs", lambda fd: calls.append("syncfs") or 0)
    monkeypatch.setattr(os, "fsync", lambda fd: calls.append("fsync"))
    paths = []
    for name in ("a", "b", "c"):
        (tmp_path / name).write_bytes(b"x")
        paths.append(str(tmp_path / name))
    group_sync.sync_paths([*paths, str(tmp_path), str(tmp_path / "gone")])
    assert calls == (["syncfs"] if expected == "syncfs" else ["fsync"] * 4)


def test_a_failing_syncfs_is_an_error_naming_the_path(tmp_path, monkeypatch):
    monkeypatch.setattr(group_sync, "_dirty_bytes", lambda: 0)
    monkeypatch.setattr(group_sync, "_syncfs", lambda fd: -1)
    monkeypatch.setattr(group_sync.ctypes, "get_errno", lambda: 5)
    with pytest.raises(OSError) as caught:
        group_sync.sync_paths([str(tmp_path)])
    assert caught.value.errno == 5 and caught.value.filename == str(tmp_path)


@needs(group_sync._syncfs is not None, "the syncfs system call (Linux's)")
def test_the_real_syncfs_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(group_sync, "_dirty_bytes", lambda: 0)
    (tmp_path / "f").write_bytes(b"x")
    group_sync.sync_paths([str(tmp_path / "f")])  # no error from the kernel
